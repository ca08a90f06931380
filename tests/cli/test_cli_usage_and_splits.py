"""The command line, in process through
``cli.main``: usage errors are one line with exit 2, options before the
command work, output says what happened once and plainly, a disabled config is
said first, and a boundary that splits a tool call from its result is flagged
(and refused by ``compact --in-place``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kimi_compact_tui.compaction.pairs import find_splits
from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.model import Message
from tests.factories import conversation, tool_call, tool_result, tool_session, write_session

#: Every kind docs/cli.md and docs/configuration.md list (test_providers_registry
#: checks those against the registry).
README_KINDS = (
    "openai",
    "moonshot",
    "moonshot-cn",
    "anthropic",
    "ollama",
    "offline",
    "kimi",
    "vllm",
)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return write_session(tmp_path, "openai-json", conversation(8))


@pytest.fixture
def tools(tmp_path: Path, session_format: str) -> Path:
    """The tool session in every format: message 3 calls c1, message 4 is its result."""
    return write_session(tmp_path, session_format, tool_session())


def assert_usage_error(result, *needles: str) -> None:
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    assert "usage:" not in result.stderr and "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


# ------------------------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["plan", "{s}", "--up-to", "abc"], ["--up-to", "'abc'"]),
        (["plan", "{s}", "--up-to", "0"], ["--up-to", "0"]),
        (["plan", "{s}", "--up-to", "-3"], ["--up-to", "-3"]),
        (["plna", "{s}"], ["unknown command 'plna'", "did you mean 'plan'"]),
        (["previwe"], ["unknown command 'previwe'", "'preview'"]),
        (["plan", "{s}", "--bogus"], ["--bogus"]),
        (["plan"], ["SESSION"]),
        (["diff", "{s}", "{s}", "--context", "x"], ["--context"]),
        (["serve", "--port", "http"], ["--port"]),
    ],
)
def test_usage_errors_are_one_line_exit_2(cli_main, session, argv, needles):
    result = cli_main(*[a.replace("{s}", str(session)) for a in argv])
    assert_usage_error(result, *needles)
    assert result.stdout == ""


def test_options_before_the_command_are_the_command_options(cli_main, session, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(
        "compaction:\n  enabled: true\n  type: kimi\n  max_preserved_messages: 4\n",
        encoding="utf-8",
    )
    before = cli_main("--config", config, "plan", session, "--json")
    after = cli_main("plan", session, "--json", "--config", config)
    assert before.code == 0, before.stderr
    assert before.stdout == after.stdout
    data = json.loads(before.stdout)
    assert data["max_preserved_messages"] == 4 and len(data["preserved_indices"]) == 4


def test_an_option_value_named_like_a_command_is_a_value(cli_main, session):
    result = cli_main("--model", "plan", "preview", session, "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["body"]["model"] == "plan"


@pytest.mark.parametrize("command", ["preview", "compact"])
def test_unknown_provider_names_the_option_and_every_kind(cli_main, session, command):
    result = cli_main(command, session, "--provider", "nosuch")
    assert_usage_error(result, "--provider", "'nosuch'")
    listed = result.stderr.split("'nosuch'", 1)[1]
    for kind in README_KINDS:
        assert f" {kind}," in listed or f" {kind})" in listed or f" {kind}\n" in listed, kind


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_remote_provider_without_a_model_is_a_config_error(cli_main, session, loopback, extra):
    out = session.with_name("out.json")
    result = cli_main(
        "compact", session, "--provider", "openai", "--base-url", loopback.base_url,
        "--output", out, *extra,
    )  # fmt: skip
    assert_usage_error(result, "model", "--model")
    assert loopback.requests == [] and not out.exists()


# ------------------------------------------------------------------ what happened, once and plainly


@pytest.mark.parametrize("provider", ["offline", "openai"])
def test_preview_never_prints_model_none(cli_main, session, provider):
    result = cli_main("preview", session, "--provider", provider)
    assert result.code == 0, result.stderr
    model_line = next(x for x in result.stdout.split("\n") if x.startswith("model"))
    assert "None" not in model_line
    assert ("offline" in model_line) == (provider == "offline")
    if provider == "openai":
        assert "--model" in model_line  # says how to set one


def test_compact_says_no_model_wrote_the_summary_once(cli_main, session):
    out = session.with_name("out.json")
    result = cli_main("compact", session, "--output", out)
    assert result.code == 0, result.stderr
    assert result.stderr.lower().count("no model wrote this summary") == 1, result.stderr
    assert out.exists()


@pytest.mark.parametrize("existing", [False, True])
def test_noop_compact_output_says_nothing_was_written(cli_main, tmp_path, existing):
    short = write_session(tmp_path, "openai-json", conversation(1, system=None), "short")
    out = tmp_path / "out.json"
    if existing:  # an existing --output needs --force; a no-op keeps it
        out.write_text("keep me", encoding="utf-8")
    result = cli_main("compact", short, "--output", out, *(["--force"] if existing else []))
    assert result.code == 0, result.stderr
    assert "nothing written" in result.stderr and str(out) in result.stderr
    assert ("left unchanged" if existing else "not created") in result.stderr
    assert out.read_text(encoding="utf-8") == "keep me" if existing else not out.exists()


# ------------------------------------------------------------------------- a disabled config, first


@pytest.fixture
def disabled(tmp_path: Path) -> Path:
    path = tmp_path / "disabled.yaml"
    path.write_text("compaction:\n  enabled: false\n  type: kimi\n", encoding="utf-8")
    return path


def test_preview_says_first_that_compaction_is_not_enabled(cli_main, session, disabled):
    result = cli_main("preview", session, "--config", disabled)
    assert result.code == 0, result.stderr
    first = result.stdout.split("\n", 1)[0]
    assert "not enabled" in first and "compaction.enabled" in first
    assert "would not be sent" in first
    assert "## Message 1" in result.stdout  # the request is still shown, labelled


def test_preview_json_of_a_disabled_config_warns_on_stderr(cli_main, session, disabled):
    result = cli_main("preview", session, "--config", disabled, "--json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["body"]["messages"][0]["role"] == "system" and data["enabled"] is False
    assert "not enabled" in result.stderr and result.stderr.count("\n") == 1


def test_preview_of_an_enabled_config_does_not_say_disabled(cli_main, session):
    result = cli_main("preview", session)
    assert "not enabled" not in result.stdout + result.stderr


def test_compact_still_refuses_a_disabled_config(cli_main, session, disabled):
    out = session.with_name("out.json")
    result = cli_main("compact", session, "--config", disabled, "--output", out)
    assert_usage_error(result, "not enabled")
    assert not out.exists()


# --------------------------------------------------------------------------------- split tool calls


def test_plan_json_lists_the_tool_splits(cli_main, tools):
    data = json.loads(cli_main("plan", tools, "--json", "--up-to", "3").stdout)
    assert [s["tool_call_id"] for s in data["tool_splits"]] == ["c1"]
    split = data["tool_splits"][0]
    # message numbers as the screen shows them (1-based), never 0-based indices
    assert split["call_message"] == 3 and split["result_messages"] == [4]
    assert split["last_compacted_message"] == 3 and "call_index" not in split
    assert "message 3" in split["description"] and "message 4" in split["description"]
    assert data["nearest_safe_up_to"] == 4
    clean = json.loads(cli_main("plan", tools, "--json").stdout)
    assert clean["tool_splits"] == [] and clean["nearest_safe_up_to"] is None


@pytest.mark.parametrize("command", ["plan", "preview"])
def test_plan_and_preview_flag_a_split(cli_main, tools, command):
    result = cli_main(command, tools, "--up-to", "3")
    assert result.code == 0, result.stderr
    split_lines = [x for x in result.stdout.split("\n") if x.startswith("SPLIT")]
    assert len(split_lines) == 1 and "tool call c1" in split_lines[0]
    assert "--up-to 4" in result.stdout
    assert "SPLIT" not in cli_main(command, tools, "--up-to", "4").stdout


def test_compact_in_place_refuses_a_split_before_any_request(cli_main, tools, loopback, tmp_path):
    config = tmp_path / "remote.yaml"
    config.write_text(
        f"provider:\n  kind: openai\n  base_url: {loopback.base_url}\n  model: m\n",
        encoding="utf-8",
    )
    files = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = cli_main("compact", tools, "--up-to", "3", "--in-place", "--yes", "--config", config)
    assert_usage_error(result, "message 3", "message 4", "--up-to 4", "--allow-split")
    assert loopback.requests == []
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == files


def test_compact_in_place_allow_split_writes(cli_main, tools):
    before = tools.read_bytes() if tools.is_file() else (tools / "context.jsonl").read_bytes()
    result = cli_main("compact", tools, "--up-to", "3", "--in-place", "--yes", "--allow-split")
    assert result.code == 0, result.stderr
    live = tools if tools.is_file() else tools / "context.jsonl"
    assert live.read_bytes() != before


def test_compact_output_of_a_split_warns(cli_main, tools, tmp_path):
    out = tmp_path / "out.jsonl"
    result = cli_main("compact", tools, "--up-to", "3", "--output", out)
    assert result.code == 0, result.stderr
    assert "warning" in result.stderr and "tool call c1" in result.stderr
    assert out.exists()


# Generated sessions with tool exchanges, as agents write them: each call is
# answered right after it (one or more results), some calls get no result.
@st.composite
def tool_sessions(draw) -> list[dict]:
    out: list[dict] = []
    if draw(st.booleans()):
        out.append({"role": "system", "content": "sys"})
    counter = 0
    for _ in range(draw(st.integers(1, 8))):
        step = draw(st.sampled_from(["user", "assistant", "tools", "tools", "unanswered"]))
        if step in ("user", "assistant"):
            out.append({"role": step, "content": step})
            continue
        ids = [f"call{counter + k}" for k in range(draw(st.integers(1, 3)))]
        counter += len(ids)
        call = tool_call(ids[0])
        call["tool_calls"] = [dict(call["tool_calls"][0], id=i) for i in ids]
        out.append(call)
        if step == "tools":
            out += [tool_result(i) for i in ids]
            if draw(st.booleans()):
                out.append({"role": "assistant", "content": "done"})
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_sessions(), st.integers(1, 5))
def test_the_default_preserved_tail_never_splits(datas, keep):
    messages = [Message(d) for d in datas]
    plan = make_plan(messages, max_preserved_messages=keep)
    assert find_splits(messages, plan) == []


def test_no_option_is_a_flag_in_one_command_and_takes_a_value_in_another():
    """Options before the command are told apart from the command by whether
    they take a value: that must not depend on the command."""
    from kimi_compact_tui.cli import _subparsers, build_parser

    takes: dict[str, set[bool]] = {}
    for sub in _subparsers(build_parser()).values():
        for action in sub._actions:
            for option in action.option_strings:
                takes.setdefault(option, set()).add(action.nargs != 0)
    assert {o for o, kinds in takes.items() if len(kinds) > 1} == set()

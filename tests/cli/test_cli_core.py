"""`plan` and `preview` in process (``cli_main``), with a few smoke tests through the
real console entry point (a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import procs
from tests.core_helpers import REPO, SAMPLES, kimi_cli_compact_md_file
from tests.factories import write_openai_json

KIMI_SAMPLE = SAMPLES / "kimi-debugging-session"
OPENAI_SAMPLE = SAMPLES / "openai-retry-refactor.json"


def smoke(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The real ``python -m kimi_compact_tui`` (a subprocess): for smoke tests only."""
    full_env = dict(os.environ)
    full_env.pop("KIMI_CLI_COMPACT_MD", None)
    full_env.pop("KIMI_COMPACT_TUI_CONFIG", None)
    full_env["XDG_CONFIG_HOME"] = str(REPO / "tests" / "no-such-config-dir")
    full_env.update(env or {})
    return procs.run(
        [sys.executable, "-m", "kimi_compact_tui", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=60,
    )


def test_plan_json_has_the_regions_and_figures():
    result = smoke("plan", str(OPENAI_SAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    for key in (
        "format",
        "messages",
        "mode",
        "noop",
        "leading_system_indices",
        "request_indices",
        "compact_indices",
        "preserved_indices",
        "prompt",
        "tokens",
    ):
        assert key in plan
    assert plan["format"] == "openai-json" and plan["mode"] == "tail" and plan["noop"] is None
    assert plan["leading_system_indices"] == [0, 1]
    assert plan["request_indices"][:2] == [0, 1]
    n = plan["messages"]
    covered = plan["leading_system_indices"] + plan["compact_indices"] + plan["preserved_indices"]
    assert sorted(covered) == list(range(n))
    assert plan["prompt"]["source"] == "bundled" and plan["prompt"]["upstream_exact"] is False
    assert plan["tokens"]["estimated_after"] < plan["tokens"]["estimated_before"]


def test_plan_up_to_is_one_based_and_explicit(cli_main):
    result = cli_main("plan", str(KIMI_SAMPLE), "--json", "--up-to", "5")
    plan = json.loads(result.stdout)
    assert plan["mode"] == "explicit"
    assert plan["compact_indices"] == [0, 1, 2, 3, 4]
    assert plan["preserved_indices"][0] == 5
    assert plan["tokens"]["recorded"] > 0


def test_plan_reports_exact_kimi_cli_prompt_when_found(cli_main, monkeypatch):
    compact_md = kimi_cli_compact_md_file()
    monkeypatch.setenv("KIMI_CLI_COMPACT_MD", str(compact_md))
    result = cli_main("plan", str(KIMI_SAMPLE), "--json")
    prompt = json.loads(result.stdout)["prompt"]
    assert prompt == {
        "source": "kimi-cli",
        "path": str(compact_md),
        "sha256": "24753a19a3c0dfabc5545a103666a559cc7dd8caa963715fdc6ca7dd787a0e0a",
        "upstream_exact": True,
    }


def test_preview_json_is_the_exact_body_without_tools_or_key():
    secret = "sk-test-SECRET-should-never-appear-123"
    result = smoke(
        "preview",
        str(KIMI_SAMPLE),
        "--json",
        "--instructions",
        "Focus on the importer",
        env={"OPENAI_API_KEY": secret, "MOONSHOT_API_KEY": secret},
    )
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)["body"]
    assert body["stream"] is True
    assert "tools" not in body and "tool_choice" not in body
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    parts = [p["text"] for p in body["messages"][1]["content"]]
    assert parts[0] == "## Message 1\nRole: user\nContent:\n"
    assert parts[-1].endswith("Focus on the importer")
    assert secret not in result.stdout + result.stderr


def test_preview_readable_view_shows_transcript_and_prompt_provenance(cli_main):
    result = cli_main("preview", str(OPENAI_SAMPLE))
    assert result.code == 0, result.stderr
    assert "## Message 1\nRole: system\nContent:\n" in result.stdout
    assert "prompt   bundled" in result.stdout


def test_preview_noop_says_why(tmp_path: Path, cli_main):
    path = write_openai_json(tmp_path / "short.json", [{"role": "user", "content": "hi"}])
    result = cli_main("preview", str(path))
    assert result.code == 0
    assert "NO-OP" in result.stdout and "only 1 user/assistant message" in result.stdout


@pytest.mark.parametrize(
    "setup, args, expected",
    [
        (None, ["plan", "{tmp}/missing.jsonl"], "missing.jsonl: no such file"),
        (None, ["plan", "{tmp}"], "folder holds no session"),
        (
            ("bad.jsonl", '{"role":"user","content":"a"}\n{oops}\n'),
            ["plan", "{file}"],
            "bad.jsonl:2: invalid JSON",
        ),
        (
            ("types.json", '[{"role":"user","content":7}]'),
            ["preview", "{file}"],
            "types.json: [0]: field 'content'",
        ),
        (("x.bin", "\x01\x02garbage"), ["plan", "{file}"], "unknown session format"),
        (None, ["plan", "SAMPLE", "--up-to", "999"], "--up-to 999 is out of range"),
        (None, ["plan", "SAMPLE", "--up-to", "0"], "--up-to: messages are numbered from 1"),
        (
            ("c.yaml", "compaction: [\n"),
            ["plan", "SAMPLE", "--config", "{file}"],
            "c.yaml:2: invalid YAML",
        ),
        (
            ("c.yaml", "compaction:\n  max_preserved_messages: two\n"),
            ["plan", "SAMPLE", "--config", "{file}"],
            "compaction.max_preserved_messages",
        ),
        (
            ("c.yaml", "compaction:\n  enabeld: true\n"),
            ["plan", "SAMPLE", "--config", "{file}"],
            "compaction.enabeld: unknown setting",
        ),
        (
            ("c.yaml", "- a\n- b\n"),
            ["plan", "SAMPLE", "--config", "{file}"],
            "config must be a mapping",
        ),
        (None, ["plan", "SAMPLE", "--config", "{tmp}/nope.yaml"], "config file not found"),
        (None, ["plan", "SAMPLE", "--prompt-file", "{tmp}/nope.md"], "prompt file not found"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, cli_main, setup, args, expected):
    file_path = None
    if setup:
        file_path = tmp_path / setup[0]
        file_path.write_text(setup[1], encoding="utf-8")
    before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    argv = [
        a.replace("{tmp}", str(tmp_path))
        .replace("{file}", str(file_path))
        .replace("SAMPLE", str(OPENAI_SAMPLE))
        for a in args
    ]
    result = cli_main(*argv)
    assert result.code == 2, (result.stdout, result.stderr)
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_disabled_config_is_reported_by_plan(tmp_path: Path, cli_main):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("compaction:\n  enabled: false\n  type: kimi\n", encoding="utf-8")
    result = cli_main("plan", str(OPENAI_SAMPLE), "--json", "--config", str(cfg))
    plan = json.loads(result.stdout)
    assert plan["enabled"] is False and "disabled" in plan["disabled_reason"]


def test_model_precedence_on_the_wire(tmp_path: Path, cli_main):
    """--model > top-level compaction_model > compaction.compaction_model > provider model."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "compaction: {enabled: true, type: kimi, compaction_model: block-model}\n"
        "provider: {kind: openai, model: provider-model, base_url: 'http://127.0.0.1:9/v1'}\n",
        encoding="utf-8",
    )

    def model(*extra: str) -> str:
        result = cli_main("preview", str(OPENAI_SAMPLE), "--json", "--config", str(cfg), *extra)
        assert result.code == 0, result.stderr
        return json.loads(result.stdout)["body"]["model"]

    assert model() == "block-model"
    assert model("--model", "flag-model") == "flag-model"
    cfg.write_text(
        "compaction: {enabled: true, type: kimi}\n"
        "provider: {kind: openai, model: provider-model, base_url: 'http://127.0.0.1:9/v1'}\n",
        encoding="utf-8",
    )
    assert model() == "provider-model"

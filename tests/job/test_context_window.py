"""The context-window check: a compaction request that cannot fit the model's
window is refused before it is sent, naming both figures and the ``--up-to``
that fits; an unknown window is said, not guessed.

Requests go to a real HTTP server on 127.0.0.1 that records them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.config import AppConfig, load_config
from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.job import CompactionJob, RefusalKind
from kimi_compact_tui.job.window import OUTPUT_ROOM, table_window
from kimi_compact_tui.providers import ProviderConfig
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories import write_openai_json
from tests.loopback_server import LoopbackServer, openai_sse

WINDOW = 9000


def long_session(path: Path, turns: int = 30) -> Path:
    """``turns`` user/assistant pairs of a few hundred tokens each, no tool calls."""
    messages = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(turns):
        words = " ".join(f"step{i}word{j}" for j in range(120))
        messages.append({"role": "user", "content": f"Request {i}: {words}"})
        messages.append({"role": "assistant", "content": f"Answer {i}: {words}"})
    return write_openai_json(path, messages)


def config(tmp_path: Path, server: LoopbackServer, model: str = "m", window: int | None = None):
    path = tmp_path / "config.yaml"
    extra = f"context_window: {window}\n" if window is not None else ""
    path.write_text(
        "compaction: {enabled: true, type: kimi}\n"
        f"provider: {{kind: openai, base_url: '{server.base_url}', model: {model}, "
        "api_key_env: ''}\n" + extra,
        encoding="utf-8",
    )
    return path


def remote(server: LoopbackServer, model: str) -> ProviderConfig:
    return ProviderConfig(kind="openai", base_url=server.base_url, model=model, api_key_env="")


def test_a_request_too_large_is_refused_before_it_is_sent(
    cli_main, tmp_path, loopback  # noqa: F811
):
    session = long_session(tmp_path / "chat.json")
    before = session.read_bytes()
    loopback.script([openai_sse(["never sent"])])
    cfg = config(tmp_path, loopback, window=WINDOW)
    result = cli_main("compact", session, "--config", cfg, "--in-place", "--yes")
    assert result.code == 2 and result.stderr.count("\n") == 1, result.stderr
    err = result.stderr
    job = CompactionJob.load(session, load_config(cfg))
    prep = job.prepare()
    need = prep.request_estimated()
    assert f"~{need:,} tokens" in err and f"{WINDOW:,}" in err and f"{OUTPUT_ROOM:,}" in err
    assert "context_window in the config" in err and "nothing was sent" in err
    assert loopback.requests == [] and session.read_bytes() == before
    # The --up-to it names fits, and one more message would not.
    up_to = int(err.split("--up-to ")[1].split()[0])
    assert job.prepare(up_to=up_to).request_estimated() + OUTPUT_ROOM <= WINDOW
    assert job.prepare(up_to=up_to + 1).request_estimated() + OUTPUT_ROOM > WINDOW
    # ... and compacting up to it goes through: the first of two steps.
    loopback.script([openai_sse(["<current_focus>\nstep one\n</current_focus>\n"])])
    done = cli_main("compact", session, "--config", cfg, "--up-to", str(up_to))
    assert done.code == 0, done.stderr
    assert len(loopback.requests) == 1


def test_the_window_of_a_known_model_comes_from_the_table(tmp_path, loopback):
    session = long_session(tmp_path / "chat.json", turns=60)
    job = CompactionJob.load(
        session, AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})
    )
    prep = job.prepare(compaction_model="moonshot-v1-8k")
    ready = job.readiness(prep, remote(loopback, "moonshot-v1-8k"))
    assert ready.kinds() == [RefusalKind.TOO_LARGE]
    message = ready.refusals[0].message
    assert "8,192" in message and "moonshot-v1-8k, from the table of common models" in message
    assert job.readiness(job.prepare(), remote(loopback, "kimi-k2-0905-preview")).ready


def test_an_unknown_window_is_said_and_not_checked(cli_main, tmp_path, loopback):  # noqa: F811
    session = long_session(tmp_path / "chat.json", turns=60)
    cfg = config(tmp_path, loopback, model="house-model-7")
    shown = cli_main("preview", session, "--config", cfg)
    assert shown.code == 0, shown.stderr
    assert "window   unknown (model house-model-7; set context_window" in shown.stdout
    loopback.script([openai_sse(["<current_focus>\nx\n</current_focus>\n"])])
    done = cli_main("compact", session, "--config", cfg)
    assert done.code == 0, done.stderr
    assert "context window unknown (model house-model-7" in done.stderr
    assert len(loopback.requests) == 1


def test_preview_shows_the_window_and_the_refusal(cli_main, tmp_path, loopback):  # noqa: F811
    session = long_session(tmp_path / "chat.json")
    cfg = config(tmp_path, loopback, window=WINDOW)
    text = cli_main("preview", session, "--config", cfg)
    assert text.code == 0, text.stderr
    assert f"window   {WINDOW:,} tokens (context_window in the config)" in text.stdout
    assert "does NOT fit" in text.stdout and "NOT SENT" in text.stdout
    data = json.loads(cli_main("preview", session, "--config", cfg, "--json").stdout)
    assert data["context_window"] == {"tokens": WINDOW, "source": "context_window in the config"}
    assert [r["kind"] for r in data["refusals"]] == ["too_large"]
    assert loopback.requests == []


def test_the_offline_provider_has_no_window(cli_main, tmp_path):  # noqa: F811
    session = long_session(tmp_path / "chat.json")
    path = tmp_path / "c.yaml"
    path.write_text("compaction: {enabled: true, type: kimi}\ncontext_window: 1000\n")
    done = cli_main("compact", session, "--config", path, "--provider", "offline")
    assert done.code == 0, done.stderr
    assert "window" not in done.stderr


@pytest.mark.parametrize(
    "value, says", [("0", "from 1 to"), ("lots", "must be a whole number"), ("-5", "from 1 to")]
)
def test_a_bad_context_window_is_one_line_naming_the_file(tmp_path, value, says):
    path = tmp_path / "c.yaml"
    path.write_text(f"context_window: {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    line = str(caught.value)
    assert line.startswith(f"{path}: context_window: ") and says in line and "\n" not in line


@pytest.mark.parametrize(
    "model, tokens",
    [
        ("kimi-k2-0905-preview", 262_144),
        ("Kimi-K2-0711-Preview", 131_072),
        ("openai/gpt-4o-mini", 128_000),
        ("claude-sonnet-4-20250514", 200_000),
        ("gemini-2.5-pro", 1_048_576),
        ("house-model-7", None),
        (None, None),
    ],
)
def test_the_table_matches_the_longest_known_start_of_the_name(model, tokens):
    assert table_window(model) == tokens

"""The context meter (issue 33 item 2): each session's fill against its agent's own
compaction threshold, checked against the usage each agent recorded in the reference
sessions (../shared/reference/agents/, written by the real agents) and on generated
sessions near the threshold, with the thresholds read from the agents' configuration."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from kimi_compact_tui.formats import load_session
from tests import core_helpers
from tests.factories import claude_code as cc

#: ../shared/reference beside the checkout (KIMI_COMPACT_TUI_REFERENCE names it elsewhere,
#: e.g. for a worktree whose parent folder has no shared/).
REFERENCE = Path(os.environ.get("KIMI_COMPACT_TUI_REFERENCE") or core_helpers.REFERENCE)
AGENTS = REFERENCE / "agents"
NO_CONFIG = {"HOME": "/nonexistent-home"}


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"reference data absent: {path}")
    return path


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_bytes().split(b"\n") if x.strip()]


def meter(path, env=None):
    session = load_session(path)
    return session.format.context_usage(session, env if env is not None else NO_CONFIG)


# --- against what each agent recorded ----------------------------------------------------------


def test_claude_code_reference_usage():
    path = need(AGENTS / "claude-session-before-compact.jsonl")
    usage = [r["message"]["usage"] for r in lines(path) if r.get("type") == "assistant"]
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
            "output_tokens")  # fmt: skip
    want = sum(usage[-1].get(k) or 0 for k in keys)
    got = meter(path)
    assert (got.used_tokens, got.tokens_source) == (want, "recorded")
    assert (got.window, got.compacts_at) == (200_000, 167_000)
    assert got.line() == "0% · compacts at 84%"
    # after its own compaction no reply has come: the fill is our estimate
    after = meter(need(AGENTS / "claude-session-after-compact.jsonl"))
    assert after.tokens_source == "estimated"


def test_codex_reference_usage_and_window_as_recorded():
    path = need(AGENTS / "codex-session-before-compact.jsonl")
    counts = [r["payload"]["info"] for r in lines(path)
              if r["type"] == "event_msg" and r["payload"].get("type") == "token_count"
              and r["payload"].get("info")]  # fmt: skip
    got = meter(path)
    assert got.used_tokens == counts[-1]["last_token_usage"]["total_tokens"]
    assert got.window == counts[-1]["model_context_window"]
    assert got.compacts_at == int(0.9 * got.window)
    assert got.window_source == "the rollout's model_context_window"
    assert got.line() == "0% · compacts at 90%"


def test_gemini_cli_reference_usage():
    path = need(AGENTS / "gemini-session-after-compress.jsonl")
    replies = [r for r in lines(path) if r.get("type") == "gemini"]
    got = meter(path)
    assert got.used_tokens == replies[-1]["tokens"]["input"]
    assert (got.window, got.compacts_at) == (1_048_576, 524_288)
    assert "compressionThreshold 0.5" in got.threshold_source


def opencode_copy(tmp_path: Path, name: str) -> str:
    db = tmp_path / "opencode.db"
    src = need(AGENTS / name)
    con = sqlite3.connect(src)
    out = sqlite3.connect(db)
    con.backup(out)
    out.close()
    (sid,) = con.execute("select id from session").fetchone()
    con.close()
    return f"{db}#{sid}"


def test_opencode_reference_usage_and_its_model_limits(tmp_path):
    ref = opencode_copy(tmp_path, "opencode-before-compact.db")
    db = sqlite3.connect(ref.split("#")[0])
    data = [json.loads(d) for (d,) in db.execute(
        "select data from message order by time_created, id")]  # fmt: skip
    last = [d for d in data if d.get("role") == "assistant"][-1]
    unknown = meter(ref, {"HOME": str(tmp_path)})
    assert unknown.used_tokens == last["tokens"]["total"]
    assert unknown.window is None and unknown.compacts_at is None
    assert unknown.line() == f"{last['tokens']['total']} tokens · window unknown"
    config = tmp_path / "config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    limit = {"context": 128_000, "output": 16_000}
    config.write_text(json.dumps({"provider": {last["providerID"]: {"models": {
        last["modelID"]: {"limit": limit}}}}}))  # fmt: skip
    got = meter(ref, {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert (got.window, got.compacts_at) == (128_000, 128_000 - 16_000)
    assert str(config) in got.window_source


def test_kimi_cli_reference_usage_and_its_config(tmp_path):
    golden = need(REFERENCE / "kimi-cli" / "golden" / "context_before_compaction.jsonl")
    share = tmp_path / "share"
    session = share / "sessions" / "0123abcd" / "9f1c2d3e-uuid"
    session.mkdir(parents=True)
    path = session / "context.jsonl"
    shutil.copy(golden, path)
    recorded = [r["token_count"] for r in lines(path) if r.get("role") == "_usage"][-1]
    got = meter(path)
    assert (got.used_tokens, got.window) == (recorded, None)
    (share / "config.toml").write_text(
        'default_model = "k"\n[models.k]\nprovider = "p"\nmodel = "m"\nmax_context_size = 200000\n'
    )
    got = meter(path)
    assert (got.window, got.compacts_at) == (200_000, 150_000)  # the window less 50,000 first
    (share / "config.toml").write_text(
        'default_model = "k"\n[models.k]\nmax_context_size = 1000000\n'
        "[loop_control]\ncompaction_trigger_ratio = 0.6\n"
    )
    got = meter(path)
    assert (got.compacts_at, got.compacts_at_percent) == (600_000, 60)


# --- generated sessions near the threshold, and the agents' settings ------------------------------


def claude_near(tmp_path: Path, total: int) -> Path:
    tmp_path = tmp_path / str(total)
    t = cc.Transcript()
    t.user("hello")
    (rec,) = t.assistant([cc.text("hi")])
    for line in t.lines:
        if line.get("uuid") == rec:
            line["message"]["usage"] = {"input_tokens": total - 500, "cache_read_input_tokens": 400,
                                        "cache_creation_input_tokens": 50, "output_tokens": 50}  # fmt: skip
    return t.write(tmp_path / "claude")


def test_claude_code_near_its_threshold_and_its_overrides(tmp_path):
    path = claude_near(tmp_path, 146_000)
    assert meter(path).line() == "73% · compacts at 84%"
    assert meter(claude_near(tmp_path, 167_000)).percent == 84
    half = meter(path, {**NO_CONFIG, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"})
    assert half.compacts_at == 90_000 and "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE" in half.threshold_source
    settings = tmp_path / "cfg" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {"DISABLE_AUTO_COMPACT": "1"}}))
    off = meter(path, {**NO_CONFIG, "CLAUDE_CONFIG_DIR": str(settings.parent)})
    assert off.compacts_at is None and off.line() == "73% · no auto-compaction"


def test_codex_threshold_from_its_config_toml(tmp_path):
    src = need(AGENTS / "codex-session-before-compact.jsonl")
    home = tmp_path / "codex-home"
    day = home / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    path = day / src.name.replace("codex-session-before-compact", "rollout-2026-12-01T00-00-00-x")
    data = src.read_bytes().replace(b'"total_tokens":105', b'"total_tokens":200000')
    path.write_bytes(data)
    got = meter(path)
    assert got.line() == "77% · compacts at 90%"
    (home / "config.toml").write_text("model_auto_compact_token_limit = 180000\n")
    got = meter(path)
    assert got.compacts_at == 180_000 and str(home / "config.toml") in got.threshold_source


def test_plan_prints_the_meter_and_its_json(cli_main, tmp_path):
    path = claude_near(tmp_path, 146_000)
    text = cli_main("plan", path)
    assert text.code == 0, text.stderr
    (line,) = [x for x in text.stdout.split("\n") if x.startswith("context  ")]
    assert line.startswith("context  73% · compacts at 84% (146,000 recorded of 200,000")
    data = json.loads(cli_main("plan", path, "--json").stdout)
    assert data["context"] == {
        "used_tokens": 146_000, "window": 200_000, "compacts_at": 167_000, "percent": 73,
        "compacts_at_percent": 84,
        "source": {"tokens": "recorded",
                   "window": "Claude Code's window for its models (200,000)",
                   "threshold": "Claude Code's rule: window - 20,000 for the summary - 13,000"},
    }  # fmt: skip


def test_a_format_without_a_meter_says_none(cli_main, tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    )
    data = json.loads(cli_main("plan", path, "--json").stdout)
    assert data["context"] is None


def test_codex_after_a_compaction_with_no_count_since_is_estimated(tmp_path):
    from kimi_compact_tui.formats.codex.usage import last_count

    def count(total: int, window: int = 1000) -> bytes:
        info = {"model_context_window": window, "last_token_usage": {"total_tokens": total}}
        return json.dumps(
            {"type": "event_msg", "payload": {"type": "token_count", "info": info}}
        ).encode()

    compacted = json.dumps({"type": "compacted", "payload": {}}).encode()
    assert last_count(b"\n".join([count(5), count(7), compacted, b""])) == (None, 1000)
    assert last_count(b"\n".join([count(5), compacted, count(9, 2000)])) == (9, 2000)
    assert last_count(b"") == (None, None)

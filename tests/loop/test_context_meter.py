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


# --- the cheap reading (list, the picker) agrees with the full one -------------------------------


def full_and_peek(ref, env=None):
    """(the meter of the session read in full, the one read from its end only)."""
    from kimi_compact_tui.formats.base import SessionInfo
    from kimi_compact_tui.formats.meter import meter_of

    env = env if env is not None else NO_CONFIG
    session = load_session(ref)
    info = SessionInfo(ref=session.ref, format=session.format.name)
    peeked, why = meter_of(info, env)
    full, _ = meter_of(info, env, full=True)
    assert full == session.format.context_usage(session, env)
    return full, peeked, why


def kimi_cli_golden(tmp_path: Path) -> Path:
    golden = need(REFERENCE / "kimi-cli" / "golden" / "context_before_compaction.jsonl")
    folder = tmp_path / "share" / "sessions" / "0123abcd" / "9f1c2d3e-uuid"
    folder.mkdir(parents=True)
    shutil.copy(golden, folder / "context.jsonl")
    return folder / "context.jsonl"


@pytest.mark.parametrize(
    "name",
    [
        "claude-session-before-compact.jsonl",
        "claude-session-after-compact.jsonl",
        "codex-session-before-compact.jsonl",
        "codex-session-after-compact.jsonl",
        "gemini-session-before-compress.jsonl",
        "gemini-session-after-compress.jsonl",
        "opencode-before-compact.db",
        "opencode-after-compact.db",
        "kimi-cli",
    ],
)
def test_the_meter_read_from_the_end_is_the_full_reading_on_each_reference(tmp_path, name):
    if name.endswith(".db"):
        ref = opencode_copy(tmp_path, name)
    elif name == "kimi-cli":
        ref = kimi_cli_golden(tmp_path)
    else:
        ref = tmp_path / name
        shutil.copy(need(AGENTS / name), ref)
    full, peeked, why = full_and_peek(ref)
    if full.tokens_source == "recorded":
        assert peeked == full and why is None
    else:  # no reply since the agent's own compaction: only a full read can estimate
        assert peeked is None and why == "not read"


def test_lines_from_the_end_are_the_files_lines_reversed_whatever_the_chunk(tmp_path, monkeypatch):
    import random

    from kimi_compact_tui.formats import context

    rng = random.Random(7)
    path = tmp_path / "f.jsonl"
    for chunk in (1, 2, 3, 7, 64):
        monkeypatch.setattr(context, "TAIL_CHUNK", chunk)
        for _ in range(60):
            lines = [rng.choice([b"", b"a", b"bX", b"X" * rng.randint(1, 40), b"ccccXcc"])
                     for _ in range(rng.randint(0, 8))]  # fmt: skip
            data = b"\n".join(lines) + rng.choice([b"", b"\n"])
            path.write_bytes(data)
            want = [x for x in reversed(data.split(b"\n")) if b"X" in x]
            assert list(context.lines_from_end(path, (b"X",))) == want


# --- each agent near its threshold, its figures from its own configuration -----------------------


def test_gemini_cli_near_its_threshold_and_its_settings(tmp_path):
    from tests.factories import gemini_cli as gc

    records = gc.conversation()
    reply = dict(gc.gemini("m9", "ok"), timestamp="2026-01-01T10:00:09.000Z")
    reply["tokens"] = dict(reply["tokens"], input=520_000)
    path = gc.session_file(tmp_path / "home", records + [gc.user("m8", "go on"), reply])
    full, peeked, _ = full_and_peek(path)
    assert peeked == full and full.line() == "50% · compacts at 50%"
    assert (full.used_tokens, full.compacts_at) == (520_000, 524_288)
    settings = tmp_path / "gh" / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"model": {"compressionThreshold": 0.7}}))
    got, peeked, _ = full_and_peek(path, {**NO_CONFIG, "GEMINI_CLI_HOME": str(tmp_path / "gh")})
    assert peeked == got and got.line() == "50% · compacts at 70%"
    assert str(settings) in got.threshold_source


def test_opencode_near_its_overflow(tmp_path):
    from tests.factories import opencode as oc

    db = oc.OpencodeDb(tmp_path / "opencode.db")
    sid = db.session("near")
    u = db.user(sid, "a long task")
    db.assistant(sid, u, [oc.step_start(), oc.text("working"), oc.step_finish()],
                 tokens={"total": 107_000, "input": 106_000, "output": 1_000})  # fmt: skip
    db.close()
    config = tmp_path / "cfg" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"provider": {"fake": {"models": {"fake-model": {
        "limit": {"context": 128_000, "output": 32_000}}}}}}))  # fmt: skip
    env = {**NO_CONFIG, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    full, peeked, _ = full_and_peek(f"{tmp_path / 'opencode.db'}#{sid}", env)
    assert peeked == full and full.compacts_at == 128_000 - 20_000
    assert full.line() == "84% · compacts at 84%" and full.used_tokens == 107_000


def test_kimi_cli_near_its_threshold(tmp_path):
    from tests.factories.plain import write_kimi
    from tests.factories.writers import kimi_cli_messages

    share = tmp_path / "share"
    path = write_kimi(share / "sessions" / "0123abcd" / "uuid-1", kimi_cli_messages(),
                      usage=149_000)  # fmt: skip
    (share / "config.toml").write_text(
        'default_model = "k"\n[models.k]\nmax_context_size = 200000\n'
    )
    full, peeked, _ = full_and_peek(path)
    assert peeked == full and full.line() == "74% · compacts at 75%"


def kimi_code_home(tmp_path: Path, tokens: int, config: str) -> Path:
    from tests.factories import kimi_code as kc

    j = kc.conversation()
    j.add("token_counting.measured", length=9, tokens=tokens)
    home = tmp_path / "kimi-code-home"
    folder = kc.write_home(home, j.bytes())
    (home / "config.toml").write_text(config)
    return folder / "agents" / "main" / "wire.jsonl"


def test_kimi_code_its_own_count_against_its_rule(tmp_path):
    # the session is bound to the model alias "fake" (profile.bind), not the default one
    config = ('default_model = "other"\n[models.other]\nmax_context_size = 1000\n'
              "[models.fake]\nmax_context_size = 200000\n")  # fmt: skip
    path = kimi_code_home(tmp_path, 160_000, config)
    full, peeked, _ = full_and_peek(path)
    assert peeked == full and (full.window, full.compacts_at) == (200_000, 150_000)
    assert full.line() == "80% · compacts at 75%" and full.tokens_source == "recorded"
    assert "max_context_size of fake" in full.window_source


def test_kimi_code_input_size_and_loop_control(tmp_path):
    config = ("[models.fake]\nmax_context_size = 200000\nmax_input_size = 180000\n"
              "[loop_control]\ncompaction_trigger_ratio = 0.6\nreserved_context_size = 0\n")  # fmt: skip
    full, peeked, _ = full_and_peek(kimi_code_home(tmp_path, 100_000, config))
    assert peeked == full and (full.window, full.compacts_at) == (180_000, 108_000)
    assert "max_input_size of fake" in full.window_source


def test_kimi_code_without_its_model_in_the_config_says_unknown(tmp_path):
    full, _, _ = full_and_peek(kimi_code_home(tmp_path, 5_000, 'default_model = "x"\n'))
    assert full.window is None and full.line() == "5,000 tokens · window unknown"
    assert "fake" in full.window_source


def test_kimi_code_after_our_compaction_the_count_is_the_one_we_recorded(cli_main, tmp_path):
    config = "[models.fake]\nmax_context_size = 200000\n"
    path = kimi_code_home(tmp_path, 160_000, config)
    res = cli_main("compact", path, "--in-place", "--yes", "--provider", "offline", "--up-to", "4")
    assert res.code == 0, res.stderr
    rebased = [r for r in lines(path) if r["type"] == "token_counting.rebased"][-1]
    full, peeked, _ = full_and_peek(path)
    assert peeked == full and full.used_tokens == rebased["tokens"] < 160_000

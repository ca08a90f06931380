"""The gate (issue 33 item 1) without an agent: the hook's decisions, the state it
keeps, and installing into the agents' configuration files (real files in a temporary
HOME; the real agents are in tests/agents/test_claude_code_gate.py and
test_codex_gate.py)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.codex import trust as codex_trust
from kimi_compact_tui.formats.gate import agent_named, hook_of
from kimi_compact_tui.hooks.install import install, our_command, status, uninstall
from kimi_compact_tui.hooks.pending import GateState, clear_written, gate_dir
from kimi_compact_tui.hooks.run import run_hook

CLAUDE, CODEX, GEMINI, KIMI = (
    agent_named(n) for n in ("claude-code", "codex", "gemini-cli", "kimi-cli")
)


def transcript(tmp_path: Path, tokens: int = 1234) -> Path:
    path = tmp_path / "t.jsonl"
    usage = {"input_tokens": tokens - 30, "cache_creation_input_tokens": 10,
             "cache_read_input_tokens": 20, "output_tokens": 7}  # fmt: skip
    lines = [
        {"type": "user", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [], "usage": usage}},
        {"type": "user", "message": {"role": "user", "content": "more"}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def payload(session: str = "sess-1", transcript_path: Path | None = None, **more) -> bytes:
    data = {"session_id": session, "trigger": "auto", "hook_event_name": "PreCompact", **more}
    if transcript_path is not None:
        data["transcript_path"] = str(transcript_path)
    return json.dumps(data).encode()


@pytest.fixture
def state(tmp_path) -> GateState:
    return GateState(tmp_path / "gate")


# --- the hook -------------------------------------------------------------------------------


def test_claude_code_is_held_with_exit_2_and_one_line(tmp_path, state):
    t = transcript(tmp_path)
    out = run_hook("claude-code", hook_of, payload(transcript_path=t), state=state)
    assert out.exit_code == 2 and out.stdout == "" and out.held
    assert out.stderr.count("\n") == 1
    assert f"run `kimi-compact-tui {t}`" in out.stderr and "resume Claude Code" in out.stderr
    assert "hook allow sess-1" in out.stderr
    (p,) = state.pending()
    assert (p.agent, p.session, p.transcript, p.trigger, p.tokens, p.blocks) == (
        "claude-code", "sess-1", str(t), "auto", 1234, 1,
    )  # fmt: skip
    assert [e["event"] for e in state.events("sess-1")] == ["held"]


def test_a_transcript_that_is_not_there_lets_the_compaction_through(tmp_path, state):
    """A hold the user could not review (the agent names a transcript that is not
    a file) would only wedge the agent: the hook fails open and says why."""
    missing = tmp_path / "gone.jsonl"
    out = run_hook("claude-code", hook_of, payload(transcript_path=missing), state=state)
    assert out.exit_code == 0 and not out.held and out.stderr == ""
    assert state.pending() == []
    (event,) = state.events("sess-1")
    assert event["event"] == "let-through" and "not a file" in event["reason"]
    out = run_hook("claude-code", hook_of, payload(transcript_path=tmp_path), state=state)
    assert out.exit_code == 0 and not out.held  # a folder is no transcript either


def test_codex_is_stopped_with_continue_false_on_stdout(tmp_path, state):
    out = run_hook("codex", hook_of, payload("019", model="m", turn_id="t"), state=state)
    assert out.exit_code == 0 and out.stderr == "" and out.held
    body = json.loads(out.stdout)
    assert body["continue"] is False and "resume Codex" in body["stopReason"]
    assert [p.session for p in state.pending()] == ["019"]


def test_allow_lets_the_next_compaction_through_once(tmp_path, state):
    assert run_hook("claude-code", hook_of, payload(), state=state).held
    state.allow("claude-code", "sess-1")
    through = run_hook("claude-code", hook_of, payload(), state=state)
    assert (through.exit_code, through.stdout, through.stderr, through.held) == (0, "", "", False)
    assert state.pending() == [] and state.allowances() == []
    assert run_hook("claude-code", hook_of, payload(), state=state).held  # once
    assert [e["event"] for e in state.events()] == ["held", "let-through", "held"]


def test_a_session_left_pending_is_let_through_after_the_configured_blocks(state):
    outs = [
        run_hook("claude-code", hook_of, payload(), let_through_after=2, state=state)
        for _ in range(3)
    ]
    assert [o.held for o in outs] == [True, True, False]
    assert outs[2].exit_code == 0 and state.pending() == []
    assert state.events()[-1]["reason"] == "held 2 times without a review"
    never = [
        run_hook("codex", hook_of, payload("x"), let_through_after=0, state=state) for _ in range(4)
    ]
    assert all(o.held for o in never) and state.pending()[0].blocks == 4


@pytest.mark.parametrize("stdin", [b"not json", b"[]", b'{"trigger": "auto"}', b"\xff"])
def test_any_error_lets_the_compaction_through_with_a_line_in_the_log(stdin, state):
    out = run_hook("claude-code", hook_of, stdin, state=state)
    assert (out.exit_code, out.stdout, out.stderr) == (0, "", "")
    (line,) = state.log.read_text().strip().split("\n")
    assert "hook run claude-code" in line and "the compaction went through" in line
    assert state.pending() == []


def test_a_state_folder_that_cannot_be_written_lets_the_compaction_through(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    out = run_hook("codex", hook_of, payload(), state=GateState(blocked / "gate"))
    assert (out.exit_code, out.stdout) == (0, "")


def test_advisory_agents_record_a_compaction_made_blind(state):
    out = run_hook("kimi-cli", hook_of, payload("k1", token_count=90000, cwd="/w"), state=state)
    assert (out.exit_code, out.stdout, out.stderr) == (0, "", "")
    assert state.pending() == []
    (event,) = state.events("k1")
    assert event["event"] == "compacted-blind" and event["tokens"] == 90000
    assert run_hook("gemini-cli", hook_of, payload("g1"), state=state).exit_code == 0
    assert state.events("g1")[0]["event"] == "compacted-blind"


def test_a_ledger_line_nested_too_deep_to_read_is_skipped_not_raised(state):
    """A torn or hostile line in the gate's log (JSON nested past the parser's
    depth) is passed over like any line that is not JSON: the events around it
    are still read."""
    assert (
        run_hook(
            "kimi-cli", hook_of, payload("k1", token_count=1000, cwd="/w"), state=state
        ).exit_code
        == 0
    )
    with state.ledger.open("a", encoding="utf-8") as fh:
        fh.write("[" * 100_000 + "\n")
    assert (
        run_hook(
            "kimi-cli", hook_of, payload("k1", token_count=2000, cwd="/w"), state=state
        ).exit_code
        == 0
    )
    assert [e["tokens"] for e in state.events("k1")] == [1000, 2000]


def test_writing_the_session_clears_its_pending_review(tmp_path, state):
    t = transcript(tmp_path)
    run_hook("claude-code", hook_of, payload("a", t), state=state)
    (tmp_path / "other").mkdir()
    other = transcript(tmp_path / "other")  # another session's transcript
    run_hook("claude-code", hook_of, payload("b", other), state=state)
    link = tmp_path / "link.jsonl"
    link.symlink_to(t)
    cleared = clear_written(link, state.folder)
    assert [p.session for p in cleared] == ["a"]
    assert [p.session for p in state.pending()] == ["b"]
    assert state.events("a")[-1]["event"] == "reviewed"


def test_the_state_folder_is_the_apps(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "x"))
    assert gate_dir() == tmp_path / "x" / "kimi-compact-tui" / "gate"


# --- installing -------------------------------------------------------------------------------


def env_for(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex"),
            "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
            "KIMI_SHARE_DIR": str(tmp_path / "kimi")}  # fmt: skip


USER_JSON = (
    b'{\n    "model": "opus",\n    "hooks": {\n        "PreCompact": [\n'
    b'            {"matcher": "manual", "hooks": [{"type": "command", "command": "./mine"}]}\n'
    b"        ]\n    }\n}\n"
)


def test_install_merges_keeps_a_backup_and_is_idempotent(tmp_path, state):
    env = env_for(tmp_path)
    settings = tmp_path / "claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(USER_JSON)
    result = install(CLAUDE, env=env, state=state)
    (change,) = result.changes
    assert change.changed and change.backup is not None
    assert change.backup.read_bytes() == USER_JSON
    data = json.loads(settings.read_bytes())
    assert data["model"] == "opus"
    mine, ours = data["hooks"]["PreCompact"]
    assert mine == json.loads(USER_JSON)["hooks"]["PreCompact"][0]
    assert ours == {
        "matcher": "auto",
        "hooks": [{"type": "command", "command": our_command(CLAUDE)}],
    }
    assert settings.read_text().split("\n")[1].startswith("    ")  # the user's indent
    first = settings.read_bytes()
    again = install(CLAUDE, env=env, state=state)
    assert not again.changed and settings.read_bytes() == first
    assert len(list(settings.parent.glob("*.bak"))) == 1
    manual = install(CLAUDE, manual=True, env=env, state=state)  # updated in place
    assert manual.changed
    groups = json.loads(settings.read_bytes())["hooks"]["PreCompact"]
    assert len(groups) == 2 and "matcher" not in groups[1]
    uninstall(CLAUDE, env=env, state=state)
    assert settings.read_bytes() == USER_JSON


def test_uninstall_after_the_user_changed_the_file_takes_only_ours_out(tmp_path, state):
    env = env_for(tmp_path)
    settings = tmp_path / "claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(USER_JSON)
    install(CLAUDE, env=env, state=state)
    data = json.loads(settings.read_bytes())
    data["hooks"].setdefault("Stop", []).append({"hooks": [{"type": "command", "command": "x"}]})
    settings.write_text(json.dumps(data, indent=4) + "\n")
    uninstall(CLAUDE, env=env, state=state)
    after = json.loads(settings.read_bytes())
    assert after["hooks"]["PreCompact"] == json.loads(USER_JSON)["hooks"]["PreCompact"]
    assert after["hooks"]["Stop"] == data["hooks"]["Stop"] and after["model"] == "opus"


def test_a_file_install_created_is_removed_by_uninstall(tmp_path, state):
    env = env_for(tmp_path)
    install(CLAUDE, env=env, state=state)
    settings = tmp_path / "claude" / "settings.json"
    assert oct(settings.stat().st_mode & 0o777) == "0o600"
    result = uninstall(CLAUDE, env=env, state=state)
    assert result.changes[0].removed and not settings.exists()


@pytest.mark.parametrize(
    "text, where",
    [(b'{\n  "hooks": {,\n}', ":2:13: not valid JSON"), (b'{"hooks": []}', '"hooks" is not an object'),
     (b'{"hooks": {"PreCompact": {}}}', "is not a list"), (b"[1]", "expected a JSON object")],
)  # fmt: skip
def test_a_settings_file_we_cannot_merge_into_is_one_line_and_unchanged(
    tmp_path, state, text, where
):
    env = env_for(tmp_path)
    settings = tmp_path / "claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(text)
    with pytest.raises(UserError) as err:
        install(CLAUDE, env=env, state=state)
    assert str(settings) in str(err.value) and where in str(err.value)
    assert "\n" not in str(err.value)
    assert settings.read_bytes() == text and not list(settings.parent.glob("*.bak"))


# --- Codex: the trust entry -----------------------------------------------------------------------


def test_codex_trust_hash_is_the_sorted_compact_json_of_the_normalised_hook():
    handler = {"type": "command", "command": "k hook run codex"}
    text = (
        '{"event_name":"pre_compact","hooks":[{"async":false,"command":"k hook run codex",'
        '"timeout":600,"type":"command"}],"matcher":"auto"}'
    )
    import hashlib

    want = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert codex_trust.trusted_hash("PreCompact", "auto", handler) == want
    assert codex_trust.trusted_hash("PreCompact", None, handler) != want  # no matcher: no key
    assert (
        codex_trust.trust_key("/c/hooks.json", "PreCompact", 1, 0)
        == "/c/hooks.json:pre_compact:1:0"
    )


USER_TOML = (
    b'model = "gpt"\n\n[hooks.state."/x/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:abc"\n'
)


def test_codex_install_writes_hooks_json_and_the_trust_entry_and_uninstall_gives_both_back(
    tmp_path, state
):
    env = env_for(tmp_path)
    codex = tmp_path / "codex"
    codex.mkdir()
    (codex / "config.toml").write_bytes(USER_TOML)
    result = install(CODEX, env=env, state=state)
    hooks = json.loads((codex / "hooks.json").read_bytes())
    (group,) = hooks["hooks"]["PreCompact"]
    config = tomllib.loads((codex / "config.toml").read_text())
    assert config["model"] == "gpt"
    key = f"{codex / 'hooks.json'}:pre_compact:0:0"
    assert config["hooks"]["state"][key]["trusted_hash"] == codex_trust.trusted_hash(
        "PreCompact", "auto", group["hooks"][0]
    )
    assert config["hooks"]["state"]["/x/hooks.json:stop:0:0"] == {"trusted_hash": "sha256:abc"}
    assert (codex / "config.toml").read_bytes().startswith(USER_TOML)
    assert any("trusted in" in n for n in result.notes)
    (entry,) = [e for e in status(CODEX, env=env) if e["scope"] == "user"]
    assert entry["hooks"][0]["trust"] == "trusted"
    assert not install(CODEX, env=env, state=state).changed
    uninstall(CODEX, env=env, state=state)
    assert (codex / "config.toml").read_bytes() == USER_TOML
    assert not (codex / "hooks.json").exists()


def test_codex_without_trust_says_codex_skips_it(tmp_path, state):
    env = env_for(tmp_path)
    result = install(CODEX, trust=False, env=env, state=state)
    assert not (tmp_path / "codex" / "config.toml").exists()
    assert any("skips this hook, silently, until you trust it" in n for n in result.notes)
    (entry,) = [e for e in status(CODEX, env=env) if e["scope"] == "user"]
    assert entry["hooks"][0]["trust"] == "untrusted"


def test_trust_entries_edit_the_toml_text_only_where_they_are():
    key = '/we"ird/hooks.json:pre_compact:0:0'
    text = "a = 1\n[tui]\nx = 2\n"
    added = codex_trust.with_trust(text, key, "sha256:1")
    assert added.startswith(text)
    assert codex_trust.state_of(added)[key] == {"trusted_hash": "sha256:1"}
    changed = codex_trust.with_trust(added, key, "sha256:2")
    assert codex_trust.state_of(changed)[key] == {"trusted_hash": "sha256:2"}
    assert codex_trust.without_trust(changed, key) == text
    mixed = added.replace('trusted_hash = "sha256:1"', 'trusted_hash = "sha256:1"\nnote = "mine"')
    with pytest.raises(ValueError):
        codex_trust.without_trust(mixed, key)


# --- kimi-cli: a [[hooks]] table --------------------------------------------------------------


def test_kimi_cli_gets_a_hooks_table_and_loses_exactly_it(tmp_path, state):
    env = env_for(tmp_path)
    config = tmp_path / "kimi" / "config.toml"
    config.parent.mkdir()
    user = b'default_model = "k2"\n\n[[hooks]]\nevent = "Stop"\ncommand = "mine"\n'
    config.write_bytes(user)
    install(KIMI, env=env, state=state)
    tables = tomllib.loads(config.read_text())["hooks"]
    assert tables[0] == {"event": "Stop", "command": "mine"}
    assert tables[1]["event"] == "PreCompact" and "hook run kimi-cli" in tables[1]["command"]
    assert tables[1]["matcher"] == "auto"
    assert not install(KIMI, env=env, state=state).changed
    (entry,) = status(KIMI, env=env)
    assert entry["hooks"][0]["matcher"] == "auto"
    uninstall(KIMI, env=env, state=state)
    assert config.read_bytes() == user


# --- the command line -----------------------------------------------------------------------------


def test_hook_status_and_allow_on_the_command_line(cli_main, tmp_path):
    state = GateState()
    run_hook("claude-code", hook_of, payload("abcdef-123", transcript(tmp_path)), state=state)
    res = cli_main("hook", "status", "--json")
    assert res.code == 0
    data = json.loads(res.stdout)
    assert [p["session"] for p in data["pending"]] == ["abcdef-123"]
    assert data["state"] == str(gate_dir())
    text = cli_main("hook", "status")
    assert "pending: claude-code abcdef-123" in text.stdout
    assert f"review: kimi-compact-tui {tmp_path / 't.jsonl'}" in text.stdout
    assert cli_main("hook", "allow", "abc").code == 0
    assert json.loads(cli_main("hook", "status", "--json").stdout)["allowed"] == [
        "claude-code--abcdef-123"
    ]
    missing = cli_main("hook", "allow", "nope")
    assert missing.code == 2 and len(missing.error_lines) == 1
    assert "no pending review is of 'nope'" in missing.stderr


def test_hook_install_of_an_agent_without_a_hook_is_refused(cli_main):
    res = cli_main("hook", "install", "opencode")
    assert res.code == 2 and len(res.error_lines) == 1
    assert "opencode has no compaction hook a command can use" in res.stderr
    res = cli_main("hook", "uninstall", "cladue-code")
    assert res.code == 2 and "unknown agent 'cladue-code'" in res.stderr
    assert "claude-code" in res.stderr


def test_hook_install_on_the_command_line_says_what_it_did(cli_main, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    res = cli_main("hook", "install", "claude-code")
    assert res.code == 0, res.stderr
    assert f"created: {tmp_path / 'claude' / 'settings.json'}" in res.stdout
    assert "automatic compactions only" in res.stdout
    res = cli_main("hook", "install", "gemini-cli")
    assert "advisory only" in res.stdout and "compacted blind" in res.stdout
    assert os.path.exists(Path(os.environ["HOME"]) / ".gemini" / "settings.json")


def test_a_reinstall_after_the_user_edited_the_file_never_puts_old_bytes_back(tmp_path, state):
    """Install, the user adds a hook, install again with other options, uninstall: the
    user's new hook stays (the bytes from before the first install are no way back)."""
    env = env_for(tmp_path)
    settings = tmp_path / "claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(USER_JSON)
    install(CLAUDE, env=env, state=state)
    data = json.loads(settings.read_bytes())
    data["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "added-later"}]}]
    settings.write_text(json.dumps(data, indent=4) + "\n")
    install(CLAUDE, manual=True, env=env, state=state)
    uninstall(CLAUDE, env=env, state=state)
    after = json.loads(settings.read_bytes())
    assert after["hooks"]["Stop"] == data["hooks"]["Stop"]
    assert "hook run" not in settings.read_text()


@pytest.mark.parametrize(
    "argv",
    [["hook", "run", "no-such-agent"], ["hook", "run", "claude-code", "--new-option", "x"],
     ["hook", "run", "claude-code", "--let-through-after", "many"]],
)  # fmt: skip
def test_no_word_on_the_hook_line_is_a_usage_error(cli_main, monkeypatch, argv):
    """Exit 2 blocks Claude Code's compaction: a hook line the tool does not know (an
    older tool, a typo) lets the compaction through instead, and the log says why."""
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"{}")))
    res = cli_main(*argv)
    assert res.code == 0 and res.stderr == ""
    assert "the compaction went through" in GateState().log.read_text()


def test_the_let_through_count_is_read_from_the_hook_line(cli_main, monkeypatch):
    import io

    for _ in range(2):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(payload("s9"))))
        res = cli_main("hook", "run", "claude-code", "--let-through-after", "1")
    assert res.code == 0 and GateState().events()[-1]["event"] == "let-through"


def test_hook_status_shows_an_agents_session_id_without_its_escapes(cli_main, tmp_path):
    """The session id and trigger come from the agent's stdin: a terminal escape in
    them is shown, never sent to the terminal."""
    state = GateState()
    run_hook("claude-code", hook_of, payload("ab\x1b[2Jcd-1", transcript(tmp_path)), state=state)
    text = cli_main("hook", "status").stdout
    assert "pending: claude-code ab" in text and "\x1b" not in text

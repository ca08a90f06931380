"""``kimi-compact-tui list [--json] [--agent NAME]``: the picker's sessions
as text, for scripts, from real sessions written where each agent keeps them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kimi_compact_tui.commands.jsonout import JSON_SCHEMA
from kimi_compact_tui.formats import registry
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories.writers import write_claude_code, write_kimi_cli


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's HOME holding a kimi-cli and a Claude Code session."""
    for name in ("CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "KIMI_CODE_HOME"):
        monkeypatch.delenv(name, raising=False)
    home = Path(os.environ["HOME"])
    write_kimi_cli(home)
    write_claude_code(home)
    return home


def test_list_shows_each_session_with_its_short_id_agent_time_messages_and_title(
    home, cli_main  # noqa: F811
):
    found = registry.discover_all()
    short = registry.short_ids(found)
    assert len(found) == 2
    done = cli_main("list")
    assert done.code == 0, done.stderr
    lines = done.stdout.rstrip("\n").split("\n")
    assert len(lines) == 2
    for info in found:
        (line,) = [x for x in lines if x.startswith(short[info.session_id or ""] + "  ")]
        fmt = registry.get(info.format)
        assert str(fmt.agent) in line and f"  {info.message_count:,}  " in line
        assert info.title is not None and info.title[:30] in line
    # Every short id it prints opens that session.
    for line in lines:
        ident = line.split("  ")[0]
        assert cli_main("plan", ident, "--json").code == 0


def test_list_json_has_every_field_and_the_full_reference(home, cli_main):  # noqa: F811
    done = cli_main("list", "--json")
    assert done.code == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["schema"] == JSON_SCHEMA and len(data["sessions"]) == 2
    for row in data["sessions"]:
        assert set(row) >= {"ref", "short_id", "agent", "updated", "messages", "title"}
        assert Path(row["ref"]).exists() and row["messages"] > 0
    times = [row["updated"] for row in data["sessions"]]
    assert times == sorted(times, reverse=True)  # newest first


@pytest.mark.parametrize("name", ["claude-code", "Claude Code", "CLAUDE"])
def test_list_agent_keeps_only_that_agents_sessions(home, cli_main, name):  # noqa: F811
    done = cli_main("list", "--agent", name, "--json")
    assert done.code == 0, done.stderr
    rows = json.loads(done.stdout)["sessions"]
    assert [row["format"] for row in rows] == ["claude-code"]


def test_an_unknown_agent_is_one_line_naming_the_accepted_ones(home, cli_main):  # noqa: F811
    done = cli_main("list", "--agent", "emacs")
    assert done.code == 2 and done.stderr.count("\n") == 1
    assert "--agent emacs" in done.stderr and "claude-code" in done.stderr


def test_no_sessions_is_said_on_stderr_with_nothing_on_stdout(cli_main):  # noqa: F811
    done = cli_main("list", "--agent", "codex")
    assert done.code == 0 and done.stdout == ""
    assert "no codex sessions found" in done.stderr


# --- the context meter and the pending reviews (issue 33 item 2) ---------------------------------


def claude_near(home: Path, total: int, prompt: str, sid: str | None = None) -> Path:
    """A Claude Code session under ``home`` whose last reply used ``total`` tokens (its
    own id: the prompt's, beside the factory's session)."""
    import uuid

    from tests.factories import claude_code as cc

    t = cc.Transcript(sid or str(uuid.uuid5(uuid.NAMESPACE_URL, prompt)))
    t.user(prompt)
    t.assistant([cc.text("hi")])
    t.user("Run the tests, please.")
    t.assistant([cc.text("They pass.")])
    t.user("Thanks.")
    (rec,) = t.assistant([cc.text("You're welcome.")])
    for line in t.lines:
        if line.get("uuid") == rec:
            line["message"]["usage"] = {"input_tokens": total - 100, "output_tokens": 100}
    return t.write(home / ".claude")


def test_list_shows_each_sessions_meter_as_plan_json_has_it(home, cli_main):  # noqa: F811
    path = claude_near(home, 146_000, "near the threshold")
    text = cli_main("list", "--agent", "claude-code")
    assert text.code == 0, text.stderr
    (line,) = [x for x in text.stdout.split("\n") if "near the threshold" in x]
    assert "  73% · compacts at 84%  " in line
    rows = {row["ref"]: row for row in json.loads(cli_main("list", "--json").stdout)["sessions"]}
    plan = json.loads(cli_main("plan", path, "--json").stdout)
    assert rows[str(path)]["context"] == plan["context"]
    assert rows[str(path)]["context"]["source"]["tokens"] == "recorded"
    for row in rows.values():  # every listed session of an agent with a meter has one
        assert row["context"] is not None, row
        assert (
            row["context"] == json.loads(cli_main("plan", row["ref"], "--json").stdout)["context"]
        )


def test_pending_reviews_are_listed_first_and_marked(home, cli_main, monkeypatch):  # noqa: F811
    from kimi_compact_tui.formats.gate import hook_of
    from kimi_compact_tui.hooks.pending import GateState
    from kimi_compact_tui.hooks.run import run_hook

    old = claude_near(home, 20_000, "an older session the gate held")
    os.utime(old, (1_000_000_000, 1_000_000_000))
    stdin = json.dumps({"session_id": old.stem, "transcript_path": str(old), "trigger": "auto"})
    state = GateState()
    assert run_hook("claude-code", hook_of, stdin.encode(), state=state).held
    assert state.pending() and state.folder.is_dir()  # the real gate state folder
    rows = json.loads(cli_main("list", "--json").stdout)["sessions"]
    assert rows[0]["ref"] == str(old) and rows[0]["pending_review"]["trigger"] == "auto"
    assert all(row["pending_review"] is None for row in rows[1:])
    lines = cli_main("list").stdout.rstrip("\n").split("\n")
    assert "PENDING REVIEW (auto, held 1 time)" in lines[0]
    assert "an older session the gate held" in lines[0]
    assert not any("PENDING" in x for x in lines[1:])
    # compacting it with this tool clears it: no longer first, no longer marked
    res = cli_main("compact", old, "--in-place", "--yes", "--provider", "offline")
    assert res.code == 0, res.stderr
    rows = json.loads(cli_main("list", "--json").stdout)["sessions"]
    assert all(row["pending_review"] is None for row in rows)


def test_a_session_needing_a_full_read_is_read_only_among_the_newest(home, tmp_path):
    """After the agent's own compaction no reply has come: its fill is our estimate of
    its messages, which needs a full read; only the newest FULL_READS are read so."""
    import shutil

    from kimi_compact_tui.commands.listing import NOT_READ, rows_of
    from tests import core_helpers

    src = Path(os.environ.get("KIMI_COMPACT_TUI_REFERENCE") or core_helpers.REFERENCE)
    src = src / "agents" / "claude-session-after-compact.jsonl"
    if not src.exists():
        pytest.skip(f"reference data absent: {src}")
    folder = home / ".claude" / "projects" / "-home-user-work"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "3671bf8c-0000-4000-8000-000000000001.jsonl"
    shutil.copy(src, target)
    target.chmod(0o644)
    found = [s for s in registry.discover_all() if s.ref.path == target]
    (read,) = rows_of(found)
    assert read.usage is not None and read.usage.tokens_source == "estimated"
    (unread,) = rows_of(found, full_reads=0)
    assert unread.usage is None and unread.note == NOT_READ


def test_a_held_session_outside_the_folders_the_picker_scans_is_listed_too(
    home, cli_main, tmp_path  # noqa: F811
):
    from kimi_compact_tui.formats.gate import hook_of
    from kimi_compact_tui.hooks.pending import GateState
    from kimi_compact_tui.hooks.run import run_hook

    elsewhere = claude_near(tmp_path / "other-config", 150_000, "held in another config dir",
                            sid="9d3c1f7a-2b4e-4f60-8a1b-0c2d3e4f5a6b")  # fmt: skip
    assert not any(s.ref.path == elsewhere for s in registry.discover_all())
    stdin = json.dumps({"session_id": elsewhere.stem, "transcript_path": str(elsewhere),
                        "trigger": "auto"})  # fmt: skip
    assert run_hook("claude-code", hook_of, stdin.encode(), state=GateState()).held
    rows = json.loads(cli_main("list", "--json").stdout)["sessions"]
    assert rows[0]["ref"] == str(elsewhere) and rows[0]["pending_review"] is not None
    assert rows[0]["short_id"] is None  # named by its path: no short id reaches it
    assert rows[0]["context"]["percent"] == 75 and len(rows) == 3  # and the two in HOME
    line = cli_main("list").stdout.split("\n")[0]
    assert line.startswith(str(elsewhere)) and "PENDING REVIEW" in line

"""Gemini CLI sessions in the picker and by id: listed as Gemini CLI lists them (a
conversation worth resuming, not a sub-agent's; of several files of one session the
latest ``lastUpdated``), and the confirm dialog says to close Gemini CLI first."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from kimi_compact_tui.formats import load_session, registry
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.providers import StreamResult
from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
from tests.factories import SUMMARY
from tests.factories import gemini_cli as g
from tests.tui_support import FlowHost, make_state

OTHER = "9e1d2c3b-aaaa-4bbb-8ccc-0123456789ab"


def machine(home: Path) -> dict[str, Path]:
    """Two projects: a session with a stray file (a resume in another minute), an older
    copy and a sub-agent session; a second session with a title of Gemini's."""
    main = g.session_file(home)
    chats = main.parent
    stray = g.write(chats / f"session-2026-01-01T10-07-{g.SID[:8]}.jsonl", g.conversation()[:2])
    old = g.conversation()[:-1] + [{"$set": {"lastUpdated": "2026-01-01T09:00:00.000Z"}}]
    older = g.write(chats / f"session-2025-12-31T10-00-{g.SID[:8]}.jsonl", old)
    sub = [g.header("sub-1", kind="subagent"), g.user("s1", "sub task"), g.gemini("s2", "ok")]
    g.write(chats / g.SID / "sub-1.jsonl", sub)
    g.write(chats.parent / "kimi-compact-tui-restore-points" / (main.name + ".bak-1"), [])
    titled = [
        g.header(OTHER),
        g.user("o1", "first prompt"),
        g.gemini("o2", "answer"),
        {"$set": {"summary": "Gemini's own title", "lastUpdated": "2026-01-02T00:00:00.000Z"}},
    ]
    chats_b = home / ".gemini" / "tmp" / "other" / "chats"
    second = g.write(chats_b / f"session-2026-01-02T00-00-{OTHER[:8]}.jsonl", titled)
    (chats_b.parent / ".project_root").write_text("/work/other", encoding="utf-8")
    return {"main": main, "stray": stray, "older": older, "second": second}


def test_the_picker_lists_each_session_once_as_gemini_cli_would_resume_it(tmp_path):
    files = machine(tmp_path)
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    rows = [r for r in registry.discover_all(env, tmp_path / "nohome") if r.format == "gemini-cli"]
    assert [(r.path, r.session_id) for r in rows] == [
        (files["second"], OTHER),
        (files["main"], g.SID),
    ]
    second, main = rows
    assert (second.title, second.work_dir, second.message_count) == (
        "Gemini's own title",
        "/work/other",
        2,
    )
    assert (main.title, main.work_dir, main.message_count) == ("run echo hi", "/work/proj", 7)
    assert main.updated is not None and second.updated > main.updated
    note = registry.discovery_note(rows, env, tmp_path / "nohome")
    assert "2 Gemini CLI sessions under" in note and str(tmp_path / ".gemini" / "tmp") in note


def test_a_session_opens_by_its_id(tmp_path, monkeypatch):
    files = machine(tmp_path)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    assert registry.find_by_id(g.SID) == SessionRef(files["main"])
    assert registry.find_by_id(OTHER) == SessionRef(files["second"])
    assert registry.find_by_id("sub-1") is None
    # The start of the id (the picker's short id) is the session the picker lists.
    assert registry.find_by_id(g.SID[:8]) == SessionRef(files["main"])
    session = load_session(g.SID)
    assert session.path == files["main"] and session.format.name == "gemini-cli"
    row = registry.describe_path(files["stray"])
    assert row.format == "gemini-cli" and row.message_count == 0


async def test_confirm_says_appended_and_close_gemini_cli_first(tmp_path: Path) -> None:
    path = g.session_file(tmp_path)
    state = make_state(path)
    state.set_result(StreamResult(status="complete", summary=SUMMARY))
    screen = ConfirmWriteScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        body = " ".join(str(screen.query_one("#confirm-body", Static).render()).split())
    assert "(Gemini CLI session)" in body and "the compaction is appended" in body
    assert "Gemini CLI must not be running on this session" in body
    assert "kimi-compact-tui-restore-points" in body

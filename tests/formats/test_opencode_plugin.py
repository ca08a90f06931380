"""The registered opencode format (``formats/opencode/plugin.py``, ``store.py``): naming a
session (``ses_…`` found as opencode finds its database, ``DB#ses_…``, a database alone
listing its sessions), the picker, the boundary rules of a database of rows, the
refusals made before any request and inside the write, and per-session undo, through
the CLI as a user runs it. Databases are built by ``tests/factories/opencode.py``; the
real opencode proves the same in ``tests/agents/test_opencode_resume.py``.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from kimi_compact_tui import store
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats import load, registry
from kimi_compact_tui.formats.opencode import discover
from kimi_compact_tui.formats.opencode.plugin import FORMAT
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.tui.state import ReviewState
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories import opencode as o
from tests.factories.writers import write_opencode

ENABLED = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})


def config_file(tmp_path: Path) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text("compaction:\n  enabled: true\n  type: kimi\n", encoding="utf-8")
    return config


def session_rows(db: Path, sid: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        messages = conn.execute(
            "SELECT * FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,)
        ).fetchall()
        parts = conn.execute(
            "SELECT * FROM part WHERE session_id = ? ORDER BY id", (sid,)
        ).fetchall()
    finally:
        conn.close()
    return [tuple(r) for r in messages + parts]


def other_session(db: Path, sid: str) -> str:
    conn = sqlite3.connect(db)
    try:
        (other,) = conn.execute(
            "SELECT id FROM session WHERE id != ? AND parent_id IS NULL", (sid,)
        ).fetchone()
    finally:
        conn.close()
    return str(other)


def opencode_appends(db: Path, sid: str, words: str) -> None:
    """opencode's next prompt, written by another connection (as opencode would)."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        (latest,) = conn.execute(
            "SELECT MAX(time_created) FROM message WHERE session_id = ?", (sid,)
        ).fetchone()
        t = int(latest) + 1000
        mid = o.make_id("msg", (t * 4096) % (1 << 48))
        data = {"role": "user", "time": {"created": t}, "agent": "build", "model": o.PROVIDER}
        conn.execute(
            "INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, t, t, o.to_json(data))
        )
        conn.execute(
            "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
            (
                o.make_id("prt", (t * 4096 + 1) % (1 << 48)),
                mid,
                sid,
                t,
                t,
                o.to_json(o.text(words)),
            ),
        )
    finally:
        conn.close()


@pytest.fixture
def named(tmp_path: Path) -> tuple[Path, str]:
    ref = write_opencode(tmp_path)
    db, _, sid = str(ref).rpartition("#")
    return Path(db), sid


# --- naming a session --------------------------------------------------------------------


def test_a_session_id_is_found_where_opencode_keeps_its_database(
    named, monkeypatch, cli_main  # noqa: F811
):
    db, sid = named
    monkeypatch.setenv("OPENCODE_DB", str(db))
    loaded = load(sid)
    assert loaded.session.ref is not None and (loaded.session.ref.path, loaded.session.ref.key) == (
        db,
        sid,
    )
    shown = cli_main("plan", sid, "--json")
    assert shown.code == 0, shown.stderr
    assert json.loads(shown.stdout)["session"] == f"{db}#{sid}"  # the key is not dropped
    # without $OPENCODE_DB: $XDG_DATA_HOME/opencode/opencode.db, as opencode looks
    monkeypatch.delenv("OPENCODE_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(db.parent.parent))
    assert load(sid).session.ref.key == sid
    assert registry.find_by_id(sid[:12]) == SessionRef(db, sid)  # the start of an id
    monkeypatch.setenv("XDG_DATA_HOME", str(db.parent))  # nothing there
    listed = cli_main("plan", sid)
    assert listed.code == 2 and "no such file" in listed.stderr


def test_a_database_alone_lists_its_sessions_in_one_line(named, cli_main):  # noqa: F811
    db, sid = named
    shown = cli_main("plan", db)
    assert shown.code == 2
    (line,) = [x for x in shown.stderr.split("\n") if x.strip()]
    assert f"{db}: an opencode database of 2 sessions, not one" in line
    assert sid in line and other_session(db, sid) in line and f"{db}#" in line


def test_the_picker_lists_every_session_a_sub_agents_marked(named, monkeypatch):
    db, sid = named
    child = "ses_" + o.make_id("x", 5)[2:]  # a sub-agent's child session
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,"
        " time_created, time_updated) VALUES (?, 'global', ?, 's', '/w', 'child', '1', ?, ?)",
        (child, sid, o.START_MS * 2, o.START_MS * 2),
    )
    conn.close()
    monkeypatch.setenv("OPENCODE_DB", str(db))
    found = [info for info in registry.discover_all() if info.format == "opencode"]
    assert {info.ref.key for info in found} == {sid, other_session(db, sid), child}
    marks = {info.ref.key: info.marks for info in found}
    assert marks[child] == (discover.CHILD,) and marks[sid] == marks[other_session(db, sid)] == ()
    mine = next(info for info in found if info.ref.key == sid)
    assert mine.title == "Fix the parser" and mine.message_count == 7 and mine.updated
    assert str(mine.ref) == f"{db}#{sid}" and mine.path == db
    assert "1 opencode" not in registry.discovery_note(found) and "3 opencode sessions" in (
        registry.discovery_note(found)
    )


# --- the boundary ------------------------------------------------------------------------


def several_steps(tmp_path: Path) -> tuple[Path, str]:
    """One assistant row of two steps: a tool call and its result, then a reply."""
    db = o.OpencodeDb(tmp_path / "opencode.db")
    sid = db.session("steps")
    u = db.user(sid, "List the files.")
    db.assistant(
        sid,
        u,
        [
            o.step_start(),
            o.tool("call_1", "ls", "a.py\n"),
            o.step_finish("tool-calls"),
            o.step_start(),
            o.text("One file: a.py."),
            o.step_finish(),
        ],
    )
    for n in range(2):
        u = db.user(sid, f"Question {n}")
        db.assistant(sid, u, [o.step_start(), o.text(f"Answer {n}"), o.step_finish()])
    db.close()
    return db.path, sid


def test_a_boundary_inside_a_row_of_several_steps_is_refused_naming_the_nearest(
    tmp_path, cli_main  # noqa: F811
):
    db, sid = several_steps(tmp_path)
    ref = f"{db}#{sid}"
    messages = load(ref).session.messages
    assert [m.role for m in messages[:4]] == ["user", "assistant", "tool", "assistant"]
    before = session_rows(db, sid)
    config = config_file(tmp_path)
    # --up-to 3: the reply's second step (message 4) would be kept without its row's start
    done = cli_main("compact", ref, "--in-place", "--yes", "--up-to", "3", "--config", config)
    assert done.code == 2 and session_rows(db, sid) == before
    (line,) = done.error_lines  # one line, before any request
    assert "messages 3 and 4 are one opencode message row" in line and "--up-to 4" in line
    assert "<current_focus>" not in done.stdout  # no summary was asked for
    assert store.restore_points(ref) == []
    done = cli_main("compact", ref, "--in-place", "--yes", "--up-to", "4", "--config", config)
    assert done.code == 0, done.stderr
    after = load(ref).session.messages
    assert after[2:] == messages[4:]


def test_a_boundary_inside_what_opencodes_own_compaction_kept_is_refused(tmp_path):
    db = o.OpencodeDb(tmp_path / "opencode.db")
    sid = db.session("compacted before")
    first = db.user(sid, "Old question")
    db.assistant(sid, first, [o.step_start(), o.text("Old answer"), o.step_finish()])
    kept = db.user(sid, "Kept question")
    db.assistant(sid, kept, [o.step_start(), o.text("Kept answer"), o.step_finish()])
    db.compaction(sid, "OPENCODE'S OWN SUMMARY", tail_start_id=kept)
    for n in range(2):
        u = db.user(sid, f"Later {n}")
        db.assistant(sid, u, [o.step_start(), o.text(f"Later answer {n}"), o.step_finish()])
    db.close()
    job = CompactionJob.load(f"{db.path}#{sid}", ENABLED)
    texts = [m.text() for m in job.session.messages]
    assert texts[1:4] == ["OPENCODE'S OWN SUMMARY", "Kept question", "Kept answer"]
    prep = job.prepare(up_to=3)  # keep from "Kept answer": inside what opencode kept
    draft = job.draft(prep, asyncio.run(job.summarize(prep, ProviderConfig())))
    with pytest.raises(ApplyError, match=r"earlier compaction kept.*--up-to 4"):
        job.commit(draft, ProviderConfig())
    prep = job.prepare(up_to=4)  # from "Later 0": written, read back as planned
    draft = job.draft(prep, asyncio.run(job.summarize(prep, ProviderConfig())))
    job.commit(draft, ProviderConfig())
    again = load(f"{db.path}#{sid}").session.messages
    assert again == draft.compacted.messages and again[2:] == job.session.messages[4:]


# --- refusals ----------------------------------------------------------------------------


def set_session(db: Path, sid: str, column: str, value: object) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(f"UPDATE session SET {column} = ? WHERE id = ?", (value, sid))
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("column", "value", "words"),
    [
        ("revert", '{"messageID":"msg_x"}', "undo pending"),
        ("time_compacting", 1, "compacting this session now"),
    ],
)
def test_opencodes_own_pending_work_is_refused_before_any_request(
    named, tmp_path, cli_main, column, value, words  # noqa: F811
):
    db, sid = named
    set_session(db, sid, column, value)
    before = session_rows(db, sid)
    done = cli_main(
        "compact", f"{db}#{sid}", "--in-place", "--yes", "--config", config_file(tmp_path)
    )
    assert done.code == 2 and words in done.stderr and f"{db}#{sid}: not written" in done.stderr
    assert session_rows(db, sid) == before


def test_a_session_whose_last_reply_is_unfinished_is_refused_before_any_request(
    named, tmp_path, cli_main  # noqa: F811
):
    db, sid = named
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        mid, raw = conn.execute(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC",
            (sid,),
        ).fetchone()
        data = json.loads(raw)
        del data["time"]["completed"], data["finish"]  # opencode still answering
        conn.execute("UPDATE message SET data = ? WHERE id = ?", (o.to_json(data), mid))
    finally:
        conn.close()
    before = session_rows(db, sid)
    done = cli_main(
        "compact", f"{db}#{sid}", "--in-place", "--yes", "--config", config_file(tmp_path)
    )
    assert done.code == 2 and "last reply is unfinished" in done.stderr
    assert "<current_focus>" not in done.stdout  # no summary was asked for
    assert session_rows(db, sid) == before


def test_a_row_written_between_load_and_commit_is_refused_inside_the_write(named):
    db, sid = named
    other = other_session(db, sid)
    job = CompactionJob.load(f"{db}#{sid}", ENABLED)
    prep = job.prepare()
    draft = job.draft(prep, asyncio.run(job.summarize(prep, ProviderConfig())))
    opencode_appends(db, other, "another session's prompt")  # not a conflict
    opencode_appends(db, sid, "a prompt sent meanwhile")  # a conflict
    before = session_rows(db, sid)
    with pytest.raises(ApplyError, match=r"#ses_.*changed.*nothing was written"):
        job.commit(draft, ProviderConfig())
    assert session_rows(db, sid) == before and store.restore_points(f"{db}#{sid}") == []


def test_undo_is_per_session_and_refuses_once_opencode_wrote_after_us(
    named, tmp_path, cli_main  # noqa: F811
):
    db, sid = named
    other = other_session(db, sid)
    ref = f"{db}#{sid}"
    original, others = session_rows(db, sid), session_rows(db, other)
    assert len(others) == 6  # two messages, four parts
    config = config_file(tmp_path)
    done = cli_main("compact", ref, "--in-place", "--yes", "--config", config)
    assert done.code == 0, done.stderr
    assert session_rows(db, other) == others
    opencode_appends(db, other, "the other session goes on")
    undone = cli_main("restore", ref, "--yes")  # another session's turn is no conflict
    assert undone.code == 0, undone.stderr
    assert session_rows(db, sid) == original
    assert set(others) < set(session_rows(db, other))  # its new rows kept too
    others = session_rows(db, other)

    done = cli_main("compact", ref, "--in-place", "--yes", "--config", config)
    assert done.code == 0, done.stderr
    opencode_appends(db, sid, "resumed after our compaction")
    after_opencode = session_rows(db, sid)
    refused = cli_main("restore", ref, "--yes")
    assert refused.code == 2 and "changed since this tool wrote it" in refused.stderr
    assert session_rows(db, sid) == after_opencode
    forced = cli_main("restore", ref, "--yes", "--force")
    assert forced.code == 0, forced.stderr
    assert session_rows(db, sid) == original and session_rows(db, other) == others


def test_output_file_is_refused_in_one_line(named, tmp_path, cli_main):  # noqa: F811
    db, sid = named
    out = tmp_path / "copy.db"
    done = cli_main("compact", f"{db}#{sid}", "--output", out, "--config", config_file(tmp_path))
    assert done.code == 2 and not out.exists()
    assert len([x for x in done.stderr.split("\n") if x.strip()]) == 1
    assert "is not a file of its own" in done.stderr


def test_the_tui_state_tells_two_sessions_of_one_database_apart(named):
    db, sid = named
    state = ReviewState(config=ENABLED)
    state.load(f"{db}#{sid}")
    state.custom_instruction = "keep the parser details"
    state.load(f"{db}#{sid}")  # a reload of the same session keeps the choices
    assert state.custom_instruction == "keep the parser details"
    state.load(f"{db}#{other_session(db, sid)}")  # another session of the same file
    assert state.custom_instruction == ""


def test_the_format_is_asked_only_for_its_own_databases(tmp_path):
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with open(other, "rb") as fh:
        assert not FORMAT.recognise(other, fh.read(100))
    db, _ = several_steps(tmp_path)
    with open(db, "rb") as fh:
        assert FORMAT.recognise(db, fh.read(100))


async def test_the_picker_opens_the_session_chosen_not_the_database(named, monkeypatch):
    from kimi_compact_tui.tui.app import create_app
    from kimi_compact_tui.tui.screens.picker import PickerScreen, session_label
    from tests.tui_support import settle, wait_until

    db, sid = named
    monkeypatch.setenv("OPENCODE_DB", str(db))
    app = create_app(None, provider="offline")
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        entries = app.screen.entries
        assert [e.ref.key for e in entries[:2]] == [other_session(db, sid), sid]  # newest first
        assert session_label(entries[1]).plain.startswith("opencode")
        await pilot.press("down", "enter")  # the second row: our session
        await wait_until(pilot, lambda: app.state.session is not None, "the session opened")
        session = app.state.session
        assert session is not None and session.ref.key == sid and len(session.messages) == 8


def test_every_command_names_the_session_with_its_key(named, tmp_path, cli_main):  # noqa: F811
    """A database holds many sessions: the file alone names none of them."""
    db, sid = named
    ref = f"{db}#{sid}"
    config = config_file(tmp_path)
    for argv in (
        ("plan", ref, "--json"),
        ("preview", ref, "--json", "--config", config),
        ("compact", ref, "--json", "--config", config),
    ):
        done = cli_main(*argv)
        assert done.code == 0, (argv, done.stderr)
        assert json.loads(done.stdout)["session"] == ref, argv
    beyond = cli_main("plan", ref, "--up-to", "99")
    assert beyond.code == 2 and beyond.stderr.count(f"{ref}: --up-to 99") == 1


@pytest.mark.parametrize(
    ("column", "value", "words"),
    [
        ("revert", '{"messageID":"msg_x"}', "undo pending"),
        ("time_compacting", 1, "compacting this session now"),
    ],
)
def test_a_restore_while_opencode_is_busy_is_refused_even_forced(
    named, tmp_path, cli_main, column, value, words  # noqa: F811
):
    """Putting rows back while opencode compacts or has an undo pending would leave
    it pointing at rows that are gone (a restore used to go through, --force or not)."""
    db, sid = named
    ref = f"{db}#{sid}"
    done = cli_main("compact", ref, "--in-place", "--yes", "--config", config_file(tmp_path))
    assert done.code == 0, done.stderr
    set_session(db, sid, column, value)
    before = session_rows(db, sid)
    for force in ((), ("--force",)):
        refused = cli_main("restore", ref, "--yes", *force)
        assert refused.code == 2 and words in refused.stderr, refused.stderr
        assert session_rows(db, sid) == before


def test_a_summary_of_an_opencode_session_can_be_revised(named):
    """The revision guard reads the session's own rows (it read the whole database,
    which is no session, and refused every revision as 'changed on disk')."""
    from kimi_compact_tui.job.revise import RevisionOrigin, origin_refusal

    db, sid = named
    job = CompactionJob.load(f"{db}#{sid}", ENABLED, for_write=True)
    prep = job.prepare()
    origin = RevisionOrigin.of(prep, job.fingerprint)
    assert origin_refusal(origin, prep, job.fingerprint, on_disk=True) is None
    opencode_appends(db, sid, "a prompt sent meanwhile")
    refused = origin_refusal(origin, prep, job.fingerprint, on_disk=True)
    assert refused is not None and f"{db}#{sid}" in refused.message


def test_a_database_sessions_restore_point_has_its_own_time(
    named, tmp_path, cli_main  # noqa: F811
):
    """A session's rows have no file time: its backup file was stamped 1970-01-01
    (restore --list and the TUI showed that date)."""
    db, sid = named
    done = cli_main(
        "compact", f"{db}#{sid}", "--in-place", "--yes", "--config", config_file(tmp_path)
    )
    assert done.code == 0, done.stderr
    (point,) = store.restore_points(f"{db}#{sid}")
    assert point.mtime_ns > 1_000_000_000 * 10**9 and "1970" not in point.describe()

"""The opencode reader (``formats/opencode/``, not registered yet): the database opened
read-only in one snapshot, the checked schema, a session's rows as the messages
opencode sends on resume, the picker's list and the compaction rows we build.

The reference databases opencode itself wrote (``../shared/reference/agents/
opencode-{before,after}-compact.db``) are read from copies (with their ``-wal`` and
``-shm``); the real opencode's proof is tests/agents/test_opencode_read.py. The
factory databases cover what a short run does not produce.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.database import looks_like_database
from kimi_compact_tui.formats.opencode.db import open_snapshot, read_session
from kimi_compact_tui.formats.opencode.discover import ARCHIVED, CHILD, database_path, list_sessions
from kimi_compact_tui.formats.opencode.history import (
    CLEARED_PART,
    FRAMING_PART,
    INTERRUPTED_PART,
    resume_history,
)
from kimi_compact_tui.formats.opencode.plugin import FORMAT
from kimi_compact_tui.formats.opencode.rows import build_compaction, export_rows, id_stamp
from kimi_compact_tui.formats.storage import SessionRef
from tests.factories.opencode import (
    OpencodeDb,
    reasoning,
    step_finish,
    step_start,
    text,
    tool,
)

# ../shared/reference beside the repository (or beside the folder of worktrees)
REFERENCE = next(
    (
        p / "shared" / "reference" / "agents"
        for p in Path(__file__).resolve().parents[3:5]
        if (p / "shared" / "reference" / "agents").is_dir()
    ),
    Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "agents",
)
REF_SESSION = "ses_dcb8e084bffea5CO74b5xPbgZk"


def _reference(tmp_path: Path, stem: str) -> Path:
    """A copy of a reference database with its -wal and -shm (never opened in place)."""
    source = REFERENCE / f"{stem}.db"
    if not source.is_file():
        pytest.skip(f"reference file {source} is absent (the shared reference data is not here)")
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{source}{suffix}").is_file():
            shutil.copyfile(f"{source}{suffix}", tmp_path / f"{stem}.db{suffix}")
    return tmp_path / f"{stem}.db"


def _texts(history) -> list[str]:
    return [m.text() for m in history.messages]


# --- the reference databases -------------------------------------------------------------


def test_the_reference_session_before_compaction_reads_in_order(tmp_path):
    history = resume_history(
        read_session(_reference(tmp_path, "opencode-before-compact"), REF_SESSION)
    )
    roles = [m.role for m in history.messages]
    assert roles == [
        "user", "assistant", "tool", "assistant", "user", "assistant",
        "user", "assistant", "tool", "assistant", "user", "assistant",
    ]  # fmt: skip
    assert "MARK-U1" in history.messages[0].text() and "MARK-U4" in history.messages[10].text()
    call = history.messages[1].tool_calls[0]
    assert call["function"]["name"] == "bash" and history.messages[2].tool_call_id == call["id"]
    assert history.messages[2].content == "MARK-T1\n"
    assert history.compaction_id is None
    # A row holding a tool call and its result gives two messages: a boundary only at the first.
    assert [o.row_start for o in history.origins[1:3]] == [True, False]
    assert history.safe_boundary(2) == 1 and history.boundary_row(2) is None


def test_the_reference_session_after_opencodes_compaction_reads_as_opencode_resumes(tmp_path):
    before = resume_history(
        read_session(_reference(tmp_path, "opencode-before-compact"), REF_SESSION)
    )
    after = resume_history(
        read_session(_reference(tmp_path, "opencode-after-compact"), REF_SESSION)
    )
    framing, summary = after.messages[:2]
    assert framing.role == "user" and framing.parts() == [{"type": FRAMING_PART, "auto": False}]
    assert framing.text() == "" and framing.data["opencode"] == {"framing": True}
    assert summary.role == "assistant" and summary.text().startswith("AGENT-OWN-SUMMARY")
    assert summary.data["opencode"] == {"summary": True}
    # Then the messages from tail_start_id (the third prompt) on, as before the compaction.
    assert list(after.messages[2:]) == list(before.messages[6:])
    assert after.tail_start_id == after.origins[2].message_id
    assert after.compaction_id == after.origins[0].message_id


def test_reading_leaves_the_database_and_its_wal_as_they_were(tmp_path):
    db = _reference(tmp_path, "opencode-after-compact")

    def digests() -> dict[str, str]:
        # the reference may come with its -wal or checkpointed without one: either way,
        # reading changes neither the database nor a -wal that was there
        return {
            s: hashlib.sha256(Path(f"{db}{s}").read_bytes()).hexdigest()
            for s in ("", "-wal")
            if Path(f"{db}{s}").exists()
        }

    digest = digests()
    read_session(db, REF_SESSION)
    list_sessions(db)
    after = digests()
    if "-wal" not in digest and "-wal" in after:  # SQLite's WAL mode opens one: it holds nothing
        assert Path(f"{db}-wal").stat().st_size == 0
        del after["-wal"]
    assert after == digest


# --- opening and the schema --------------------------------------------------------------


def test_a_read_sees_one_snapshot_while_another_process_writes(tmp_path):
    db = OpencodeDb(tmp_path / "opencode.db")
    sid = db.session()
    db.user(sid, "first")
    with open_snapshot(db.path) as conn:
        count = conn.execute("SELECT count(*) FROM message").fetchone()[0]
        db.user(sid, "written meanwhile")  # opencode holds no long lock: this commits
        assert conn.execute("SELECT count(*) FROM message").fetchone()[0] == count == 1
    assert len(read_session(db.path, sid).messages) == 2


def test_an_unchecked_schema_is_refused_in_one_line(tmp_path):
    db = OpencodeDb(tmp_path / "opencode.db")
    sid = db.session()
    db.conn.execute("INSERT INTO migration VALUES ('29990101000000_future', 1)")
    with pytest.raises(SessionFormatError) as newer:
        read_session(db.path, sid)
    assert "29990101000000_future" in str(newer.value) and "\n" not in str(newer.value)
    assert str(db.path) in str(newer.value)

    older = OpencodeDb(tmp_path / "older.db", migrations=("20260127222353_familiar_lady_ursula",))
    with pytest.raises(SessionFormatError, match="has not been applied"):
        read_session(older.path, older.session())


def test_not_an_opencode_database_is_refused_and_nothing_is_made(tmp_path):
    plain = tmp_path / "plain.db"
    sqlite3.connect(plain).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(SessionFormatError, match="no migration table"):
        read_session(plain, "ses_x")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(SessionFormatError, match="not a readable opencode database"):
        read_session(junk, "ses_x")
    missing = tmp_path / "missing.db"
    with pytest.raises(SessionFormatError, match="no opencode database"):
        read_session(missing, "ses_x")
    assert not missing.exists()


def test_a_row_that_is_not_json_is_named(tmp_path):
    db = OpencodeDb(tmp_path / "opencode.db")
    sid = db.session()
    mid = db.user(sid, "hello")
    db.conn.execute("UPDATE message SET data = '[1' WHERE id = ?", (mid,))
    with pytest.raises(SessionFormatError, match=f"message {mid}: its data is not a JSON object"):
        read_session(db.path, sid)
    with pytest.raises(SessionFormatError, match="no opencode session 'ses_nope'"):
        read_session(db.path, "ses_nope")


# --- messages as opencode sends them -----------------------------------------------------


def _session(tmp_path: Path, name: str = "opencode.db") -> tuple[OpencodeDb, str, list[str]]:
    db = OpencodeDb(tmp_path / name)
    sid = db.session()
    users = []
    for n in range(1, 4):
        u = db.user(sid, f"MARK-U{n}")
        users.append(u)
        db.assistant(sid, u, [step_start(), text(f"run {n}"), tool(f"c{n}", f"echo {n}", f"{n}\n")])
        db.assistant(sid, u, [step_start(), text(f"MARK-A{n}"), step_finish()])
    return db, sid, users


def test_pruned_errored_and_unfinished_tool_outputs_as_opencode_sends_them(tmp_path):
    db = OpencodeDb(tmp_path / "opencode.db")
    sid = db.session()
    u = db.user(sid, "go")
    db.assistant(
        sid,
        u,
        [
            step_start(),
            tool("c1", "cat big", "BIG OUTPUT", compacted=True),
            tool("c2", "false", status="error", error="exit 1"),
            tool("c3", "sleep 9", status="running"),
        ],
    )
    messages = resume_history(read_session(db.path, sid)).messages
    assert [m.role for m in messages] == ["user", "assistant", "tool", "tool", "tool"]
    assert [c["id"] for c in messages[1].tool_calls] == ["c1", "c2", "c3"]
    assert messages[2].content == [{"type": CLEARED_PART}]
    assert "BIG OUTPUT" not in str([m.data for m in messages])
    assert messages[3].content == "exit 1"
    assert messages[4].content == [{"type": INTERRUPTED_PART}]


def test_steps_reasoning_ignored_text_and_failed_replies(tmp_path):
    db = OpencodeDb(tmp_path / "opencode.db")
    sid = db.session()
    u = db.user(sid, parts=[text("shown"), text("hidden", ignored=True), text("")])
    db.assistant(
        sid,
        u,
        [
            step_start(),
            reasoning("MARK-R think"),
            tool("c1", "echo a", "a\n"),
            step_start(),
            text("after the tool"),
        ],
    )
    db.assistant(sid, u, [step_start(), text("failed")], error={"name": "APIError", "data": {}})
    db.assistant(
        sid, u, [step_start(), text("partial")], error={"name": "MessageAbortedError", "data": {}}
    )
    db.assistant(sid, u, [step_start(), step_finish()])  # nothing to send
    messages = resume_history(read_session(db.path, sid)).messages
    assert [(m.role, m.text()) for m in messages] == [
        ("user", "shown"),
        ("assistant", ""),
        ("tool", "a\n"),
        ("assistant", "after the tool"),
        ("assistant", "partial"),
    ]
    assert messages[1].parts() == [{"type": "think", "think": "MARK-R think"}]
    assert messages[1].tool_calls[0]["function"]["arguments"] == '{"command":"echo a"}'


def test_a_compaction_whose_tail_names_no_message_sends_the_whole_session(tmp_path):
    db, sid, _ = _session(tmp_path)
    full = resume_history(read_session(db.path, sid))
    db.compaction(sid, "S-lost", "msg_000000000000nothingthere")
    lost = resume_history(read_session(db.path, sid))
    assert lost.compaction_id is None
    assert _texts(lost) == _texts(full) + ["", "S-lost"]


def test_without_a_tail_only_the_compaction_on_is_sent_and_the_latest_one_wins(tmp_path):
    db, sid, users = _session(tmp_path)
    db.compaction(sid, "S-first", None)
    u4 = db.user(sid, "MARK-U4")
    db.assistant(sid, u4, [step_start(), text("MARK-A4")])
    first = resume_history(read_session(db.path, sid))
    assert _texts(first) == ["", "S-first", "MARK-U4", "MARK-A4"]
    # A second compaction keeping from MARK-U4: its pair first, then MARK-U4 on.
    db.compaction(sid, "S-second", u4)
    second = resume_history(read_session(db.path, sid))
    assert _texts(second) == ["", "S-second", "MARK-U4", "MARK-A4"]
    # A tail reaching back before the first compaction keeps that pair as messages.
    db.compaction(sid, "S-third", users[2])
    third = resume_history(read_session(db.path, sid))
    assert _texts(third)[:3] == ["", "S-third", "MARK-U3"]
    assert "S-first" in _texts(third) and "S-second" in _texts(third)


def test_a_pending_undo_is_read_as_opencode_applies_it_before_the_next_prompt(tmp_path):
    db, sid, users = _session(tmp_path)
    full = resume_history(read_session(db.path, sid))
    db.conn.execute(
        "UPDATE session SET revert = ? WHERE id = ?", (f'{{"messageID":"{users[1]}"}}', sid)
    )
    assert _texts(resume_history(read_session(db.path, sid))) == _texts(full)[:4]
    # With a part: that message is kept up to the part; the ones after it go.
    answer = read_session(db.path, sid).messages[4]
    revert = f'{{"messageID":"{answer.id}","partID":"{answer.parts[2].id}"}}'
    db.conn.execute("UPDATE session SET revert = ? WHERE id = ?", (revert, sid))
    texts = _texts(resume_history(read_session(db.path, sid)))
    assert texts == _texts(full)[:5] + ["run 2"]
    # A revert naming no message changes nothing.
    db.conn.execute('UPDATE session SET revert = \'{"messageID":"msg_x"}\' WHERE id = ?', (sid,))
    assert _texts(resume_history(read_session(db.path, sid))) == _texts(full)


# --- discovery ---------------------------------------------------------------------------


def test_every_session_is_listed_a_child_and_an_archived_one_marked(tmp_path):
    db = OpencodeDb(tmp_path / "opencode.db")
    old = db.session("Old one")
    db.user(old, "a")
    parent = db.session("Parent")
    child = db.session("Child of a sub-agent", parent=parent)
    db.user(child, "b")
    db.user(parent, "c")
    db.user(parent, "d")
    db.session("Archived", archived=True)
    listed = list_sessions(db.path)
    assert [(s.title, s.message_count, s.marks) for s in listed] == [
        ("Archived", 0, (ARCHIVED,)),
        ("Parent", 2, ()),
        ("Child of a sub-agent", 1, (CHILD,)),
        ("Old one", 1, ()),
    ]
    assert listed[2].session_id == child and listed[2].parent_id == parent
    assert listed[1].updated >= listed[3].updated


def test_the_database_is_found_as_opencode_finds_it(tmp_path):
    home = tmp_path / "home"
    assert database_path({}, home) == home / ".local/share/opencode/opencode.db"
    assert database_path({"XDG_DATA_HOME": "/x"}, home) == Path("/x/opencode/opencode.db")
    assert database_path({"OPENCODE_DB": "/y/o.db", "XDG_DATA_HOME": "/x"}, home) == Path("/y/o.db")
    (tmp_path / "data" / "opencode").mkdir(parents=True)
    db = OpencodeDb(tmp_path / "data" / "opencode" / "opencode.db")
    sid = db.session()
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    assert FORMAT.find_session(sid, env, home) == SessionRef(db.path, sid)
    assert FORMAT.find_session("ses_" + "0" * 12 + "a" * 14, env, home) is None
    assert FORMAT.find_session(sid, {}, home) is None
    assert looks_like_database(db.path) and not looks_like_database(tmp_path)


# --- the compaction rows -----------------------------------------------------------------


def test_compaction_rows_come_after_every_row_even_with_a_clock_behind(tmp_path):
    db, sid, users = _session(tmp_path)
    rows = read_session(db.path, sid)
    built = build_compaction(rows, "OUR SUMMARY", users[2], now_ms=1000, rng=random.Random(1))
    newest_time = max(p.time_created for m in rows.messages for p in m.parts)
    newest_stamp = max(id_stamp(p.id) or 0 for m in rows.messages for p in m.parts)
    for row in built.messages + built.parts:
        assert row["time_created"] > newest_time
        assert (id_stamp(str(row["id"])) or 0) > newest_stamp
    assert built.messages[0]["time_created"] < built.messages[1]["time_created"]
    for rows_of in (built.messages, built.parts):
        stamps = [id_stamp(str(r["id"])) or 0 for r in rows_of]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    with db.conn:
        db.conn.execute("BEGIN")
        for sql, params in built.statements():
            db.conn.execute(sql, params)
    history = resume_history(read_session(db.path, sid))
    assert history.compaction_id == built.user_id
    assert _texts(history)[:3] == ["", "OUR SUMMARY", "MARK-U3"]
    assert len(history.messages) == 2 + 4  # MARK-U3, its call, the result, MARK-A3


def test_compaction_rows_refuse_a_tail_that_names_no_message(tmp_path):
    db, sid, _ = _session(tmp_path)
    with pytest.raises(ValueError, match="names no message"):
        build_compaction(read_session(db.path, sid), "S", "msg_000000000000nothingthere")


def test_undo_removes_exactly_our_rows_and_the_export_is_the_session_alone(tmp_path):
    db, sid, users = _session(tmp_path)
    other = db.session("Other")
    db.user(other, "MARK-OTHER")
    rows = read_session(db.path, sid)
    exported = export_rows(rows)
    assert exported["session_id"] == sid and "MARK-OTHER" not in json.dumps(exported)
    assert [m["id"] for m in exported["messages"]] == [m.id for m in rows.messages]
    assert exported["messages"][0]["parts"][0]["data"] == rows.messages[0].parts[0].raw
    built = build_compaction(rows, "S", users[1])
    with db.conn:
        db.conn.execute("BEGIN")
        for sql, params in built.statements():
            db.conn.execute(sql, params)
    assert read_session(db.path, sid).fingerprint() != rows.fingerprint()
    with db.conn:
        db.conn.execute("BEGIN")
        for sql, params in built.undo_statements():
            db.conn.execute(sql, params)
    assert export_rows(read_session(db.path, sid)) == exported

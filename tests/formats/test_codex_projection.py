"""Codex's writer lock and UI projection beside a rollout (``formats/codex/projection.py``),
on files laid out as Codex 0.171 lays them out. The real Codex checks these facts in
``tests/agents/test_codex_projection.py``."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from pathlib import Path

import pytest

from kimi_compact_tui.formats.codex import projection, write_refusal
from kimi_compact_tui.formats.codex.projection import (
    after_restore,
    codex_home_of,
    codex_is_running,
    reset_projection,
    unchanged_prefix,
)
from kimi_compact_tui.formats.storage import SessionRef
from tests.factories import run_cli
from tests.factories.codex import NAME, SID, conversation, parse

OTHER = "01a2323e-0000-7451-9203-731bea4ec5dd"


def _projection_db(home: Path, offset: int = 5000) -> Path:
    """A thread_history_1.sqlite with the four per-session tables (their key columns) and
    rows for our session and another."""
    db = home / projection.PROJECTION_DB
    con = sqlite3.connect(db)
    with con:
        con.execute("pragma journal_mode = wal")
        con.execute(
            "create table thread_history_projection_state (thread_id text primary key, "
            "next_rollout_byte_offset integer not null, next_rollout_ordinal integer not null)"
        )
        con.execute("create table thread_turns (thread_id text, turn_id text)")
        con.execute("create table thread_items (thread_id text, item_id text)")
        con.execute("create table thread_realtime_items (thread_id text, item_id text)")
        for sid, off in ((SID, offset), (OTHER, 77)):
            con.execute("insert into thread_history_projection_state values (?, ?, 9)", (sid, off))
            for table in ("thread_turns", "thread_items", "thread_realtime_items"):
                con.execute(f"insert into {table} values (?, 'x')", (sid,))
    con.close()
    return db


def _rows(db: Path) -> dict[str, list[str]]:
    con = sqlite3.connect(db)
    try:
        return {
            t: sorted(r[0] for r in con.execute(f"select thread_id from {t}"))
            for t in projection.TABLES
        }
    finally:
        con.close()


def _rollout(home: Path) -> Path:
    return conversation().write(home)  # home/sessions/2026/12/01/rollout-…


def _hold_lock(home: Path, sid: str = SID) -> int:
    """Hold the session's writer lock as a running Codex does (flock on its own file)."""
    folder = home / projection.LOCK_FOLDER
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / f"{sid}.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_codex_home_of_a_live_an_archived_and_a_loose_rollout(tmp_path):
    assert codex_home_of(tmp_path / "sessions" / "2026" / "12" / "01" / NAME) == tmp_path
    assert codex_home_of(tmp_path / "archived_sessions" / NAME) == tmp_path
    assert codex_home_of(tmp_path / "elsewhere" / NAME) is None
    assert codex_home_of(Path(NAME)) is None


@pytest.mark.parametrize(
    "before,after,shared",
    [
        (b"", b"", 0),
        (b"abc", b"abc", 3),
        (b"abc", b"abcdef", 3),
        (b"abcdef", b"abc", 3),
        (b"abXdef", b"abYdef", 2),
        (b"x" * 1000 + b"1", b"x" * 1000 + b"2", 1000),
        (b"1" + b"x" * 1000, b"2" + b"x" * 1000, 0),
    ],
)
def test_unchanged_prefix(before, after, shared):
    assert unchanged_prefix(before, after) == shared


def test_a_projection_read_past_the_kept_bytes_is_forgotten_for_that_session_only(tmp_path):
    rollout = _rollout(tmp_path)
    db = _projection_db(tmp_path, offset=5000)
    assert reset_projection(rollout, kept=4999) is None
    assert _rows(db) == {t: [OTHER] for t in projection.TABLES}


def test_a_projection_within_the_kept_bytes_is_left_alone(tmp_path):
    rollout = _rollout(tmp_path)
    db = _projection_db(tmp_path, offset=5000)
    before = _rows(db)
    assert reset_projection(rollout, kept=5000) is None
    assert _rows(db) == before == {t: sorted([SID, OTHER]) for t in projection.TABLES}


def test_no_database_or_no_codex_home_changes_nothing(tmp_path):
    rollout = _rollout(tmp_path)
    assert reset_projection(rollout, 0) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions"]  # nothing created
    loose = tmp_path / "loose" / NAME
    loose.parent.mkdir()
    loose.write_bytes(b"")
    assert reset_projection(loose, 0) is None


def test_an_unknown_schema_is_not_touched_and_said(tmp_path):
    rollout = _rollout(tmp_path)
    db = tmp_path / projection.PROJECTION_DB
    con = sqlite3.connect(db)
    with con:
        con.execute("create table thread_history_projection_state (id text, offset integer)")
        con.execute("insert into thread_history_projection_state values (?, 9999)", (SID,))
    con.close()
    warning = reset_projection(rollout, 0)
    assert warning is not None and str(db) in warning and "not the ones" in warning
    con = sqlite3.connect(db)
    assert con.execute("select count(*) from thread_history_projection_state").fetchone() == (1,)
    con.close()


def test_a_busy_database_is_said_and_left_as_it_was(tmp_path, monkeypatch):
    monkeypatch.setattr(projection, "BUSY_TIMEOUT", 0.05)
    rollout = _rollout(tmp_path)
    db = _projection_db(tmp_path)
    before = _rows(db)
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("begin immediate")  # Codex in the middle of a write
    try:
        warning = reset_projection(rollout, 0)
    finally:
        writer.execute("rollback")
        writer.close()
    assert warning is not None and "not reset" in warning and "locked" in warning
    assert _rows(db) == before


def test_a_running_codex_keeps_its_projection_and_the_reset_says_so(tmp_path):
    rollout = _rollout(tmp_path)
    db = _projection_db(tmp_path)
    before = _rows(db)
    fd = _hold_lock(tmp_path)
    try:
        assert codex_is_running(rollout)
        warning = reset_projection(rollout, 0)
    finally:
        os.close(fd)
    assert warning is not None and "Codex is running on this session" in warning
    assert _rows(db) == before
    assert not codex_is_running(rollout)  # released: Codex has exited
    assert reset_projection(rollout, 0) is None and _rows(db)[projection.STATE_TABLE] == [OTHER]


def test_a_lock_file_left_behind_unlocked_is_not_a_running_codex(tmp_path):
    rollout = _rollout(tmp_path)
    os.close(_hold_lock(tmp_path))  # a killed Codex leaves the file, unlocked
    assert not codex_is_running(rollout)
    os.close(_hold_lock(tmp_path, OTHER))
    assert not codex_is_running(rollout)


def test_after_restore_keeps_what_the_restore_left_unchanged(tmp_path):
    rollout = _rollout(tmp_path)
    data = rollout.read_bytes()
    db = _projection_db(tmp_path, offset=len(data))
    # an undo that cuts off what Codex never read: nothing to reset
    assert after_restore(rollout, data + b"ours\n", data) == []
    assert _rows(db)[projection.STATE_TABLE] == sorted([SID, OTHER])
    # a restore that replaces bytes Codex read: reset
    changed = data[:100] + b"X" + data[101:]
    assert after_restore(rollout, changed, data) == []
    assert _rows(db)[projection.STATE_TABLE] == [OTHER]


def test_a_compaction_is_refused_while_codex_holds_the_session(tmp_path):
    rollout = _rollout(tmp_path)
    original = rollout.read_bytes()
    session = parse(original, rollout.name)
    session.ref = SessionRef(rollout)
    fd = _hold_lock(tmp_path)
    try:
        why = write_refusal(session)
        assert why is not None and "Codex is running on this session" in why
        result = run_cli(
            "compact",
            str(rollout),
            "--in-place",
            "--yes",
            "--provider",
            "offline",
            env={"CODEX_HOME": str(tmp_path)},
        )
    finally:
        os.close(fd)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(rollout) in lines[0] and "Codex is running" in lines[0]
    assert rollout.read_bytes() == original
    assert write_refusal(session) is None

"""opencode databases built for tests, in the shapes opencode 1.18.33 writes: one SQLite
database (WAL mode) for every session, its ``migration`` table naming the schema,
``session``, ``message`` and ``part`` rows whose ``data`` is JSON without the ids,
and ascending ids. The real agent's databases are in tests/agents (the proof);
these cover cases a short run does not produce (pruned outputs, errors, nested
compactions, child sessions, other schemas).

    db = OpencodeDb(tmp_path / "opencode.db")
    sid = db.session("Title")
    u = db.user(sid, "MARK-U1 hello")
    db.assistant(sid, u, [step_start(), text("hi"), tool("c1", "echo x", "x\\n")])
    db.compaction(sid, "the summary", tail_start_id=u)
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.opencode.rows import make_id, to_json
from kimi_compact_tui.formats.opencode.schema import CHECKED_MIGRATIONS

START_MS = 1_800_000_000_000
PROVIDER = {"providerID": "fake", "modelID": "fake-model"}

# The tables the reader and the row builder touch, with opencode's columns.
SCHEMA = """
CREATE TABLE migration (id TEXT PRIMARY KEY, time_completed INTEGER NOT NULL);
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL, sandboxes TEXT NOT NULL);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT,
    parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL,
    version TEXT NOT NULL, revert TEXT, agent TEXT, model TEXT, time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE event_sequence (aggregate_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, owner_id TEXT);
CREATE TABLE event (id TEXT PRIMARY KEY, aggregate_id TEXT NOT NULL, seq INTEGER NOT NULL,
    type TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE todo (session_id TEXT NOT NULL, content TEXT NOT NULL, status TEXT NOT NULL,
    priority TEXT NOT NULL, position INTEGER NOT NULL, time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL, PRIMARY KEY (session_id, position));
"""


def step_start() -> dict[str, Any]:
    return {"type": "step-start"}


def step_finish(reason: str = "stop") -> dict[str, Any]:
    tokens = {"total": 0, "input": 0, "output": 0, "reasoning": 0, "cache": {"write": 0, "read": 0}}
    return {"reason": reason, "type": "step-finish", "tokens": tokens, "cost": 0}


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": value, **extra}


def reasoning(value: str) -> dict[str, Any]:
    return {"type": "reasoning", "text": value}


def tool(
    call_id: str,
    command: str,
    output: str | None = None,
    *,
    status: str = "completed",
    compacted: bool = False,
    error: str | None = None,
) -> dict[str, Any]:
    """A ``bash`` tool part: completed with ``output``, or ``error``, or unfinished."""
    state: dict[str, Any] = {"status": status, "input": {"command": command}}
    if status == "completed":
        times: dict[str, Any] = {"start": 1, "end": 2}
        if compacted:
            times["compacted"] = 3
        state.update(output=output or "", metadata={}, title=command, time=times)
    elif status == "error":
        state.update(error=error or "failed", time={"start": 1, "end": 2})
    return {"type": "tool", "tool": "bash", "callID": call_id, "state": state}


class OpencodeDb:
    """A database like opencode's, written row by row with ascending ids and times."""

    def __init__(self, path: Path, migrations: tuple[str, ...] = CHECKED_MIGRATIONS) -> None:
        self.path = Path(path)
        self.clock = START_MS
        self.rng = random.Random(7)
        self.conn = sqlite3.connect(self.path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(SCHEMA)
        self.conn.executemany(
            "INSERT INTO migration VALUES (?, ?)", [(m, START_MS) for m in migrations]
        )
        self.conn.execute(
            "INSERT INTO project VALUES ('global', '/', ?, ?, '[]')", (START_MS, START_MS)
        )

    def close(self) -> None:
        self.conn.close()

    def tick(self) -> int:
        self.clock += 7
        return self.clock

    def new_id(self, prefix: str) -> str:
        return make_id(prefix, (self.tick() * 4096) % (1 << 48), self.rng)

    def session(
        self,
        title: str = "A session",
        *,
        parent: str | None = None,
        directory: str = "/work",
        archived: bool = False,
        sid: str | None = None,
    ) -> str:
        now = self.tick()
        if sid is None:
            sid = "ses_" + make_id("x", (1 << 48) - 1 - (now * 4096) % (1 << 48), self.rng)[2:]
        self.conn.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,"
            " agent, time_created, time_updated, time_archived)"
            " VALUES (?, 'global', ?, 'slug', ?, ?, '1.18.33', 'build', ?, ?, ?)",
            (sid, parent, directory, title, now, now, now if archived else None),
        )
        return sid

    def message(self, sid: str, data: dict[str, Any], parts: list[dict[str, Any]]) -> str:
        now = self.tick()
        mid = self.new_id("msg")
        self.conn.execute(
            "INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, now, now, to_json(data))
        )
        for part in parts:
            t = self.tick()
            self.conn.execute(
                "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                (self.new_id("prt"), mid, sid, t, t, to_json(part)),
            )
        self.conn.execute("UPDATE session SET time_updated = ? WHERE id = ?", (self.clock, sid))
        return mid

    def user(self, sid: str, *texts: str, parts: list[dict[str, Any]] | None = None) -> str:
        data = {
            "role": "user",
            "time": {"created": self.clock},
            "agent": "build",
            "model": PROVIDER,
        }
        return self.message(sid, data, parts if parts is not None else [text(t) for t in texts])

    def assistant(self, sid: str, parent: str, parts: list[dict[str, Any]], **info: Any) -> str:
        data: dict[str, Any] = {
            "parentID": parent,
            "role": "assistant",
            "mode": "build",
            "agent": "build",
            "path": {"cwd": "/work", "root": "/"},
            "cost": 0,
            "modelID": PROVIDER["modelID"],
            "providerID": PROVIDER["providerID"],
            "time": {"created": self.clock, "completed": self.clock + 1},
            "finish": "stop",
        }
        data.update(info)
        return self.message(sid, data, parts)

    def todos(self, sid: str, *items: tuple[str, str]) -> None:
        """The session's todo list as opencode's ``todowrite`` stores it: the whole list
        replaced, one ``todo`` row per item in order (content, status)."""
        self.conn.execute("DELETE FROM todo WHERE session_id = ?", (sid,))
        for position, (content, status) in enumerate(items):
            now = self.tick()
            self.conn.execute(
                "INSERT INTO todo VALUES (?, ?, ?, 'medium', ?, ?, ?)",
                (sid, content, status, position, now, now),
            )

    def compaction(
        self,
        sid: str,
        summary: str,
        tail_start_id: str | None,
        *,
        finish: bool = True,
    ) -> tuple[str, str]:
        """opencode's own compaction: the user row with its part, then the summary row."""
        part: dict[str, Any] = {"type": "compaction", "auto": False}
        if tail_start_id is not None:
            part["tail_start_id"] = tail_start_id
        uid = self.user(sid, parts=[part])
        info: dict[str, Any] = {"mode": "compaction", "agent": "compaction", "summary": True}
        if not finish:
            info["finish"] = None
        aid = self.assistant(sid, uid, [step_start(), text(summary), step_finish()], **info)
        if not finish:
            data = json.loads(
                self.conn.execute("SELECT data FROM message WHERE id = ?", (aid,)).fetchone()[0]
            )
            data.pop("finish", None)
            self.conn.execute("UPDATE message SET data = ? WHERE id = ?", (to_json(data), aid))
        return uid, aid

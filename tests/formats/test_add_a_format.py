"""``docs/ARCHITECTURE.md``'s "Add a session format", both recipes followed literally.

1. A new agent whose sessions are files of JSON lines (a ``.chat`` file: one
   ``{"role": …, "text": …}`` line per message): one class on
   ``formats.base.FileFormat`` (what would be its package) and one line in the
   registry's ``FORMATS``; nothing else in the package is touched. The whole
   review then works on it: detection, the one load path, the plan and the
   request, a summary, the write through the job and the store (with the
   format's own restore folder), the audit record, undo, the diff, retention,
   and the CLI's ``plan`` and ``compact``.
2. A new agent that keeps its sessions as rows in one SQLite database (WAL mode,
   several sessions in one file), as opencode does: one class on
   ``formats.database.DatabaseFormat`` (its tables, where the agent keeps the
   database, its sessions, how a session's rows are read) with a transactional
   strategy on its schema (``formats/sqlite.py``), and one line. It is found by
   id and by a database holding one session, written, refused on a conflict and
   undone through ``plan``, ``compact --in-place --yes``, ``restore`` and the
   job; its backup is that session's own rows, so undoing one session never
   undoes another's writes.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from kimi_compact_tui import store
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.diff import diff_sessions
from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats import load, registry
from kimi_compact_tui.formats.base import FileFormat, Session, SessionMeta, WriteOp
from kimi_compact_tui.formats.database import DatabaseFormat, Listed
from kimi_compact_tui.formats.sqlite import SqliteTransactional
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.formats.strategies import BackupReplace
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.retention import retention_report
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories import FORMAT_WRITERS
from tests.formats import test_every_format

ENABLED = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})


class ChatFormat(FileFormat):
    """Step 1: the class, its attributes and the required hooks."""

    name = "test-chat"
    label = "test .chat transcript"
    agent = "the test agent"
    storage = BackupReplace()
    write_notes = ("the test agent must be closed",)

    def recognise(self, path: Path, head: bytes) -> bool:
        return path.suffix == ".chat"

    def parse(self, data: bytes, path: Path) -> Session:
        messages, warnings = [], []
        for number, line in enumerate(data.decode("utf-8").split("\n"), 1):
            if not line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                raise SessionFormatError(f"{path}:{number}: invalid JSON") from None
            if not isinstance(record, dict) or "role" not in record:
                warnings.append(f"{path}:{number}: skipped, as the test agent does: no role")
                continue
            messages.append(Message.make(record["role"], record.get("text", "")))
        return Session(SessionRef(path), self, messages, warnings, SessionMeta(recorded_tokens=7))

    def dump(self, session: Session) -> bytes:
        lines = [
            json.dumps({"role": m.role, "text": m.text()}, ensure_ascii=False) + "\n"
            for m in session.messages
        ]
        return "".join(lines).encode("utf-8")

    def write_op(self, session: Session, compacted: Session) -> WriteOp:
        return WriteOp(self.dump(compacted))

    def restore_folder(self, path: Path) -> Path:  # an optional hook
        return path.parent / "chat-restore-points"


#: Step 2: one instance (in the format's package) ...
CHAT_FORMAT = ChatFormat()


def registered(monkeypatch: pytest.MonkeyPatch, line: registry.Entry) -> None:
    """... and one line in the registry's FORMATS (before the fallback formats):
    the registry's own entries with ``line`` first, loaded as the registry loads."""
    assert isinstance(registry.FORMATS, registry.Registered)
    entries = [line, *registry.FORMATS.entries]
    monkeypatch.setattr(registry, "FORMATS", registry.Registered(entries))


@pytest.fixture
def chat_format(monkeypatch: pytest.MonkeyPatch) -> ChatFormat:
    registered(
        monkeypatch, registry.Entry("tests.formats.test_add_a_format:CHAT_FORMAT", ChatFormat.label)
    )
    assert registry.get("test-chat") is CHAT_FORMAT and "test .chat transcript" in registry.labels()
    return CHAT_FORMAT


def write_chat(path: Path, bad_line: bool = False) -> Path:
    rows = [("system", "You are a test agent."), ("user", "Fix the bug in parser.py")]
    rows += [("assistant", "Fixed: parser.py line 12 raised KeyError('id')."), ("user", "Thanks")]
    rows += [("assistant", "You are welcome.")]
    lines = [json.dumps({"role": role, "text": text}) for role, text in rows]
    if bad_line:
        lines.insert(2, json.dumps({"note": "a line the agent skips"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_whole_review_works_on_a_new_format(tmp_path: Path, chat_format: ChatFormat) -> None:
    path = write_chat(tmp_path / "work.chat", bad_line=True)
    original = path.read_bytes()
    loaded = load(path)  # the one load path
    session = loaded.session
    assert session.format is chat_format and len(session.messages) == 5
    assert session.warnings == [f"{path}:3: skipped, as the test agent does: no role"]
    assert chat_format.dump(session) != original  # it drops the skipped line on dump

    job = CompactionJob(session, ENABLED, loaded.fingerprint)
    prep = job.prepare()  # default tail: the last two user/assistant messages are kept
    assert list(prep.plan.compact_indices) == [1, 2] and prep.plan.leading == 1
    assert prep.request is not None and "## Message 2\nRole: user" in prep.request.transcript
    result = asyncio.run(job.summarize(prep, ProviderConfig()))  # offline
    assert result.status == "complete"
    draft = job.draft(prep, result)
    assert [m.role for m in draft.compacted.messages] == ["system", "user", "user", "assistant"]

    applied = job.commit(draft, ProviderConfig())
    backup = applied.backup_path
    assert backup.parent == tmp_path / "chat-restore-points"  # the format's restore folder
    assert backup.read_bytes() == original
    assert applied.audit_path == backup.parent / f"{path.name}.compact-audit.jsonl"  # with it
    (record,) = store.read_audit(path, chat_format)
    assert record["format"] == "test-chat" and record["policy"] == "backup"
    after = load(path).session
    assert after.messages[1].text().endswith(result.summary)
    assert after.messages[2:] == session.messages[3:]

    diff = diff_sessions(session, after)
    assert diff.counts["removed"] == 2 and diff.counts["added"] == 1
    report = retention_report(session, prep.plan, result.summary)
    assert report.compacted == (2, 3)

    points = store.restore_points(store.Target.of(after))
    assert [p.path for p in points] == [backup]
    store.restore(store.Target.of(after))  # undo: the file as it was, byte for byte
    assert path.read_bytes() == original


def test_the_cli_reads_and_writes_a_new_format(tmp_path, chat_format, cli_main):  # noqa: F811
    path = write_chat(tmp_path / "work.chat")
    config = tmp_path / "config.yaml"
    config.write_text("compaction:\n  enabled: true\n  type: kimi\n", encoding="utf-8")
    plan = cli_main("plan", path, "--json", "--config", config)
    assert plan.code == 0, plan.stderr
    data = json.loads(plan.stdout)
    assert data["format"] == "test-chat" and data["compact_indices"] == [1, 2]
    out = tmp_path / "out.chat"
    done = cli_main("compact", path, "--output", out, "--config", config)
    assert done.code == 0, done.stderr
    assert [json.loads(line)["role"] for line in out.read_text().splitlines()] == [
        "system",
        "user",
        "user",
        "assistant",
    ]


def test_step_3_a_registered_format_without_a_writer_fails_the_every_format_tests(
    tmp_path: Path, chat_format: ChatFormat, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Step 3: until the format has its writer in tests/factories/writers.py, the
    every-format tests fail naming it; with it, they pass."""
    with pytest.raises(AssertionError, match="test-chat"):
        test_every_format.test_every_registered_format_has_a_writer()
    monkeypatch.setitem(FORMAT_WRITERS, "test-chat", lambda folder: write_chat(folder / "w.chat"))
    test_every_format.test_every_registered_format_has_a_writer()


# --- a format kept in a database ------------------------------------------------------------
# The same steps for a format whose sessions are rows in one SQLite database
# (many sessions in one file, WAL mode): the class declares the transactional
# strategy and supplies its schema; nothing outside formats/ changes.

DB_HEAD = b"SQLite format 3\x00"
SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT NOT NULL);
CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions(id),
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"""


class ChatRows(SqliteTransactional):
    """The strategy's schema part: a session's rows, exported one JSON line each."""

    def read_rows(self, tx: sqlite3.Connection, ref: SessionRef) -> list[list]:
        found = tx.execute(
            "SELECT seq, role, content FROM messages WHERE session_id = ? ORDER BY seq",
            (ref.key,),
        ).fetchall()
        return [list(row) for row in found]

    def export_rows(self, rows: list[list]) -> bytes:
        return b"".join(json.dumps(row).encode() + b"\n" for row in rows)

    def replace_rows(self, tx: sqlite3.Connection, ref: SessionRef, data: bytes) -> None:
        tx.execute("DELETE FROM messages WHERE session_id = ?", (ref.key,))
        rows = [json.loads(line) for line in data.split(b"\n") if line]
        tx.executemany(
            "INSERT INTO messages (session_id, seq, role, content) VALUES (?, ?, ?, ?)",
            [(ref.key, *row) for row in rows],
        )

    def write_rows(
        self, tx: sqlite3.Connection, rows: list[list], session: Session, compacted: Session
    ) -> bytes:
        data = self.export_rows([[n, m.role, m.text()] for n, m in enumerate(compacted.messages)])
        self.replace_rows(tx, session.ref, data)
        return data

    def count_messages(self, ref: SessionRef, data: bytes) -> int:
        return len(rows_to_messages(data, ref))


def rows_to_messages(data: bytes, ref: SessionRef) -> list[Message]:
    messages = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if line:
            try:
                _, role, content = json.loads(line)
            except ValueError:
                raise SessionFormatError(f"{ref}: row {number}: not a message") from None
            messages.append(Message.make(role, content))
    return messages


class ChatDbFormat(DatabaseFormat):
    """Step 1 for a database: one class on DatabaseFormat; its storage is the
    strategy above. No parse, no recognise, no discovery of its own."""

    name = "test-chatdb"
    label = "test chat database"
    agent = "the test agent"
    storage = ChatRows()
    tables = ("sessions", "messages")

    def database(self, env, home: Path) -> Path:
        return Path(env.get("TEST_CHATDB", home / "chat.chatdb"))

    def sessions(self, db: Path) -> list[Listed]:
        with sqlite3.connect(db) as conn:
            found = conn.execute(
                "SELECT s.id, s.title, (SELECT count(*) FROM messages m WHERE m.session_id = s.id)"
                " FROM sessions s ORDER BY s.id DESC"
            ).fetchall()
        return [Listed(sid, title, "/work", 0.0, n) for sid, title, n in found]

    def read(self, conn: sqlite3.Connection, ref: SessionRef) -> tuple[Session, bytes]:
        known = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (ref.key,)).fetchone()
        if known is None:
            raise SessionFormatError(f"{ref}: no such session in the database")
        data = self.storage.export(conn, ref)
        return Session(ref, self, rows_to_messages(data, ref)), data


CHATDB_FORMAT = ChatDbFormat()


@pytest.fixture
def chatdb_format(monkeypatch: pytest.MonkeyPatch) -> ChatDbFormat:
    registered(
        monkeypatch,
        registry.Entry("tests.formats.test_add_a_format:CHATDB_FORMAT", ChatDbFormat.label),
    )
    return CHATDB_FORMAT


CHAT = [
    ("system", "You are a test agent."),
    ("user", "Fix the bug in parser.py"),
    ("assistant", "Fixed: parser.py line 12 raised KeyError('id')."),
    ("user", "Now the tests"),
    ("assistant", "tests/test_parser.py passes."),
    ("user", "Thanks"),
    ("assistant", "You are welcome."),
]


def write_chatdb(path: Path, sessions: tuple[str, ...] = ("A", "B")) -> Path:
    """A database in WAL mode holding the sessions named (A and B)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(SCHEMA)
    for sid in sessions:
        conn.execute("INSERT INTO sessions VALUES (?, ?)", (sid, f"session {sid}"))
        conn.executemany(
            "INSERT INTO messages VALUES (?, ?, ?, ?)",
            [(sid, n, role, f"{sid}: {text}") for n, (role, text) in enumerate(CHAT)],
        )
    conn.commit()
    conn.close()
    return path


def agent_writes(path: Path, sid: str, text: str) -> None:
    """The agent appends a turn to session ``sid`` (as another process would)."""
    conn = sqlite3.connect(path)
    (seq,) = conn.execute(
        "SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?", (sid,)
    ).fetchone()
    conn.execute("INSERT INTO messages VALUES (?, ?, 'user', ?)", (sid, seq, text))
    conn.commit()
    conn.close()


def rows(path: Path, sid: str) -> list[tuple[int, str, str]]:
    conn = sqlite3.connect(path)
    try:
        found = conn.execute(
            "SELECT seq, role, content FROM messages WHERE session_id = ? ORDER BY seq", (sid,)
        ).fetchall()
    finally:
        conn.close()
    return [tuple(r) for r in found]


def config_file(tmp_path: Path) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text("compaction:\n  enabled: true\n  type: kimi\n", encoding="utf-8")
    return config


def test_a_database_format_is_planned_written_and_undone_by_the_cli(
    tmp_path, chatdb_format, cli_main  # noqa: F811
):
    db = write_chatdb(tmp_path / "work.chatdb")
    config = config_file(tmp_path)
    a_before, b_before = rows(db, "A"), rows(db, "B")
    listed = cli_main("restore", f"{db}#A", "--list")
    assert listed.code == 0 and "no restore points" in listed.stdout, listed.stderr
    plan = cli_main("plan", f"{db}#A", "--json", "--config", config)
    assert plan.code == 0, plan.stderr
    data = json.loads(plan.stdout)
    assert data["format"] == "test-chatdb" and data["compact_indices"][0] == 1

    done = cli_main("compact", f"{db}#A", "--in-place", "--yes", "--config", config)
    assert done.code == 0, done.stderr
    a_after = rows(db, "A")
    assert a_after != a_before and rows(db, "B") == b_before  # only A's rows changed
    assert a_after[0] == a_before[0] and a_after[-2:] == [
        (len(a_after) - 2, *a_before[-2][1:]),
        (len(a_after) - 1, *a_before[-1][1:]),
    ]
    # the restore point and the audit log are A's own: A's rows, exported
    (point,) = [p for p in store.restore_points(f"{db}#A")]
    assert point.path.name.startswith("work.chatdb#A.bak-")
    exported = [tuple(json.loads(line)) for line in point.path.read_bytes().splitlines()]
    assert exported == a_before
    assert (tmp_path / "work.chatdb#A.compact-audit.jsonl").is_file()
    assert store.restore_points(f"{db}#B") == [] and store.read_audit(f"{db}#B") == []

    # the agent writes to session B; undoing A gives A back and keeps B's new turn
    agent_writes(db, "B", "a new turn in B")
    undone = cli_main("restore", f"{db}#A", "--yes")
    assert undone.code == 0, undone.stderr
    assert rows(db, "A") == a_before
    assert rows(db, "B") == [*b_before, (len(b_before), "user", "a new turn in B")]


def test_a_database_session_changed_since_loading_is_refused_inside_the_write(
    tmp_path, chatdb_format
):
    db = write_chatdb(tmp_path / "work.chatdb")
    job = CompactionJob.load(f"{db}#A", ENABLED)
    assert job.session.ref == SessionRef(db, "A")
    prep = job.prepare()
    draft = job.draft(prep, asyncio.run(job.summarize(prep, ProviderConfig())))
    agent_writes(db, "B", "another session's turn")  # not a conflict: B is not A
    before = rows(db, "A")
    agent_writes(db, "A", "a turn of A's own")  # a conflict
    with pytest.raises(ApplyError, match=r"work\.chatdb#A: changed .*nothing was written"):
        job.commit(draft, ProviderConfig())
    assert rows(db, "A") == [*before, (len(before), "user", "a turn of A's own")]
    assert store.restore_points(f"{db}#A") == []  # the backup made inside was removed

    job = CompactionJob.load(f"{db}#A", ENABLED)  # reloaded: B's turns do not matter
    prep = job.prepare()
    draft = job.draft(prep, asyncio.run(job.summarize(prep, ProviderConfig())))
    agent_writes(db, "B", "B again")
    looked = CompactionJob.load(f"{db}#A", ENABLED, for_write=False)  # the job names A
    with pytest.raises(ApplyError, match=r"work\.chatdb#A: not written: .*no fingerprint"):
        looked.commit(draft, ProviderConfig())
    applied = job.commit(draft, ProviderConfig())
    assert applied.policy == "transaction" and "work.chatdb#A" in applied.describe()


def test_undo_of_a_database_session_refuses_after_the_agent_wrote_to_it(
    tmp_path, chatdb_format, cli_main  # noqa: F811
):
    db = write_chatdb(tmp_path / "work.chatdb")
    config = config_file(tmp_path)
    a_before = rows(db, "A")
    done = cli_main("compact", f"{db}#A", "--in-place", "--yes", "--config", config)
    assert done.code == 0, done.stderr
    agent_writes(db, "A", "resumed after our compaction")
    after_agent = rows(db, "A")
    refused = cli_main("restore", f"{db}#A", "--yes")
    assert refused.code == 2 and "changed since this tool wrote it" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and rows(db, "A") == after_agent
    forced = cli_main("restore", f"{db}#A", "--yes", "--force")
    assert forced.code == 0, forced.stderr
    assert rows(db, "A") == a_before
    # the forced undo kept the agent's version as a restore point of A's own rows
    exports = [
        [tuple(json.loads(line)) for line in p.path.read_bytes().splitlines()]
        for p in store.restore_points(f"{db}#A")
    ]
    assert after_agent in exports and a_before in exports


def test_output_file_is_refused_for_a_database_format_in_one_line(
    tmp_path, chatdb_format, cli_main  # noqa: F811
):
    db = write_chatdb(tmp_path / "work.chatdb")
    before = db.read_bytes()
    out = tmp_path / "out.chatdb"
    done = cli_main("compact", f"{db}#A", "--output", out, "--config", config_file(tmp_path))
    assert done.code == 2 and not out.exists()
    assert len(done.stderr.strip().splitlines()) == 1
    assert "is not a file of its own" in done.stderr and db.read_bytes() == before


def test_a_database_file_is_not_refused_for_its_nul_bytes(tmp_path, chatdb_format):
    db = write_chatdb(tmp_path / "work.chatdb")
    assert b"\x00" in db.read_bytes()
    with pytest.raises(SessionFormatError, match="of 2 sessions, not one: B .*; A .*DB#ID"):
        load(db)
    assert len(load(f"{db}#B").session.messages) == len(CHAT)


def test_a_database_format_finds_its_sessions_by_id_and_opens_a_database_of_one(
    tmp_path, chatdb_format, monkeypatch, cli_main  # noqa: F811
):
    """What DatabaseFormat brings: the picker's rows (DB#KEY), a session by its
    id in the agent's own database, and a database of one session opened."""
    db = write_chatdb(tmp_path / "work.chatdb", ("chat-alpha", "chat-beta"))
    monkeypatch.setenv("TEST_CHATDB", str(db))
    found = [info for info in registry.discover_all() if info.format == "test-chatdb"]
    assert [str(info.ref) for info in found] == [f"{db}#chat-beta", f"{db}#chat-alpha"]
    assert registry.resolve("chat-alpha") == SessionRef(db, "chat-alpha")
    assert registry.resolve("chat-b") == SessionRef(db, "chat-beta")  # a start of an id
    one = write_chatdb(tmp_path / "one.chatdb", ("solo",))
    shown = cli_main("plan", one, "--json", "--config", config_file(tmp_path))
    assert shown.code == 0, shown.stderr
    assert json.loads(shown.stdout)["session"] == f"{one}#solo"

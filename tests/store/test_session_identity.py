"""One session identity (issue 30, item 1): a session named by a relative path, a
short id or a database is one absolute :class:`SessionRef` from the moment it is
resolved, and every message, JSON field and restore names it the same way.

Each test here failed on the code before the identity was made one value."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.codex import projection
from tests.factories import opencode, write_openai_jsonl
from tests.factories.codex import SID, conversation
from tests.factories.writers import openai_messages, write_opencode
from tests.loopback_server import openai_sse

LETTERS_ID = "ses_dbbfa0a0a0a0Ab3Cd4Ef5Gh6Ij"  # the picker shows "ses_dbbf": no digit in it


def _compact_in_place(cli_main, where: str | Path) -> None:
    result = cli_main("compact", where, "--in-place", "--yes", "--provider", "offline")
    assert result.code == 0, result.stderr


# ------------------------------------------------------------------ relative paths


def test_a_write_made_with_a_relative_path_restores_from_the_same_folder(
    cli_main, tmp_path, monkeypatch
):
    folder = tmp_path / "project"
    original = write_openai_jsonl(folder / "chat.jsonl", openai_messages()).read_bytes()
    monkeypatch.chdir(folder)
    _compact_in_place(cli_main, "chat.jsonl")
    record = json.loads((folder / "chat.jsonl.compact-audit.jsonl").read_text().split("\n")[0])
    assert Path(record["source"]).is_absolute() and Path(record["backup"]).is_absolute()
    listed = cli_main("restore", "chat.jsonl", "--list", "--json")
    assert listed.code == 0, listed.stderr
    points = json.loads(listed.stdout)["points"]
    assert [p["ours"] for p in points] == [True]
    result = cli_main("restore", "chat.jsonl", "--yes")
    assert result.code == 0, result.stderr
    assert (folder / "chat.jsonl").read_bytes() == original


def test_a_write_made_with_a_relative_path_restores_from_another_folder(
    cli_main, tmp_path, monkeypatch
):
    """Failed: "cannot read the restore point: No such file or directory", and
    --list called our own backup "not made by kimi-compact-tui"."""
    folder = tmp_path / "project"
    original = write_openai_jsonl(folder / "chat.jsonl", openai_messages()).read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(folder)
    _compact_in_place(cli_main, "chat.jsonl")
    monkeypatch.chdir(elsewhere)
    listed = cli_main("restore", "../project/chat.jsonl", "--list")
    assert listed.code == 0, listed.stderr
    assert "not made by kimi-compact-tui" not in listed.stdout
    assert "made by kimi-compact-tui" in listed.stdout
    result = cli_main("restore", "../project/chat.jsonl", "--yes")
    assert result.code == 0, result.stderr
    assert (folder / "chat.jsonl").read_bytes() == original
    assert "Restored" in result.stdout or "Undid" in result.stdout


LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "relative_audit"


def test_an_audit_log_with_relative_paths_from_an_older_version_still_restores(
    cli_main, tmp_path, monkeypatch
):
    """A log written by main before this change (``tests/fixtures/relative_audit``:
    relative ``source`` and ``backup``, as typed): its paths are read against the
    session's folder, from any folder."""
    folder = tmp_path / "project"
    shutil.copytree(LEGACY, folder)
    session = folder / "chat.jsonl"
    (backup,) = folder.glob("chat.jsonl.bak-*")
    original = backup.read_bytes()
    monkeypatch.chdir(tmp_path)
    listed = cli_main("restore", "project/chat.jsonl", "--list", "--json")
    assert listed.code == 0, listed.stderr
    assert [p["ours"] for p in json.loads(listed.stdout)["points"]] == [True]
    result = cli_main("restore", "project/chat.jsonl", "--yes")
    assert result.code == 0, result.stderr
    assert session.read_bytes() == original


def _projection_db(home: Path, offset: int) -> Path:
    db = home / projection.PROJECTION_DB
    con = sqlite3.connect(db)
    with con:
        con.execute(
            "create table thread_history_projection_state (thread_id text primary key, "
            "next_rollout_byte_offset integer not null, next_rollout_ordinal integer not null)"
        )
        for table in ("thread_turns", "thread_items", "thread_realtime_items"):
            con.execute(f"create table {table} (thread_id text, item_id text)")
            con.execute(f"insert into {table} values (?, 'x')", (SID,))
        con.execute("insert into thread_history_projection_state values (?, ?, 9)", (SID, offset))
    con.close()
    return db


def test_restore_of_a_codex_rollout_named_by_a_relative_path(cli_main, tmp_path, monkeypatch):
    """Failed: the file was restored, then a traceback ("relative path can't be
    expressed as a file URI"), exit 1, Codex's UI history not reset."""
    home = tmp_path / ".codex"
    rollout = conversation().turn("and then?", reply="Done.").write(home)
    original = rollout.read_bytes()
    monkeypatch.chdir(home)
    relative = rollout.relative_to(home)
    _compact_in_place(cli_main, relative)
    db = _projection_db(home, offset=rollout.stat().st_size)  # Codex read past the write
    result = cli_main("restore", relative, "--yes")
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr and "warning" not in result.stdout
    assert result.stdout.startswith(("Undid", "Restored"))
    assert rollout.read_bytes() == original
    con = sqlite3.connect(db)
    try:
        left = con.execute("select count(*) from thread_history_projection_state").fetchone()
    finally:
        con.close()
    assert left == (0,)


# ------------------------------------------------------------------ ids and databases


def _opencode_db(where: Path, *sids: str) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    db = opencode.OpencodeDb(where / "opencode.db")
    for sid in sids:
        made = db.session("Fix the parser", sid=sid or None)
        u = db.user(made, "Why does parser.py fail?")
        db.assistant(
            made, u, [opencode.step_start(), opencode.text("KeyError."), opencode.step_finish()]
        )
        u = db.user(made, "Fix it.")
        db.assistant(
            made, u, [opencode.step_start(), opencode.text("Fixed."), opencode.step_finish()]
        )
        u = db.user(made, "Thanks.")
        db.assistant(
            made, u, [opencode.step_start(), opencode.text("Welcome."), opencode.step_finish()]
        )
    db.close()
    return db.path


def test_a_letter_only_short_id_the_picker_shows_names_its_session(cli_main, monkeypatch):
    """Failed: ``plan ses_dbbf`` was refused (an id had to hold a digit)."""
    home = Path(os.environ["HOME"])
    db = _opencode_db(home / ".local" / "share" / "opencode", LETTERS_ID, "")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    listed = registry.discover_all()
    short = registry.short_ids(listed)[LETTERS_ID]
    assert short == "ses_dbbf"
    result = cli_main("plan", short, "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["session"] == f"{db}#{LETTERS_ID}"
    # any unique start of 4 or more characters, letters or digits
    assert cli_main("plan", LETTERS_ID[:10], "--json").code == 0


def test_a_database_holding_one_session_opens_it(cli_main, tmp_path):
    """Failed: refused, "name one as DB#ID"."""
    db = _opencode_db(tmp_path / "one", "")
    result = cli_main("plan", db, "--json")
    assert result.code == 0, result.stderr
    session = json.loads(result.stdout)["session"]
    assert session.startswith(f"{db}#ses_")


def test_restore_list_json_names_a_database_session_as_db_key(cli_main, tmp_path):
    """Failed: "session" named the whole database."""
    ref = str(write_opencode(tmp_path))
    _compact_in_place(cli_main, ref)
    result = cli_main("restore", ref, "--list", "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["session"] == ref


def test_probe_json_names_a_database_session_as_db_key(cli_main, tmp_path, loopback):
    """Failed: "session" named the whole database."""
    ref = str(write_opencode(tmp_path))
    loopback.script([openai_sse(["I do not know."]) for _ in range(20)])
    config = tmp_path / "config.yaml"
    config.write_text(
        "compaction: {enabled: true, type: kimi}\n"
        f"provider: {{kind: openai, base_url: '{loopback.base_url}', model: m, api_key_env: ''}}\n",
        encoding="utf-8",
    )
    summary = tmp_path / "summary.md"
    summary.write_text("<current_focus>\nThe parser.\n</current_focus>\n", encoding="utf-8")
    result = cli_main("probe", ref, "--summary", summary, "--config", config, "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["session"] == ref


@pytest.mark.parametrize("spelling", ["relative", "absolute"])
def test_a_session_is_named_by_its_absolute_path_once_resolved(
    cli_main, tmp_path, monkeypatch, spelling
):
    folder = tmp_path / "project"
    session = write_openai_jsonl(folder / "chat.jsonl", openai_messages())
    monkeypatch.chdir(folder)
    result = cli_main("plan", "chat.jsonl" if spelling == "relative" else session, "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["session"] == str(session)


# ------------------------------------------------------------------ opencode's session list


def _time_updated(db: Path) -> dict[str, int]:
    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT id, time_updated FROM session").fetchall())
    finally:
        con.close()


def test_a_write_and_its_undo_bump_the_opencode_sessions_time_updated(cli_main, tmp_path):
    """opencode lists sessions by ``session.time_updated``: a compaction written (and
    undone) is a change of that session, and of no other (issue 32, item 7; failed:
    the time stayed as it was)."""
    ref = str(write_opencode(tmp_path))
    db, _, key = ref.rpartition("#")
    before = _time_updated(Path(db))
    _compact_in_place(cli_main, ref)
    after = _time_updated(Path(db))
    assert after[key] > before[key]
    assert {k: v for k, v in after.items() if k != key} == {
        k: v for k, v in before.items() if k != key
    }
    undone = cli_main("restore", ref, "--yes")
    assert undone.code == 0, undone.stderr
    assert _time_updated(Path(db))[key] >= after[key]


def test_compact_in_place_says_it_wrote_the_database_session_as_db_key(cli_main, tmp_path):
    """Failed: "complete (offline extraction): wrote …/opencode.db (8 messages → 4)"."""
    ref = str(write_opencode(tmp_path))
    db = ref.rpartition("#")[0]
    result = cli_main("compact", ref, "--in-place", "--yes", "--provider", "offline")
    assert result.code == 0, result.stderr
    assert f"wrote {ref} (" in result.stderr and f"wrote {db} (" not in result.stderr


def test_the_title_names_a_database_session_as_db_key(tmp_path):
    """The window's title and the status line: failed, "opencode.db" (the database)."""
    from kimi_compact_tui.formats import load
    from kimi_compact_tui.tui.widgets.status import session_label

    ref = str(write_opencode(tmp_path))
    key = ref.rpartition("#")[2]
    assert session_label(load(ref).session) == f"opencode.db#{key}"

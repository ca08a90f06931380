"""Writing a compaction to a Gemini CLI session and undoing it: the appended record,
the refusals, and where the store keeps restore points (never in ``chats/``, where
Gemini CLI's start-up clean-up deletes ``session-*.json[l]`` files)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import ApplyError, UserError
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.formats.gemini_cli import FORMAT
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.providers.base import ProviderConfig, StreamResult
from kimi_compact_tui.store import read_audit, restore, restore_points, undo_plan
from tests.factories import gemini_cli as g
from tests.factories import run_cli

RESTORE = "kimi-compact-tui-restore-points"


def compact(path: Path, up_to: int | None = None, text: str = "SUMMARY TEXT", **kw):
    job = CompactionJob.load(path, AppConfig())
    prep = job.prepare(up_to=up_to)
    draft = job.draft(prep, StreamResult(status="complete", summary=text))
    return job.commit(draft, ProviderConfig(), **kw)


def names(folder: Path) -> set[str]:
    return set(os.listdir(folder))


def test_write_and_undo_leave_nothing_but_the_session_in_chats(tmp_path):
    path = g.session_file(tmp_path)
    chats = path.parent
    before, data = names(chats), path.read_bytes()
    result = compact(path)
    assert names(chats) == before  # no backup, no audit log, no temporary file
    folder = chats.parent / RESTORE
    assert result.backup_path.parent == folder and result.backup_path.read_bytes() == data
    assert result.audit_path is not None and result.audit_path.parent == folder
    assert [p.path for p in restore_points(path)] == [result.backup_path]
    assert undo_plan(path).truncate_to == len(data)
    undone = restore(path)
    assert undone.truncated_to == len(data) and path.read_bytes() == data
    assert names(chats) == before
    assert [r["action"] for r in read_audit(path, FORMAT)] == ["apply", "restore"]
    assert all(
        not n.startswith("session-") or n.endswith(".compact-audit.jsonl") or ".bak-" in n
        for n in names(folder)
    )


def test_a_session_file_deleted_after_our_write_is_restored_by_its_path(tmp_path):
    """The audit log is in the restore folder, not beside the (gone) file: it still
    says which format wrote there, so the restore finds the session's restore points."""
    path = g.session_file(tmp_path)
    data = path.read_bytes()
    compact(path)
    path.unlink()  # what Gemini CLI's clean-up may do
    assert undo_plan(path).target == path
    undone = restore(path)
    assert path.read_bytes() == data and undone.restored_from.parent.name == RESTORE
    assert names(path.parent) == {path.name}


def test_the_cli_writes_and_undoes_by_session_id(tmp_path):
    path = g.session_file(tmp_path)
    chats, data = path.parent, path.read_bytes()
    before = names(chats)
    env = {"HOME": str(tmp_path), "GEMINI_CLI_HOME": str(tmp_path)}
    done = run_cli("compact", g.SID, "--in-place", "--yes", "--provider", "offline", env=env)
    assert done.returncode == 0, done.stderr
    assert names(chats) == before and path.read_bytes().startswith(data)
    listed = run_cli("restore", g.SID, "--list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    (point,) = json.loads(listed.stdout)["points"]
    assert point["default"] and Path(point["path"]).parent == chats.parent / RESTORE
    undone = run_cli("restore", g.SID, "--yes", env=env)
    assert undone.returncode == 0, undone.stderr
    assert path.read_bytes() == data and names(chats) == before


def test_the_appended_record_holds_the_summary_then_the_kept_records(tmp_path):
    path = g.session_file(tmp_path)
    data = path.read_bytes()
    session = load_session(path)
    up_to = 4  # the call, both results and the reply before it are compacted
    assert [m.role for m in session.messages[up_to : up_to + 2]] == ["assistant", "user"]
    compact(path, up_to=up_to)
    written = path.read_bytes()
    assert written.startswith(data) and written.count(b"\n") == data.count(b"\n") + 1
    (record,) = [json.loads(x) for x in written[len(data) :].splitlines()]
    assert list(record) == ["$set"] and list(record["$set"]) == ["messages", "lastUpdated"]
    summary, *kept = record["$set"]["messages"]
    assert summary["type"] == "user" and summary["content"] == [
        {"text": build_compact_summary_text("SUMMARY TEXT")}
    ]
    assert [m["id"] for m in kept] == ["m4", "m5", "m6"]
    assert record["$set"]["lastUpdated"] > "2026-01-02"
    again = load_session(path)
    assert again.messages[0].text() == build_compact_summary_text("SUMMARY TEXT")
    assert again.messages[1:] == session.messages[up_to:]


def test_a_boundary_between_a_call_and_its_results_is_refused(tmp_path):
    path = g.session_file(tmp_path)
    data = path.read_bytes()
    with pytest.raises(UserError, match="tool call"):
        compact(path, up_to=2)
    with pytest.raises(ApplyError, match="one Gemini CLI record"):
        compact(path, up_to=2, allow_split=True)
    assert path.read_bytes() == data and names(path.parent) == {path.name}


def test_a_session_ending_mid_turn_is_refused_before_any_request(tmp_path):
    records = g.conversation()[:5] + [g.gemini("m2", "", [g.call("c1", "sleep 100", None)])]
    path = g.session_file(tmp_path, records)
    done = run_cli(
        "compact", str(path), "--in-place", "--yes", "--provider", "offline", "--up-to", "1"
    )
    assert done.returncode == 2 and "mid-turn" in done.stderr and str(path) in done.stderr
    assert "run_shell_command" in done.stderr
    assert path.read_bytes() == g.write(tmp_path / "x.jsonl", records).read_bytes()


def test_a_file_grown_since_load_is_refused(tmp_path):
    path = g.session_file(tmp_path)
    job = CompactionJob.load(path, AppConfig())
    prep = job.prepare()
    draft = job.draft(prep, StreamResult(status="complete", summary="S"))
    with open(path, "ab") as fh:
        fh.write(b'{"$set":{"lastUpdated":"2026-01-01T11:00:00.000Z"}}\n')
    grown = path.read_bytes()
    with pytest.raises(ApplyError, match=str(path)):
        job.commit(draft, ProviderConfig())
    assert path.read_bytes() == grown and names(path.parent) == {path.name}


def test_undo_refuses_once_gemini_has_written_to_the_file(tmp_path):
    path = g.session_file(tmp_path)
    data = path.read_bytes()
    compact(path)
    with open(path, "ab") as fh:  # what a resume appends
        fh.write(b'{"$set":{"sessionId":"' + g.SID.encode() + b'"}}\n')
    grown = path.read_bytes()
    with pytest.raises(ApplyError, match="changed since"):
        restore(path)
    assert path.read_bytes() == grown
    forced = restore(path, force=True)  # the copy before our write, the current one kept
    assert path.read_bytes() == data and forced.replaced_backup.read_bytes() == grown
    assert forced.replaced_backup.parent == path.parent.parent / RESTORE
    assert names(path.parent) == {path.name}


def test_an_unterminated_last_line_gets_a_line_end_first(tmp_path):
    path = g.session_file(tmp_path)
    path.write_bytes(path.read_bytes() + b'{"$set":{"lastUpdated":"2026-01-0')  # torn
    session = load_session(path)
    assert session.warnings and "not JSON" in session.warnings[0]
    compact(path)
    again = load_session(path)
    assert again.messages[0].text().endswith("SUMMARY TEXT")
    assert len(again.warnings) == 1


def test_kept_records_are_written_as_loaded(tmp_path):
    """Ids Gemini CLI makes up when it reads (calls without one) are not written."""
    reply = g.gemini("m8", [{"functionCall": {"name": "run_shell_command", "args": {"c": 1}}}])
    result = {"functionResponse": {"name": "run_shell_command", "response": {"output": "x"}}}
    records = g.conversation() + [g.user("m7", "again"), reply, g.user("m9", [result])]
    records.append(g.gemini("m10", "done"))
    path = g.session_file(tmp_path, records)
    data = path.read_bytes()
    session = load_session(path)
    assert session.messages[-3].tool_calls[0]["id"].startswith("synth_run_shell_command_")
    compact(path, up_to=len(session.messages) - 4)
    (record,) = [json.loads(x) for x in path.read_bytes()[len(data) :].splitlines()]
    kept = record["$set"]["messages"][1:]
    assert kept == [r for r in records if r.get("id") in ("m7", "m8", "m9", "m10")]

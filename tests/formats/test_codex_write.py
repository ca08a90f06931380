"""Writing a compaction to a Codex rollout (one appended ``compacted`` record), undoing
it, and finding Codex sessions; tests/agents/test_codex_resume.py proves with the real
Codex that it resumes what is written here."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

import pytest

from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats import load_session, registry
from kimi_compact_tui.formats.codex import CLOSE_NOTE
from kimi_compact_tui.formats.storage import SessionRef
from tests.factories.codex import (
    FMT,
    NAME,
    SID,
    Rollout,
    codex_state,
    conversation,
    parse,
    summary,
)
from tests.tui_support import compact, settle

NOW = datetime(2026, 12, 2, 8, 30, 1, 234567, tzinfo=UTC)


def _compact(data: bytes, up_to: int | None = None, text: str = "SUMMARY"):
    session = parse(data)
    plan = make_plan(session.messages, up_to=up_to)
    return session, plan, FMT.compacted_session(session, plan, text, 12, now=NOW)


def _appended(session, compacted) -> list[dict]:
    op = FMT.write_op(session, compacted)
    assert op.data and FMT.write_notes == (CLOSE_NOTE,)
    return [json.loads(x) for x in op.data.splitlines() if x]


def test_one_compacted_record_in_codexs_shape():
    data = conversation().bytes()
    session, plan, compacted = _compact(data)
    (record,) = _appended(session, compacted)
    last = max(json.loads(x)["ordinal"] for x in data.splitlines())
    text = build_compact_summary_text("SUMMARY")
    assert list(record) == ["timestamp", "ordinal", "type", "payload"]
    assert record["timestamp"] == "2026-12-02T08:30:01.234Z" and record["ordinal"] == last + 1
    assert record["type"] == "compacted" and record["payload"]["message"] == text
    replacement = record["payload"]["replacement_history"]
    assert replacement[0] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
    }
    # the kept items exactly as read (the last call, its output, the reply); Codex's own
    # context (developer message, environment) is not written: it shows it again
    state = codex_state(session)
    kept = [h.item for h in state.history[state.starts[plan.boundary] :]]
    assert replacement[1:] == kept
    assert [i["type"] for i in kept] == ["function_call", "function_call_output", "message"]
    assert FMT.dump(compacted) == data + FMT.write_op(session, compacted).data


def test_the_rollout_after_our_record_reads_as_summary_then_the_kept_messages():
    data = conversation().bytes()
    session, plan, compacted = _compact(data, up_to=3)
    assert plan.boundary == 3
    reread = parse(FMT.dump(compacted))
    assert summary(reread) == summary(compacted)
    assert reread.messages[0].text() == build_compact_summary_text("SUMMARY")
    assert summary(reread)[1:] == summary(session)[3:]
    assert codex_state(reread).compactions == 1 and codex_state(reread).prefix == 0
    assert codex_state(compacted).data is codex_state(session).data


def test_an_older_rollout_gets_no_ordinal_and_an_unterminated_one_a_newline_first():
    session, _, compacted = _compact(conversation(paginated=False).bytes())
    (record,) = _appended(session, compacted)
    assert "ordinal" not in record
    data = conversation().bytes().rstrip(b"\n")
    session, _, compacted = _compact(data)
    op = FMT.write_op(session, compacted)
    assert op.data.startswith(b"\n{") and op.data.endswith(b"}\n")
    torn = conversation().bytes() + b'{"timestamp":"2026'
    session, _, compacted = _compact(torn)
    assert FMT.write_op(session, compacted).data.startswith(b"\n{")
    assert parse(FMT.dump(compacted)).messages[0].text().endswith("SUMMARY")


def test_a_lone_surrogate_is_written_escaped():
    session, _, compacted = _compact(conversation().bytes(), text="bad \ud800 text")
    data = FMT.write_op(session, compacted).data
    assert b"\\ud800" in data and json.loads(data)["payload"]["message"].endswith("\ud800 text")


def test_writing_is_refused_mid_turn_and_for_another_session():
    r = conversation()
    r.turn("still running", reply=None, complete=False)
    session = parse(r.bytes())
    plan = make_plan(session.messages)
    compacted = FMT.compacted_session(session, plan, "S", None)
    with pytest.raises(ApplyError, match="mid-turn"):
        FMT.write_op(session, compacted)
    other = parse(conversation().bytes())
    with pytest.raises(ApplyError, match="not built from this one"):
        FMT.write_op(other, compacted)


def test_compact_in_place_appends_and_restore_cuts_it_off(tmp_path, cli_main):
    path = conversation().write(tmp_path)
    original = path.read_bytes()
    res = cli_main("compact", path, "--in-place", "--yes", "--provider", "offline")
    assert res.code == 0, res.stderr
    data = path.read_bytes()
    assert data.startswith(original) and data.count(b"\n") == original.count(b"\n") + 1
    s = load_session(path)
    assert s.messages[0].text().startswith(build_compact_summary_text(""))
    assert [m.text() for m in s.messages[1:]] == ["", "world\n", "It printed world."]
    res = cli_main("restore", path, "--yes")
    assert res.code == 0, res.stderr
    assert path.read_bytes() == original
    # a restore point and the audit log live beside the rollout; neither is a rollout
    names = sorted(p.name for p in path.parent.iterdir())
    assert names[0] == NAME and len(names) == 3
    assert [
        i.path.name for i in registry.discover_all({"CODEX_HOME": str(tmp_path)}, tmp_path)
    ] == [NAME]


def test_undo_is_refused_once_codex_appended_after_our_record(tmp_path, cli_main):
    path = conversation().write(tmp_path)
    assert cli_main("compact", path, "--in-place", "--yes", "--provider", "offline").code == 0
    written = path.read_bytes()
    with open(path, "ab") as fh:
        fh.write(b'{"timestamp":"2026-12-02T00:00:00.000Z","ordinal":99,"type":"event_msg",')
        fh.write(b'"payload":{"type":"task_started","turn_id":"t"}}\n')
    res = cli_main("restore", path, "--yes")
    assert res.code == 2 and "changed since" in res.stderr
    assert path.read_bytes().startswith(written)


def test_compact_refuses_a_rollout_ending_mid_turn_before_any_request(tmp_path, cli_main):
    r = conversation()
    r.turn("still running", reply=None, complete=False)
    path = r.write(tmp_path)
    before = path.read_bytes()
    res = cli_main("compact", path, "--in-place", "--yes", "--provider", "offline")
    assert res.code == 2 and "mid-turn" in res.stderr and str(path) in res.stderr
    assert path.read_bytes() == before


# --- finding sessions -------------------------------------------------------------------


def test_discover_lists_live_rollouts_by_first_prompt_work_folder_and_count(tmp_path):
    path = conversation().write(tmp_path)
    os.utime(path, (1_800_000_000, 1_800_000_000))
    archived = tmp_path / "archived_sessions" / NAME.replace(SID, SID[:-1] + "0")
    archived.parent.mkdir()
    archived.write_bytes(Rollout().turn("old one").bytes())
    env = {"CODEX_HOME": str(tmp_path)}
    infos = FMT.discover(env, tmp_path / "home")
    assert [(i.path, i.title, i.work_dir, i.message_count, i.session_id) for i in infos] == [
        (path, "run echo hello", "/work", 10, SID)
    ]
    assert infos[0].updated == 1_800_000_000
    assert FMT.find_session(SID, env, tmp_path) == SessionRef(path)
    assert FMT.find_session(SID[:-1] + "0", env, tmp_path) == SessionRef(archived)
    assert FMT.find_session("nope", env, tmp_path) is None
    assert FMT.discovery_roots(env, tmp_path) == [tmp_path / "sessions"]
    assert FMT.discovery_roots({}, tmp_path) == [tmp_path / ".codex" / "sessions"]


def test_a_session_id_opens_its_rollout(tmp_path, monkeypatch, cli_main):
    path = conversation().write(tmp_path / "codex-home")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert registry.resolve(SID).path == path
    res = cli_main("plan", SID)
    assert res.code == 0 and str(path) in res.stdout + res.stderr


def test_discover_flags_a_rollout_it_cannot_read(tmp_path):
    path = conversation().write(tmp_path)
    path.write_bytes(b"not a rollout\n")
    (info,) = FMT.discover({"CODEX_HOME": str(tmp_path)}, tmp_path)
    assert info.error == f"{path}: no Codex rollout record in this file"


# --- the TUI ----------------------------------------------------------------------------


async def test_the_tui_appends_our_record_and_undo_cuts_it_off(tmp_path, review_app):
    from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen

    path = conversation().write(tmp_path)
    original = path.read_bytes()
    app = review_app(path)

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.state.session.format.name == "codex"
        await compact(pilot, back=True)
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmWriteScreen)
        shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "Codex must not be running" in " ".join(shown.split())
        await pilot.press("y")
        await settle(pilot)
        data = path.read_bytes()
        assert data.startswith(original) and data != original
        assert json.loads(data[len(original) :])["type"] == "compacted"
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert path.read_bytes() == original

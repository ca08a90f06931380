"""Writing a compaction to a Claude Code transcript (appended records), undoing it,
and finding sessions; the real agent resuming it is tests/agents/test_claude_code_resume.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats import load, load_session, registry
from kimi_compact_tui.formats.base import state_of
from kimi_compact_tui.formats.claude_code import FORMAT as FMT
from kimi_compact_tui.formats.claude_code import ClaudeState
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.store import Provenance, apply_compaction
from tests import procs
from tests.factories.claude_code import SID, Transcript, text, tool_use, two_turns
from tests.formats.test_claude_code_format import REFERENCE

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = "<current_focus>\nThe user ran echo hi.\n</current_focus>"


def compact(path: Path, up_to: int | None = None) -> tuple[list[dict], object, object]:
    """Append our compaction (as the store would); return the appended records, the
    session before and the session read back."""
    session = load_session(path)
    plan = make_plan(session.messages, up_to=up_to)
    compacted = FMT.compacted_session(session, plan, SUMMARY, None)
    op = FMT.write_op(session, compacted)
    with open(path, "ab") as fh:
        fh.write(op.data)
    return [json.loads(x) for x in op.data.split(b"\n") if x], session, load_session(path)


def test_the_appended_records_resume_as_summary_then_the_kept_messages(tmp_path):
    t = two_turns()
    t.user("Again")
    t.assistant([text("Again: running."), tool_use("toolu_2", "Bash", {"command": "echo hi"})])
    t.result("toolu_2", "hi", sourceToolAssistantUUID=t.last)
    t.assistant([text("Done.")])
    path = t.write(tmp_path)
    data = path.read_bytes()
    records, before, after = compact(path, up_to=7)
    assert path.read_bytes().startswith(data)
    boundary, summary, *copies = records
    old_leaf = state_of(before, ClaudeState).leaf_record()
    assert boundary["type"] == "system" and boundary["subtype"] == "compact_boundary"
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] == old_leaf.uuid
    assert boundary["compactMetadata"]["trigger"] == "manual"
    assert summary["isCompactSummary"] is True and summary["parentUuid"] == boundary["uuid"]
    assert summary["message"] == {"role": "user", "content": build_compact_summary_text(SUMMARY)}
    # copies: new uuids chained, new message ids (one per reply), the result follows its call
    parents = [summary["uuid"]] + [c["uuid"] for c in copies[:-1]]
    assert [c["parentUuid"] for c in copies] == parents
    old = {json.loads(x)["uuid"] for x in data.split(b"\n") if b'"uuid"' in x}
    assert not old & {c["uuid"] for c in copies}
    replies = [c for c in copies if c["type"] == "assistant"]
    ids = [c["message"]["id"] for c in replies]
    assert ids[0] == ids[1] != ids[2] and not any(i.startswith("msg_0") for i in ids)
    (result,) = [c for c in copies if "toolUseResult" in c]
    assert result["sourceToolAssistantUUID"] == replies[1]["uuid"]
    assert [list(c)[0] for c in records] == ["parentUuid"] * len(records)
    # read back: the summary, then exactly the kept messages
    assert after.messages[0].text() == build_compact_summary_text(SUMMARY)
    assert after.messages[1:] == before.messages[7:]
    assert [m.text() for m in after.messages[1:3]] == ["Again", "Again: running."]


def test_our_compaction_on_top_of_the_agents_own_and_of_ours(tmp_path):
    src = REFERENCE / "claude-session-after-compact.jsonl"
    if not src.is_file():
        pytest.skip(f"the reference transcript {src} is not on this machine")
    path = tmp_path / f"{SID}.jsonl"
    shutil.copyfile(src, path)
    theirs = load_session(path)
    _, _, ours = compact(path, up_to=1)
    assert [m.text() for m in ours.messages][1:] == [m.text() for m in theirs.messages[1:]]
    assert "FAKE-SUMMARY-9" not in json.dumps([m.data for m in ours.messages])
    _, _, again = compact(path)
    assert again.messages[0].text() == build_compact_summary_text(SUMMARY)
    assert again.messages[1:] == ours.messages[3:]  # the last two prompts, the attachment


def test_leading_system_messages_are_kept_before_the_summary(tmp_path):
    t = Transcript()
    t.attachment({"type": "hook_success", "content": "session started"})
    t.assistant([text("Ready.")])
    for n in range(3):
        t.user(f"Prompt {n}")
        t.assistant([text(f"Reply {n}.")])
    path = t.write(tmp_path)
    records, before, after = compact(path)
    assert make_plan(before.messages).leading == 1
    assert [r["type"] for r in records[:3]] == ["system", "attachment", "user"]
    # kept; the agent places an attachment before the next reply, after the summary
    # and the kept prompt (so does our reading of the file)
    assert after.messages[0].text() == build_compact_summary_text(SUMMARY)
    assert after.messages[1:] == [before.messages[-2], before.messages[0], before.messages[-1]]


def test_the_store_appends_refuses_a_changed_file_and_undo_cuts_back(tmp_path):
    from kimi_compact_tui.store import restore

    path = two_turns().write(tmp_path)
    data = path.read_bytes()
    loaded = load(path)
    session, fp = loaded.session, loaded.fingerprint
    plan = make_plan(session.messages, up_to=4)
    compacted = FMT.compacted_session(session, plan, SUMMARY, None)
    kw = dict(summary=SUMMARY, plan=plan, provenance=Provenance(provider="offline"))
    with open(path, "ab") as fh:  # the agent wrote a turn since we loaded
        fh.write(b'{"type":"queue-operation","operation":"enqueue","content":"x"}\n')
    with pytest.raises(ApplyError, match="grew by 63 bytes .*Claude Code is writing"):
        apply_compaction(session, compacted, loaded_fingerprint=fp, **kw)
    path.write_bytes(data)
    loaded = load(path)
    session, fp = loaded.session, loaded.fingerprint
    compacted = FMT.compacted_session(session, plan, SUMMARY, None)
    result = apply_compaction(session, compacted, loaded_fingerprint=fp, **kw)
    assert (
        result.policy == "append"
        and path.read_bytes() == data + state_of(compacted, ClaudeState).appended
    )
    undone = restore(path)
    assert undone.truncated_to == len(data) and path.read_bytes() == data


def _cli(config_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(config_dir.parent), "LANG": "C.UTF-8"}
    env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    return procs.run(
        [sys.executable, "-m", "kimi_compact_tui", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=env,
    )


def test_cli_by_session_id_compact_in_place_and_restore(tmp_path):
    config = tmp_path / "claude"
    path = two_turns().write(config)
    data = path.read_bytes()
    plan = _cli(config, "plan", SID, "--json")
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["format"] == "claude-code"
    done = _cli(config, "compact", SID, "--in-place", "--yes", "--provider", "offline")
    assert done.returncode == 0, done.stderr
    assert path.read_bytes().startswith(data) and len(path.read_bytes()) > len(data)
    back = _cli(config, "restore", str(path), "--yes")
    assert back.returncode == 0, back.stderr
    assert path.read_bytes() == data


def test_cli_refuses_a_transcript_ending_mid_turn_before_any_request(tmp_path):
    config = tmp_path / "claude"
    t = two_turns()
    t.user("Run the slow one")
    t.assistant([tool_use("toolu_slow", "Bash", {"command": "sleep 60"})])
    path = t.write(config)
    before = sorted(p.name for p in path.parent.iterdir())
    res = _cli(
        config, "compact", str(path), "--in-place", "--yes", "--up-to", "3",
        "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
    )  # fmt: skip
    assert res.returncode == 2
    assert "toolu_slow" in res.stderr and "mid-turn" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in path.parent.iterdir()) == before


def test_discover_lists_main_sessions_with_title_folder_and_count(tmp_path):
    config = tmp_path / "claude"
    path = two_turns().write(config)
    titled = Transcript(sid="0c6f8a52-2d3b-4a1c-8e9f-77aa55bb33cc", cwd="/work/other")
    titled.user("Something else")
    titled.assistant([text("Sure.")])
    titled.meta(type="custom-title", customTitle="My session", sessionId=titled.sid)
    titled.write(config, "-work-other")
    (path.parent / "agent-1234.jsonl").write_bytes(path.read_bytes())
    (path.parent / f"{SID}.jsonl.compact-audit.jsonl").write_text("{}\n")
    (config / "projects" / "-work-project" / SID / "subagents").mkdir(parents=True)
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    infos = FMT.discover(env, tmp_path)
    assert sorted((i.title, i.work_dir, i.message_count) for i in infos) == [
        ("My session", "/work/other", 2),
        ("Run echo hi", "/work/project", 7),
    ]
    assert FMT.find_session(SID, env, tmp_path) == SessionRef(path)
    assert FMT.find_session("not-an-id", env, tmp_path) is None
    assert FMT.resolve_folder(path.parent / SID) == path
    assert "2 Claude Code sessions under" in registry.discovery_note(infos, env, tmp_path)
    assert FMT.discovery_roots({}, tmp_path) == [tmp_path / ".claude" / "projects"]

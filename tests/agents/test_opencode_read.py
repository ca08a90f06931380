"""The opencode reader and compaction rows against the REAL opencode 1.18.33.

Sessions here are made by opencode itself (offline, against a fake Chat Completions
model). What opencode sends the model when it resumes is the truth: our message list
(``formats/opencode/history.py``) must equal it, before and after opencode's own
compaction; and the compaction rows we build (``formats/opencode/rows.py``), inserted
here in one transaction, must make opencode resume [its framing, our summary, the
kept messages, the new turn], leaving another session of the same database alone.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from kimi_compact_tui.formats.opencode.db import read_session
from kimi_compact_tui.formats.opencode.discover import list_sessions
from kimi_compact_tui.formats.opencode.history import History, resume_history
from kimi_compact_tui.formats.opencode.rows import build_compaction
from kimi_compact_tui.model import Message
from tests.agents.fake_model import Turn, text_turn
from tests.agents.harness import require_agent
from tests.agents.opencode import FakeOpencodeModel, Opencode, opencode_installed

OUR_SUMMARY = "OUR-SUMMARY: echoes were run, 2+2 is four."
OWN_SUMMARY = "OPENCODE-OWN-SUMMARY: the user ran echoes."
FRAMING = object()  # opencode's fixed question before a summary (its words, not ours)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Opencode, str, str]:
    """Two sessions in one database, written by opencode: A (4 turns, two real bash
    calls) and B (one turn). Tests work on clones."""
    require_agent(opencode_installed(), "opencode")
    root = tmp_path_factory.mktemp("opencode-template")
    with FakeOpencodeModel() as fake:
        oc = Opencode(root / "runner", fake)
        a = oc.create_session()
        b = oc.create_session([("MARK-B1 other session", [text_turn("MARK-B1 answer")])])
    assert a != b
    return oc, a, b


def _wire(message: Message) -> dict[str, Any] | object:
    """Our message as opencode puts it on the wire (Chat Completions)."""
    data = message.data
    if (data.get("opencode") or {}).get("framing"):
        return FRAMING
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": data["tool_call_id"], "content": data["content"]}
    text = "".join(p["text"] for p in message.parts() if p.get("type") == "text")
    out: dict[str, Any] = {"role": message.role, "content": text}
    thinking = "".join(p["think"] for p in message.parts() if p.get("type") == "think")
    if thinking:
        out["reasoning_content"] = thinking
    if message.tool_calls:
        out["tool_calls"] = message.tool_calls
    return out


def _sent_history(body: dict[str, Any], framing: set[int]) -> list[Any]:
    """The history opencode sent: after its system prompt, before the new turn; the
    messages at ``framing`` are opencode's fixed question (a user message of its own
    words, none of the session's)."""
    messages = body["messages"]
    assert messages[0]["role"] == "system"
    history: list[Any] = list(messages[1:-1])
    for i in framing:
        sent = history[i]
        assert sent["role"] == "user" and isinstance(sent["content"], str) and sent["content"]
        history[i] = FRAMING
    return history


def _assert_matches(history: History, body: dict[str, Any], prompt: str) -> None:
    ours = [_wire(m) for m in history.messages]
    framing = {i for i, m in enumerate(ours) if m is FRAMING}
    assert ours == _sent_history(body, framing)
    assert prompt in json.dumps(body["messages"][-1])


def _insert(db: Path, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
    """Write rows as a writer will: one transaction, taken before reading."""
    conn = sqlite3.connect(db, isolation_level=None, timeout=10)
    try:
        conn.execute("BEGIN IMMEDIATE")
        for sql, params in statements:
            conn.execute(sql, params)
        conn.execute("COMMIT")
    finally:
        conn.close()


def _user_rows(history: History) -> list[str]:
    return [
        m.id
        for m in history.rows.messages
        if m.role == "user" and any(p.type == "text" for p in m.parts)
    ]


def test_our_list_equals_what_opencode_sends_on_resume(template, tmp_path):
    oc, a, _b = template
    with FakeOpencodeModel() as fake:
        run = oc.clone(tmp_path / "oc", fake)
        history = resume_history(read_session(run.db, a))
        kinds = [m.role for m in history.messages]
        assert kinds.count("tool") == 2 and kinds.count("user") == 4
        assert any(p.get("type") == "think" for m in history.messages for p in m.parts())
        # The event log is not where opencode resumes from: without it, the same request.
        _insert(run.db, [("DELETE FROM event", ()), ("DELETE FROM event_sequence", ())])
        body = run.resume(a, "MARK-U5 resume")
    _assert_matches(history, body, "MARK-U5 resume")


def test_after_opencodes_own_compaction_we_read_what_it_resumes_and_ours_on_top_works(
    template, tmp_path
):
    oc, a, _b = template
    with FakeOpencodeModel(summary=OWN_SUMMARY) as fake:
        run = oc.clone(tmp_path / "oc", fake)
        run.compact(a)
        history = resume_history(read_session(run.db, a))
        assert history.compaction_id is not None and history.tail_start_id is not None
        assert history.messages[1].text() == OWN_SUMMARY
        body = run.resume(a, "MARK-U5 after its compaction")
        _assert_matches(history, body, "MARK-U5 after its compaction")

        # Ours on top of opencode's: keep from the last prompt on.
        rows = read_session(run.db, a)
        before = resume_history(rows)
        tail = _user_rows(before)[-1]
        _insert(run.db, build_compaction(rows, OUR_SUMMARY, tail).statements())
        history = resume_history(read_session(run.db, a))
        assert history.messages[1].text() == OUR_SUMMARY
        assert history.sent_rows[2] == tail and history.origins[2].message_id == tail
        body = run.resume(a, "MARK-U6 after ours")
        _assert_matches(history, body, "MARK-U6 after ours")


def test_our_compaction_rows_make_opencode_resume_our_summary_and_the_kept_messages(
    template, tmp_path
):
    oc, a, b = template
    with FakeOpencodeModel() as fake:
        run = oc.clone(tmp_path / "oc", fake)
        rows = read_session(run.db, a)
        other = read_session(run.db, b)
        original = resume_history(rows)
        tail = _user_rows(original)[2]  # keep from the third prompt on
        kept = original.messages[
            next(i for i, o in enumerate(original.origins) if o.message_id == tail) :
        ]
        # A clock behind every row: times and ids come from the rows.
        built = build_compaction(rows, OUR_SUMMARY, tail, now_ms=0)
        _insert(run.db, built.statements())

        history = resume_history(read_session(run.db, a))
        assert history.compaction_id == built.user_id
        assert history.messages[1].text() == OUR_SUMMARY
        assert list(history.messages[2:]) == list(kept)
        body = run.resume(a, "MARK-U5 after ours")
        _assert_matches(history, body, "MARK-U5 after ours")
        sent = body["messages"]
        assert sent[2] == {"role": "assistant", "content": OUR_SUMMARY}
        assert "MARK-U1" not in json.dumps(sent) and "MARK-U3" in json.dumps(sent)

        # Our rows are kept as written (opencode rebuilds nothing from its event log,
        # where we wrote nothing), also after opencode serve has started on the database.
        with run.serve() as url:
            listed = httpx.get(f"{url}/session/{a}/message", timeout=30).json()
        assert {m["info"]["id"] for m in listed} >= {built.user_id, built.summary_id}
        after = read_session(run.db, a)
        stored = {m.id: m.raw for m in after.messages}
        assert all(stored[r["id"]] == r["data"] for r in built.messages)

        # The other session of the database is untouched, and resumes as it was.
        assert read_session(run.db, b).fingerprint() == other.fingerprint()
        body_b = run.resume(b, "MARK-B2 still there")
        _assert_matches(resume_history(other), body_b, "MARK-B2 still there")


def test_a_sub_agents_session_is_listed_under_its_parent(tmp_path):
    """opencode's task tool runs a sub-agent in a child session (``parent_id`` set):
    the picker lists it under its parent, and the parent resumes as we read it (the
    child's work is only the task's result there)."""
    require_agent(opencode_installed(), "opencode")
    task = {"description": "MARK-SUB job", "prompt": "MARK-SUB do it", "subagent_type": "general"}
    with FakeOpencodeModel() as fake:
        oc = Opencode(tmp_path / "oc", fake)
        fake.script(
            Turn(text="Delegating.", tool_names=("task",), tool_args=task),
            text_turn("MARK-SUB-A child done"),
            text_turn("MARK-A1 parent done"),
        )
        sid = oc.run("MARK-U1 delegate").check().session_id()
        listed = list_sessions(oc.db)
        assert [s.session_id for s in listed if not s.marks] == [sid]
        (child,) = [s for s in listed if s.parent_id == sid]  # listed, marked a sub-agent's
        assert "MARK-SUB" in child.title and child.message_count == 2
        history = resume_history(read_session(oc.db, sid))
        assert "MARK-SUB-A child done" in history.messages[2].content
        body = oc.resume(sid, "MARK-U2 next")
    _assert_matches(history, body, "MARK-U2 next")


def test_a_pending_undo_is_read_as_opencode_resumes_after_it(template, tmp_path):
    """opencode's undo (``POST /session/<id>/revert``) only marks the session; the next
    prompt deletes the undone rows first. We read the session as after that."""
    oc, a, _b = template
    with FakeOpencodeModel() as fake:
        run = oc.clone(tmp_path / "oc", fake)
        third = _user_rows(resume_history(read_session(run.db, a)))[2]
        with run.serve() as url:
            reply = httpx.post(f"{url}/session/{a}/revert", json={"messageID": third}, timeout=60)
            assert reply.status_code == 200, reply.text[:500]
        rows = read_session(run.db, a)
        assert rows.session.revert == {"messageID": third} and rows.message(third) is not None
        history = resume_history(rows)
        assert "MARK-U3" not in str([m.data for m in history.messages])
        body = run.resume(a, "MARK-U5 after the undo")
    _assert_matches(history, body, "MARK-U5 after the undo")

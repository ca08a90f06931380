"""Codex CLI 0.171.0 resumes what we write.

The session was written by the real Codex (4 turns, 2 real shell tool calls: ``echo
hello`` and ``echo world``) against a fake Responses API. Our tool runs as a user runs
it (``kimi-compact-tui compact ROLLOUT --in-place --yes --provider openai ...`` against
a fake chat model, ``kimi-compact-tui restore ROLLOUT --yes``); Codex is then resumed
with ``codex exec resume ID PROMPT`` and the ``input`` it sends is compared with our
reading of the rollout.

What Codex sends on resume: its base instructions (a developer message built from
``session_meta``), then its history, then the new turn (the prompt, after the context
Codex shows again when it has none in the history, as after a compaction).
"""

from __future__ import annotations

import json
import sqlite3
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.formats.codex import FORMAT as FMT
from kimi_compact_tui.model import Message
from tests.agents.codex_runner import Codex, codex_installed, shared_codex_template
from tests.agents.fake_model import FakeModel, Turn
from tests.agents.fake_responses import FakeResponses
from tests.agents.harness import require_agent, run_ours
from tests.factories.codex import codex_state

pytestmark = pytest.mark.agents

SUMMARY = "FAKE SUMMARY: the user ran echo hello and echo world and asked two questions."
RESUME_PROMPT = "Where were we?"


class AppendingModel(FakeModel):
    """Our compaction's fake chat model; appends a line to ``target`` while it answers a
    compaction (as a running Codex would)."""

    target: Path | None = None

    def _next_turn(self, body: dict[str, Any]) -> tuple[str, Turn]:
        kind, turn = super()._next_turn(body)
        if kind == "compaction" and self.target is not None:
            with open(self.target, "ab") as fh:
                fh.write(b'{"timestamp":"2026-01-01T00:00:00.000Z","type":"event_msg",')
                fh.write(b'"payload":{"type":"token_count","info":null}}\n')
        return kind, turn


@pytest.fixture(scope="module")
def chat():
    with AppendingModel(summary=SUMMARY, lifetime=600) as fm:
        yield fm


@pytest.fixture(scope="module")
def responses():
    with FakeResponses(summary="FAKE-CODEX-SUMMARY: hello, then world.", lifetime=600) as fm:
        yield fm


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    require_agent(codex_installed(), "Codex")
    return shared_codex_template(tmp_path_factory)


# --- what Codex sent, as comparable tuples ----------------------------------------------


def _text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(
        p.get("text", "") for p in content or [] if p.get("type") in ("input_text", "output_text")
    )


def sent_messages(items: list[dict[str, Any]]) -> list[tuple]:
    """Responses API input items as (role, text, [call ids], tool call id): an assistant
    turn's reasoning, text and calls are one message; developer messages and the context
    Codex writes as user messages are ``system``."""
    out: list[tuple] = []
    merging = False
    for item in items:
        kind = item.get("type")
        if kind == "message" and item["role"] == "assistant" or kind == "function_call":
            if not merging:
                out.append(("assistant", "", [], None))
                merging = True
            role, text, calls, _ = out[-1]
            if kind == "function_call":
                calls = calls + [item["call_id"]]
            else:
                text += _text(item)
            out[-1] = (role, text, calls, None)
            continue
        if kind == "reasoning":
            if not merging:
                out.append(("assistant", "", [], None))
                merging = True
            continue
        merging = False
        if kind == "function_call_output":
            out.append(("tool", item["output"], [], item["call_id"]))
        elif kind == "message":
            context = item["role"] == "developer" or _text(item).startswith("<environment_context>")
            out.append(("system" if context else "user", _text(item), [], None))
        else:
            out.append((kind, "", [], None))
    return out


def ours(messages: list[Message]) -> list[tuple]:
    return [(m.role, m.text(), [c["id"] for c in m.tool_calls], m.tool_call_id) for m in messages]


def split_request(body: dict[str, Any], prompt: str = RESUME_PROMPT):
    """(base instructions, the history, the new turn) of a resume request: the new turn
    is the prompt and the context Codex put right before it."""
    items = body["input"]
    assert items[0]["type"] == "message" and items[0]["role"] == "developer"
    end = max(
        i for i, it in enumerate(items) if it.get("type") == "message" and _text(it) == prompt
    )
    start = end
    while start > 1 and sent_messages([items[start - 1]])[0][0] == "system":
        start -= 1
    return items[0], items[1:start], items[start:]


def _load(codex: Codex, sid: str):
    path = codex.rollout_file(sid)
    return FMT.parse(path.read_bytes(), path)


def _our_compact(codex: Codex, sid: str, chat: FakeModel, *extra: str) -> tuple[int, str, str]:
    return run_ours(
        ["compact", str(codex.rollout_file(sid)), "--in-place", "--yes", "--provider", "openai"]
        + ["--base-url", chat.base_url, "--model", chat.model, *extra],
        codex.root,
    )


def projection(codex: Codex) -> tuple[int, int]:
    """Codex's UI projection of the rollout: (next byte offset, next ordinal)."""
    con = sqlite3.connect(codex.state / "thread_history_1.sqlite")
    try:
        (row,) = con.execute(
            "select next_rollout_byte_offset, next_rollout_ordinal "
            "from thread_history_projection_state"
        ).fetchall()
    finally:
        con.close()
    return row


def normalized(value: Any, codex: Codex) -> Any:
    """``value`` with the copy's own state folder (inside Codex's skill paths) replaced,
    to compare what two copies of one session sent."""
    return json.loads(json.dumps(value).replace(str(codex.state), "<CODEX_HOME>"))


@pytest.fixture(scope="module")
def original(template, responses):
    """An untouched copy: our reading, its projection and Codex's resume (normalized)."""
    runner, sid = template
    codex = runner.clone(responses)
    session = _load(codex, sid)
    before = projection(codex)
    body = normalized(codex.resume(sid, RESUME_PROMPT), codex)
    return sid, session, before, body


# --- the checks -------------------------------------------------------------------------


def test_our_messages_equal_the_history_codex_sends_on_resume(original):
    _, session, (offset, _), body = original
    data = codex_state(session).data
    base, history, new_turn = split_request(body)
    state = codex_state(session)
    # session_meta's base instructions, as Codex renders them for the tools it offers
    assert _text(base)[:200] == session.meta.system_prompt[:200]
    # Codex's own context (developer instructions, environment) comes first: its prefix
    prefix = sent_messages(history[: state.prefix])
    assert [role for role, *_ in prefix] == ["system", "system"]
    assert ours(session.messages) == sent_messages(history[state.prefix :])
    assert [it["type"] for it in new_turn] == ["message"]
    roles = [m.role for m in session.messages]
    assert roles.count("tool") == 2 and "hello" in session.messages[roles.index("tool")].text()
    assert session.warnings == [] and state.open_turn is None
    assert offset == len(data)  # the projection had read the whole rollout


# 6: the kept range starts at a user message; 7: the last compacted one is a user message.
@pytest.mark.parametrize("up_to", [None, 6, 7])
def test_codex_resumes_our_write_as_summary_then_the_kept_messages(
    up_to, template, original, responses, chat
):
    runner, sid = template
    _, session, _, _ = original
    codex = runner.clone(responses)
    data = codex.rollout_file(sid).read_bytes()
    offset, ordinal = projection(codex)
    extra = [] if up_to is None else ["--up-to", str(up_to)]
    status, out, err = _our_compact(codex, sid, chat, *extra)
    assert status == 0, err[-2000:]
    rollout = codex.rollout_file(sid)
    after = rollout.read_bytes()
    assert after.startswith(data)  # appended: earlier bytes unchanged
    (record,) = [json.loads(x) for x in after[len(data) :].splitlines()]
    assert record["type"] == "compacted" and record["ordinal"] == ordinal
    assert projection(codex) == (offset, ordinal)  # Codex's index is untouched by us
    boundary = len(session.messages) - 2 if up_to is None else up_to
    if up_to is None:  # the preserved tail: the last two user/assistant messages
        assert ours(session.messages[boundary:])[0][0] == "user"
    kept = session.messages[boundary:]

    body = codex.resume(sid, RESUME_PROMPT)
    base, history, new_turn = split_request(body)
    assert normalized(base, codex) == split_request(original[3])[0]
    assert history[0] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": build_compact_summary_text(SUMMARY)}],
    }
    assert sent_messages(history[1:]) == ours(kept)
    assert _text(new_turn[-1]) == RESUME_PROMPT
    # Codex shows its context again in the new turn, before the prompt
    assert [m[0] for m in sent_messages(new_turn)] == ["system", "system", "user"]
    sent_texts = json.dumps(body["input"], ensure_ascii=False)
    for m in session.messages[:boundary]:
        if m.text():
            assert m.text() not in sent_texts, f"compacted message sent: {m.text()!r}"
    # our reading of the new rollout is what Codex sent (after its prefix)
    reread = _load(codex, sid)
    assert ours(reread.messages[: len(history)]) == sent_messages(history)
    # Codex's projection read past our record and on: not confused by it
    assert projection(codex)[0] == rollout.stat().st_size


def test_after_restore_codex_resumes_the_original_history(template, original, responses, chat):
    runner, sid = template
    _, _, proj, before = original
    codex = runner.clone(responses)
    data = codex.rollout_file(sid).read_bytes()
    status, _, err = _our_compact(codex, sid, chat, "--up-to", "6")
    assert status == 0, err[-2000:]
    rollout = codex.rollout_file(sid)
    assert rollout.read_bytes() != data
    status, out, err = run_ours(["restore", str(rollout), "--yes"], codex.root)
    assert status == 0, err[-2000:]
    assert rollout.read_bytes() == data
    assert projection(codex) == proj  # consistent with the file again
    after = normalized(codex.resume(sid, RESUME_PROMPT), codex)
    assert after["input"][:-1] == before["input"][:-1]
    assert sent_messages(after["input"][-1:]) == sent_messages(before["input"][-1:])


def test_after_codex_compacts_itself_our_messages_match_its_resume(template, responses, chat):
    runner, sid = template
    codex = runner.clone(responses)
    run = codex.compact(sid, "Let us go on.")
    (compaction,) = run.compaction_bodies()
    session = _load(codex, sid)
    assert codex_state(session).compactions == 1
    body = codex.resume(sid, RESUME_PROMPT)
    _, history, _ = split_request(body)
    state = codex_state(session)
    assert state.prefix == 0  # its replacement history starts with the user's messages
    assert ours(session.messages) == sent_messages(history)
    texts = [m.text() for m in session.messages]
    assert "FAKE-CODEX-SUMMARY: hello, then world." in "".join(texts)
    # then ours on top of it: Codex resumes our summary and the kept messages
    kept = _load(codex, sid).messages[3:]
    status, _, err = _our_compact(codex, sid, chat, "--up-to", "3")
    assert status == 0, err[-2000:]
    body = codex.resume(sid, RESUME_PROMPT)
    _, history, _ = split_request(body)
    assert _text(history[0]) == build_compact_summary_text(SUMMARY)
    assert sent_messages(history[1 : 1 + len(kept)]) == ours(kept)


def test_a_rollout_appended_to_while_we_stream_is_refused(template, responses, chat):
    runner, sid = template
    codex = runner.clone(responses)
    rollout = codex.rollout_file(sid)
    data = rollout.read_bytes()
    chat.target = rollout
    try:
        status, out, err = _our_compact(codex, sid, chat)
    finally:
        chat.target = None
    assert status == 2
    (error,) = [line for line in err.splitlines() if line.startswith("kimi-compact-tui: error:")]
    assert str(rollout) in error
    grown = rollout.read_bytes()
    assert grown.startswith(data) and grown.count(b"\n") == data.count(b"\n") + 1
    assert b'"compacted"' not in grown[len(data) :]


def _png() -> bytes:
    rows = b"".join(b"\x00" + bytes((x * 7 + y) % 256 for x in range(48)) for y in range(16))
    ihdr = struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + b"".join(
        struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        for kind, body in ((b"IHDR", ihdr), (b"IDAT", zlib.compress(rows)), (b"IEND", b""))
    )


def test_an_image_and_reasoning_are_read_as_codex_resumes_them(template, responses, chat):
    runner, sid = template
    codex = runner.clone(responses)
    image = codex.root / "pic.png"
    image.write_bytes(_png())
    responses.script(Turn(text="A small gradient.", reasoning="Looking at the pixels."))
    codex.run("What is in this picture?", sid, images=(image,)).check()
    session = _load(codex, sid)
    (user,) = [m for m in session.messages if m.media_types()]
    assert user.media_types() == ["image_url"]
    assert user.parts()[1]["image_url"]["url"].startswith("codex-image:image/png;sha256=")
    assert "base64" not in json.dumps([m.data for m in session.messages])
    reply = session.messages[-1]
    assert reply.has_think() and reply.text() == "A small gradient."
    body = codex.resume(sid, RESUME_PROMPT)
    _, history, _ = split_request(body)
    state = codex_state(session)
    assert ours(session.messages) == sent_messages(history[state.prefix :])
    assert "reasoning" in [it["type"] for it in history]  # sent back to the model
    assert any(p.get("type") == "input_image" for it in history for p in it.get("content") or [])
    # our compaction never sends the image: the request's parts are text only
    status, _, err = _our_compact(codex, sid, chat)
    assert status == 0, err[-2000:]
    (request,) = [r.json for r in chat.compaction_requests()[-1:]]
    assert "base64" not in json.dumps(request) and "Looking at the pixels" not in json.dumps(
        request
    )


def test_codex_rebuilds_its_index_from_the_rollout_not_the_files_we_keep_beside_it(
    template, responses, chat
):
    runner, sid = template
    codex = runner.clone(responses)
    status, _, err = _our_compact(codex, sid, chat)
    assert status == 0, err[-2000:]
    rollout = codex.rollout_file(sid)
    beside = sorted(p.name for p in rollout.parent.iterdir())
    assert len(beside) == 3  # the rollout, our restore point and our audit log
    for db in codex.state.glob("*.sqlite*"):
        db.unlink()  # Codex rebuilds its index from the session files
    body = codex.resume(sid, RESUME_PROMPT)
    _, history, _ = split_request(body)
    assert _text(history[0]) == build_compact_summary_text(SUMMARY)
    assert sorted(p.name for p in rollout.parent.iterdir()) == beside
    con = sqlite3.connect(codex.state / "state_5.sqlite")
    try:
        paths = [row[0] for row in con.execute("select rollout_path from threads")]
    finally:
        con.close()
    assert paths == [str(rollout)]

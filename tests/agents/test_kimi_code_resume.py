"""kimi-code 2.1.0 resumes what we write.

Every session here was written by the real kimi-code (4 turns, 2 real shell tool
calls: ``echo hello`` and ``echo world``) against the fake model. Our tool runs as a
user runs it: ``kimi-compact-tui compact SESSION --in-place --yes --provider openai
--base-url ... --model ...`` and ``kimi-compact-tui restore SESSION --yes`` on the
session folder. kimi-code is then resumed with ``kimi -S ID -p PROMPT`` and the
request it sends the fake model is compared with our reading of the journal.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.formats.kimi_code.convert import blob_file, media_urls
from kimi_compact_tui.formats.kimi_code.plugin import KimiCodeFormat
from kimi_compact_tui.model import Message
from tests.agents.fake_model import FakeModel, Turn
from tests.agents.harness import KimiCode, run_ours

pytestmark = pytest.mark.agents

SUMMARY = "FAKE SUMMARY: the user ran echo hello and echo world and asked two questions."
RESUME_PROMPT = "Where were we?"
FMT = KimiCodeFormat()
WALL_TIME = re.compile(r"^Wall time: \d+\.\d{3} seconds\n")


class AppendingModel(FakeModel):
    """A fake model that appends a record to ``target`` when it is asked for a
    compaction (as kimi-code would while our summary streams)."""

    target: Path | None = None

    def _next_turn(self, body: dict[str, Any]) -> tuple[str, Turn]:
        kind, turn = super()._next_turn(body)
        if kind == "compaction" and self.target is not None:
            with open(self.target, "ab") as fh:
                fh.write(b'{"type":"turn.prompt","agentId":"main","input":[],"time":1}\n')
        return kind, turn


@pytest.fixture(scope="module")
def model():
    with AppendingModel(summary=SUMMARY, lifetime=1800) as fm:
        yield fm


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if p.get("type") == "text")
    return ""


def _calls(calls: list[dict] | None) -> list[tuple]:
    return [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls or []]


def sent(message: dict[str, Any]) -> tuple:
    """A message of kimi-code's request, as (role, text, tool calls, tool call id); the
    wall time kimi-code puts before a shell result is not part of the result."""
    text = _text(message.get("content"))
    if message["role"] == "tool":
        text = WALL_TIME.sub("", text)
    return (message["role"], text, _calls(message.get("tool_calls")), message.get("tool_call_id"))


def ours(message: Message) -> tuple:
    return (message.role, message.text(), _calls(message.tool_calls), message.tool_call_id)


def as_sent(messages: list[Message]) -> list[tuple]:
    """``messages`` as kimi-code sends them: a tool result whose call is not before it
    (its call was compacted) is left out of the request (kimi-code keeps it in its
    history)."""
    called: set[str] = set()
    out = []
    for m in messages:
        called.update(c["id"] for c in m.tool_calls)
        if m.role == "tool" and m.tool_call_id not in called:
            continue
        out.append(ours(m))
    return out


def history_of(body: dict[str, Any]) -> tuple[dict, list[dict], list[dict]]:
    """(system prompt, the history, the new turn) of a resume request: the new turn
    starts at the resume prompt; everything after it is what kimi-code injected."""
    messages = body["messages"]
    assert messages[0]["role"] == "system"
    start = max(i for i, m in enumerate(messages) if _text(m.get("content")) == RESUME_PROMPT)
    new_turn = messages[start:]
    assert all(_text(m["content"]).startswith("<system-reminder>") for m in new_turn[1:])
    return messages[0], messages[1:start], new_turn


def _load(code: KimiCode, sid: str):
    wire = code.wire_file(sid)
    return FMT.parse(wire.read_bytes(), wire)


def _our_compact(code: KimiCode, sid: str, *extra: str) -> tuple[int, str, str]:
    return run_ours(
        ["compact", str(code.session_dir(sid)), "--in-place", "--yes", "--provider", "openai"]
        + ["--base-url", code.fake.base_url, "--model", code.fake.model, *extra],
        code.root,
    )


@pytest.fixture(scope="module")
def original(kimi_code_session_template, tmp_path_factory, model):
    """An untouched copy: our reading of it, its journal bytes and kimi-code's resume
    request."""
    template, sid = kimi_code_session_template
    code = template.clone(tmp_path_factory.mktemp("original") / "code", model)
    session = _load(code, sid)
    journal = code.wire_file(sid).read_bytes()
    return sid, session, journal, code.resume(sid, RESUME_PROMPT)


def test_our_messages_equal_the_history_kimi_code_sends_on_resume(original):
    _, session, _, body = original
    system, history, _ = history_of(body)
    assert [ours(m) for m in session.messages] == [sent(m) for m in history]
    # the history has the real shell calls and results, and kimi-code's reminders
    roles = [m.role for m in session.messages]
    assert roles.count("tool") == 2 and "hello" in session.messages[roles.index("tool")].text()
    assert session.meta.system_prompt == system["content"]
    assert session.warnings == [] and session.format_state.open_turn is None


# 4 cuts between the echo hello call and its result (allowed explicitly; kimi-code
# then leaves the result out of its request); 9 keeps the last turn's call.
@pytest.mark.parametrize("up_to", [None, 4, 9])
def test_kimi_code_resumes_our_write_as_summary_then_the_kept_messages(
    up_to, kimi_code_session_template, original, tmp_path, model
):
    template, sid = kimi_code_session_template
    _, session, journal, before = original
    code = template.clone(tmp_path / "code", model)
    extra = [] if up_to is None else ["--up-to", str(up_to)]
    extra += ["--allow-split"] if up_to == 4 else []
    status, out, err = _our_compact(code, sid, *extra)
    assert status == 0, err[-2000:]
    after_journal = code.wire_file(sid).read_bytes()
    assert after_journal.startswith(journal)  # appended: earlier bytes unchanged
    appended = [json.loads(x) for x in after_journal[len(journal) :].split(b"\n") if x]
    assert [r["type"] for r in appended] == [
        "full_compaction.begin",
        "context.apply_compaction",
        "token_counting.rebased",
        "full_compaction.complete",
    ]
    boundary = appended[1]["compactedCount"]
    if up_to is not None:
        assert boundary == up_to
    kept = session.messages[boundary:]
    after = code.resume(sid, RESUME_PROMPT)
    system, history, new_turn = history_of(after)
    assert system == history_of(before)[0]  # its own system prompt
    assert history[0] == {"role": "user", "content": build_compact_summary_text(SUMMARY)}
    assert [sent(m) for m in history[1:]] == as_sent(kept)
    assert new_turn[0] == {"role": "user", "content": RESUME_PROMPT}
    assert as_sent(_load(code, sid).messages[: 1 + len(kept)]) == [sent(m) for m in history]


def test_after_restore_kimi_code_resumes_the_original_history(
    kimi_code_session_template, original, tmp_path, model
):
    template, sid = kimi_code_session_template
    _, _, journal, before = original
    code = template.clone(tmp_path / "code", model)
    status, _, err = _our_compact(code, sid, "--up-to", "5")
    assert status == 0, err[-2000:]
    wire = code.wire_file(sid)
    assert wire.read_bytes() != journal
    status, out, err = run_ours(["restore", str(code.session_dir(sid)), "--yes"], code.root)
    assert status == 0, err[-2000:]
    assert wire.read_bytes() == journal
    after = code.resume(sid, RESUME_PROMPT)
    assert history_of(after)[:2] == history_of(before)[:2]


def test_a_journal_appended_to_while_we_stream_is_refused(
    kimi_code_session_template, tmp_path, model
):
    template, sid = kimi_code_session_template
    code = template.clone(tmp_path / "code", model)
    wire = code.wire_file(sid)
    journal = wire.read_bytes()
    model.target = wire
    try:
        status, out, err = _our_compact(code, sid)
    finally:
        model.target = None
    assert status == 2
    (error,) = [line for line in err.splitlines() if line.startswith("kimi-compact-tui: error:")]
    assert str(wire) in error
    grown = wire.read_bytes()
    assert grown.startswith(journal) and grown.count(b"\n") == journal.count(b"\n") + 1
    assert b"context.apply_compaction" not in grown[len(journal) :]


# --- journals kimi-code folds differently from a plain list -----------------------------

SYNTHETIC = "(stands for kimi-code's own text)"


def _comparable(session) -> list[tuple]:
    """Our messages as kimi-code sends them: one we stand in for (an interrupted call's
    result, a compaction note) compares by role and tool call only; adjacent prompts
    of the user are sent as one message (their texts joined by a blank line)."""
    out: list[tuple] = []
    merging = False
    for m in session.messages:
        meta = m.data.get("kimi_code") or {}
        prompt = m.role == "user" and (meta.get("origin") or {}).get("kind") == "user"
        if prompt and merging:
            out[-1] = ("user", out[-1][1] + "\n\n" + m.text(), [], None)
        elif meta.get("synthetic"):
            out.append((m.role, SYNTHETIC, [], m.tool_call_id))
        else:
            out.append(ours(m))
        merging = prompt
    return out


def _check_resume(code: KimiCode, sid: str) -> list[tuple]:
    """Resume; assert kimi-code sent exactly our history; return it."""
    session = _load(code, sid)
    expected = _comparable(session)
    _, history, _ = history_of(code.resume(sid, RESUME_PROMPT))
    got = [sent(m) for m in history]
    for i, e in enumerate(expected):
        if e[1] == SYNTHETIC and i < len(got):
            assert got[i][1], f"kimi-code sent an empty message {i}"
            got[i] = (got[i][0], SYNTHETIC, [], got[i][3])
    assert got == expected
    return expected


def _append(wire: Path, *records: dict[str, Any]) -> None:
    with open(wire, "ab") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")


def _undo_one_turn(wire: Path) -> None:
    """kimi-code's undo of the last turn, as its ``switchBranch`` writes it."""
    data = wire.read_bytes()
    lines = [json.loads(x) for x in data.split(b"\n") if x.strip()]
    prompt_line = max(
        i
        for i, r in enumerate(lines, 1)
        if r["type"] == "context.append_message"
        and (r["message"].get("origin") or {}).get("kind") == "user"
    )
    edge = len(lines) + 1  # the line the switch record gets
    t = lines[-1]["time"] + 1
    _append(
        wire,
        {
            "type": "agent.switched",
            "agentId": "main",
            "branch": "b1",
            "reason": "undo",
            "base": {"branch": "main", "line": prompt_line - 1},
            "turns": 1,
            "legacyUndoLine": edge + 1,
            "time": t,
        },
        {"type": "context.undo", "agentId": "main", "count": 1, "time": t},
        {"type": "context.undone", "agentId": "main", "turns": 1, "fromTurnId": 3, "time": t},
    )


def _interrupted_call(wire: Path) -> None:
    """A turn whose shell call was interrupted before its result was recorded."""
    t = json.loads(wire.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[1])["time"] + 1

    def loop(event: dict) -> dict:
        return {"type": "context.append_loop_event", "agentId": "main", "event": event, "time": t}

    _append(
        wire,
        {
            "type": "context.append_message",
            "agentId": "main",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "Run the slow one"}],
                "id": "msg_slow",
                "toolCalls": [],
                "origin": {"kind": "user"},
            },
            "time": t,
        },
        loop({"type": "step.begin", "uuid": "s-slow", "turnId": "4", "step": 1}),
        loop(
            {
                "type": "tool.call",
                "uuid": "c-slow",
                "turnId": "4",
                "step": 1,
                "stepUuid": "s-slow",
                "toolCallId": "call_slow",
                "name": "Bash",
                "args": {"command": "sleep 60"},
            }
        ),
        loop(
            {
                "type": "step.end",
                "uuid": "s-slow",
                "turnId": "4",
                "step": 1,
                "finishReason": "interrupted",
            }
        ),
    )


@pytest.mark.parametrize("change", ["undo", "clear", "interrupted"])
def test_kimi_code_resumes_undo_clear_and_interrupted_calls_as_we_read_them(
    change, kimi_code_session_template, original, tmp_path, model
):
    template, sid = kimi_code_session_template
    _, session, _, _ = original
    code = template.clone(tmp_path / "code", model)
    wire = code.wire_file(sid)
    if change == "undo":
        _undo_one_turn(wire)
    elif change == "clear":
        _append(wire, {"type": "context.clear", "agentId": "main", "time": 1})
    else:
        _interrupted_call(wire)
    history = _check_resume(code, sid)
    if change == "undo":
        assert len(history) < len(session.messages)
        assert ("assistant", "Paris.", [], None) not in history
    elif change == "clear":
        assert history == []
    else:
        assert history[-2][2][0][0] == "call_slow" and history[-1][3] == "call_slow"


def test_kimi_codes_own_compaction_then_ours(kimi_code_session_template, tmp_path, model):
    template, sid = kimi_code_session_template
    code = template.clone(tmp_path / "code", model)
    code.compact(sid)  # kimi-code's /compact: user messages kept, then its summary
    theirs = _check_resume(code, sid)
    # the four prompts (sent as one message), its summary, its continuation note
    assert len(theirs) == 3 and "echo world" in theirs[0][1] and SUMMARY in theirs[1][1]
    status, _, err = _our_compact(code, sid, "--up-to", "3")
    assert status == 0, err[-2000:]
    after = _check_resume(code, sid)
    assert after[0] == ("user", build_compact_summary_text(SUMMARY), [], None)


def test_an_image_is_kept_as_a_blob_reference(kimi_code_session_template, tmp_path, model):
    from tests.agents.acp_client import AcpClient

    rows = b"".join(b"\x00" + bytes((x * 7 + y) % 256 for x in range(96)) for y in range(64))
    png = b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 32, 64, 8, 2, 0, 0, 0))
    png += _png_chunk(b"IDAT", zlib.compress(rows, 0)) + _png_chunk(b"IEND", b"")
    payload = base64.b64encode(png).decode()
    template, sid = kimi_code_session_template
    code = template.clone(tmp_path / "code", model)
    code.write_config()
    image = {"type": "image", "mimeType": "image/png", "data": payload}
    with AcpClient(code._args("acp"), code.env(), code.workdir) as acp:
        acp.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        acp.call("session/load", {"sessionId": sid, "cwd": str(code.workdir), "mcpServers": []})
        prompt = [image, {"type": "text", "text": "What is in this picture?"}]
        acp.call("session/prompt", {"sessionId": sid, "prompt": prompt})
    (user,) = [m for m in _load(code, sid).messages if m.media_types()]
    (url,) = media_urls(user)
    digest = hashlib.sha256(payload.encode()).hexdigest()
    assert url == f"blobref:image/png;{digest}"  # the reference, never the bytes
    assert blob_file(code.wire_file(sid), url).read_bytes() == png
    _check_resume(code, sid)


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

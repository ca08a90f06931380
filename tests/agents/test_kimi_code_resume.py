"""kimi-code 2.1.0 resumes what we write.

Every session here was written by the real kimi-code (4 turns, 2 real shell tool
calls: ``echo hello`` and ``echo world``) against the fake model. Our tool runs as a
user runs it: ``kimi-compact-tui compact SESSION --in-place --yes --provider openai
--base-url ... --model ...`` on the session folder, ``kimi-compact-tui restore
.../wire.jsonl --yes``. kimi-code is then resumed with ``kimi -S ID -p PROMPT`` and the
request it sends the fake model is compared with our reading of the journal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.formats.kimi_code import KimiCodeFormat
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
    with AppendingModel(summary=SUMMARY, lifetime=300) as fm:
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
    assert session.system_prompt == system["content"]
    assert session.extra["warnings"] == [] and session.extra["open_turn"] is None


# 4 cuts between the echo hello call and its result; 9 keeps the last turn's call.
@pytest.mark.parametrize("up_to", [None, 4, 9])
def test_kimi_code_resumes_our_write_as_summary_then_the_kept_messages(
    up_to, kimi_code_session_template, original, tmp_path, model
):
    template, sid = kimi_code_session_template
    _, session, journal, before = original
    code = template.clone(tmp_path / "code", model)
    extra = [] if up_to is None else ["--up-to", str(up_to)]
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
    # what we read back is what kimi-code resumed
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
    status, _, err = run_ours(["restore", str(wire), "--yes"], code.root)
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

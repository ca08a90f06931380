"""Claude Code 2.1.197 resumes what we write.

Every session here was written by the real Claude Code (4 turns, 2 real Bash tool
calls: ``echo hello`` and ``echo world``) against a fake Anthropic API. Our tool runs
as a user runs it (``kimi-compact-tui compact TRANSCRIPT --in-place --yes --provider
openai ...`` against a fake OpenAI-compatible model, and ``kimi-compact-tui restore``).
Claude Code is then resumed with ``claude -p --resume ID PROMPT`` and the request it
sends is compared with our reading of the transcript.

How a request is compared (:func:`sent` and :func:`ours`): Claude Code sends tool
results as user content and merges adjacent messages of one role; it puts its own
context reminder before the first prompt (its prefix, dropped here) and renders
attachments its own way (system messages compare by role only).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.formats.base import state_of
from kimi_compact_tui.formats.claude_code import FORMAT as FMT
from kimi_compact_tui.formats.claude_code import ClaudeState
from kimi_compact_tui.model import Message
from tests.agents.claude_code import ClaudeCode, claude_code_installed, claude_template
from tests.agents.fake_anthropic import FakeAnthropic
from tests.agents.fake_model import FakeModel, Turn
from tests.agents.harness import require_agent, run_ours

pytestmark = pytest.mark.agents

SUMMARY = "FAKE SUMMARY: the user ran echo hello and echo world and asked two questions."
RESUME_PROMPT = "Where were we?"
REMINDER = "<system-reminder>"


class AppendingModel(FakeModel):
    """A fake OpenAI-compatible model that appends a record to ``target`` when asked
    for a compaction (as Claude Code would while our summary streams)."""

    target: Path | None = None

    def _next_turn(self, body: dict[str, Any]) -> tuple[str, Turn]:
        kind, turn = super()._next_turn(body)
        if kind == "compaction" and self.target is not None:
            with open(self.target, "ab") as fh:
                fh.write(b'{"type":"queue-operation","operation":"enqueue","content":"x"}\n')
        return kind, turn


@pytest.fixture(scope="module")
def model():
    with AppendingModel(summary=SUMMARY, lifetime=900) as fm:
        yield fm


@pytest.fixture(scope="module")
def anthropic():
    with FakeAnthropic(summary="FAKE-CLAUDE-SUMMARY of the session", lifetime=900) as fa:
        yield fa


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    require_agent(claude_code_installed(), "Claude Code")
    return claude_template(tmp_path_factory)


# --- comparing requests ------------------------------------------------------------------


def _text(value: str) -> list[tuple]:
    value = value.strip("\n")
    return [("text", value)] if value.strip() else []


def _blocks(content: Any) -> list[tuple]:
    if isinstance(content, str):
        return _text(content)
    out: list[tuple] = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            out += _text(block["text"])
        elif kind == "thinking":
            out.append(("thinking", block["thinking"]))
        elif kind == "tool_use":
            out.append(("tool_use", block["id"], block["name"], block["input"]))
        elif kind == "tool_result":
            out.append(("tool_result", block["tool_use_id"], _result_text(block["content"])))
        else:
            out.append((kind,))
    return out


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def _merge(out: list[list], role: str, blocks: list[tuple]) -> None:
    if role == "system":
        blocks = [("system",)]
    if out and out[-1][0] == role:
        if role != "system":
            out[-1][1].extend(blocks)
    else:
        out.append([role, list(blocks)])


def sent(messages: list[dict[str, Any]]) -> list[tuple]:
    """Request messages as (role, blocks), the agent's prefix reminder dropped."""
    out: list[list] = []
    for i, m in enumerate(messages):
        blocks = _blocks(m["content"])
        if i == 0:
            while blocks and blocks[0][0] == "text" and blocks[0][1].startswith(REMINDER):
                blocks.pop(0)
        _merge(out, m["role"], blocks)
    return [(role, tuple(blocks)) for role, blocks in out]


def ours(messages: list[Message]) -> list[tuple]:
    """Our messages as Claude Code sends them."""
    out: list[list] = []
    for m in messages:
        if m.role == "tool":
            blocks = [("tool_result", m.tool_call_id, m.text())]
            role = "user"
        else:
            role = m.role
            blocks = [("thinking", p["think"]) for p in m.parts() if p.get("type") == "think"]
            blocks += [b for t in m.text_parts() for b in _text(t)]
            for call in m.tool_calls:
                args = json.loads(call["function"]["arguments"])
                blocks.append(("tool_use", call["id"], call["function"]["name"], args))
        _merge(out, role, blocks)
    return [(role, tuple(blocks)) for role, blocks in out]


def system_prompt(body: dict[str, Any], claude: ClaudeCode) -> list[str]:
    """The agent's system prompt, without its billing line (a hash that varies) and
    with its state folder (each copy has its own) as ``<state>``."""
    return [
        b["text"].replace(str(claude.state), "<state>")
        for b in body["system"]
        if not b["text"].startswith("x-anthropic-billing")
    ]


def split_request(body: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    """(the history, the new turn) of a resume request: the new turn starts at the
    last user message carrying the resume prompt."""
    messages = body["messages"]
    start = max(i for i, m in enumerate(messages) if RESUME_PROMPT in json.dumps(m["content"]))
    return messages[:start], messages[start:]


def _load(claude: ClaudeCode, sid: str):
    path = claude.transcript(sid)
    return FMT.parse(path.read_bytes(), path)


def _before_prompt(session) -> list[Message]:
    """Our messages of a transcript read after a resume, up to that resume's prompt."""
    messages = session.messages
    start = max(i for i, m in enumerate(messages) if m.role == "user" and m.text() == RESUME_PROMPT)
    return messages[:start]


def _our_compact(claude: ClaudeCode, model: FakeModel, sid: str, *extra: str):
    return run_ours(
        ["compact", str(claude.transcript(sid)), "--in-place", "--yes", "--provider", "openai"]
        + ["--base-url", model.base_url, "--model", model.model, *extra],
        claude.root,
    )


# --- the tests ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def original(template, tmp_path_factory, anthropic):
    """An untouched copy: our reading of it, its bytes and Claude Code's resume request."""
    runner, sid = template
    claude = runner.clone(tmp_path_factory.mktemp("original") / "claude", anthropic)
    session = _load(claude, sid)
    data = claude.transcript(sid).read_bytes()
    body = claude.resume(sid, RESUME_PROMPT)
    return sid, session, data, body, system_prompt(body, claude)


def test_our_messages_equal_the_history_claude_sends_on_resume(original):
    _, session, _, body, _ = original
    history, new_turn = split_request(body)
    assert ours(session.messages) == sent(history)
    assert sent(new_turn)[0] == ("user", (("text", RESUME_PROMPT),))
    # the history has the real Bash calls and their results, and the agent's attachments
    tools = [m for m in session.messages if m.role == "tool"]
    assert [m.text() for m in tools] == ["hello", "world"]
    assert any(m.role == "system" for m in session.messages)
    assert state_of(session, ClaudeState).open_turn is None and session.warnings == []


def _user_prompt_up_to(session) -> int:
    """An --up-to whose next message is a prompt of the user (the summary and that
    prompt then reach the agent as one message)."""
    prompts = [i for i, m in enumerate(session.messages) if m.role == "user" and i > 2]
    return prompts[len(prompts) // 2]  # 1-based up_to == the 0-based index of the prompt


@pytest.mark.parametrize("cut", ["tail", "user-prompt"])
def test_claude_resumes_our_write_as_summary_then_the_kept_messages(
    cut, template, original, tmp_path, anthropic, model
):
    runner, sid = template
    _, session, data, before, prefix = original
    claude = runner.clone(tmp_path / "claude", anthropic)
    up_to = None if cut == "tail" else _user_prompt_up_to(session)
    status, out, err = _our_compact(
        claude, model, sid, *([] if up_to is None else ["--up-to", str(up_to)])
    )
    assert status == 0, err[-2000:]
    written = claude.transcript(sid).read_bytes()
    assert written.startswith(data)  # appended: earlier bytes unchanged
    appended = [json.loads(x) for x in written[len(data) :].split(b"\n") if x]
    assert appended[0]["subtype"] == "compact_boundary" and appended[0]["parentUuid"] is None
    assert appended[1]["isCompactSummary"] is True
    compacted = _load(claude, sid)
    kept_count = len(compacted.messages) - 1
    kept = session.messages[len(session.messages) - kept_count :]
    assert compacted.messages[1:] == kept
    if up_to is not None:
        assert session.messages[up_to].text() == kept[0].text() and kept[0].role == "user"
    after = claude.resume(sid, RESUME_PROMPT)
    history, new_turn = split_request(after)
    assert system_prompt(after, claude) == prefix  # its own prefix, unchanged
    summary = Message.make("user", build_compact_summary_text(SUMMARY))
    assert sent(history) == ours([summary, *kept])
    assert sent(new_turn)[0] == ("user", (("text", RESUME_PROMPT),))
    dropped = session.messages[: len(session.messages) - kept_count]
    text = json.dumps(history)
    for m in dropped:
        for call in m.tool_calls:
            assert call["id"] not in text
        if m.role == "user" and m.text():
            assert m.text() not in text
    # and our reading of the transcript after that resume is what it sent
    assert ours(_before_prompt(_load(claude, sid))) == sent(history)


def test_after_restore_claude_resumes_the_original_history(
    template, original, tmp_path, anthropic, model
):
    runner, sid = template
    _, session, data, before, prefix = original
    claude = runner.clone(tmp_path / "claude", anthropic)
    status, _, err = _our_compact(claude, model, sid, "--up-to", "5")
    assert status == 0, err[-2000:]
    path = claude.transcript(sid)
    assert path.read_bytes() != data
    status, out, err = run_ours(["restore", str(path), "--yes"], claude.root)
    assert status == 0, err[-2000:]
    assert path.read_bytes() == data
    after = claude.resume(sid, RESUME_PROMPT)
    assert sent(split_request(after)[0]) == sent(split_request(before)[0])


def test_after_claudes_own_compaction_we_read_what_it_resumes_then_ours(
    template, tmp_path, anthropic, model
):
    runner, sid = template
    claude = runner.clone(tmp_path / "claude", anthropic)
    claude.compact(sid)
    own = _load(claude, sid)
    assert own.messages[0].data["claude"].get("compact_summary") is True
    assert "FAKE-CLAUDE-SUMMARY" in own.messages[0].text()
    body = claude.resume(sid, RESUME_PROMPT)
    resumed = _load(claude, sid)
    history = _before_prompt(resumed)
    assert ours(history) == sent(split_request(body)[0])
    # our reading of the file before that resume is all there, in order (on resume the
    # agent added a continuation prompt and a synthetic reply after its command's output)
    rest = iter(history)
    assert all(any(m == h for h in rest) for m in own.messages)
    assert len(history) == len(own.messages) + 2
    # then ours on top of its compaction
    status, _, err = _our_compact(claude, model, sid)
    assert status == 0, err[-2000:]
    again = _load(claude, sid)
    assert again.messages[0].text() == build_compact_summary_text(SUMMARY)
    prompt2 = "And now?"
    anthropic.script(Turn(text="ok"))
    run = claude.run(prompt2, sid).check()
    body2 = claude.turn_body(run, prompt2)
    start = max(i for i, m in enumerate(body2["messages"]) if prompt2 in json.dumps(m))
    assert sent(body2["messages"][:start]) == ours(again.messages)


def test_a_transcript_appended_to_while_we_stream_is_refused(template, tmp_path, anthropic, model):
    runner, sid = template
    claude = runner.clone(tmp_path / "claude", anthropic)
    path = claude.transcript(sid)
    data = path.read_bytes()
    model.target = path
    try:
        status, out, err = _our_compact(claude, model, sid)
    finally:
        model.target = None
    assert status == 2
    (error,) = [line for line in err.splitlines() if line.startswith("kimi-compact-tui: error:")]
    assert str(path) in error
    grown = path.read_bytes()
    assert grown.startswith(data) and grown.count(b"\n") == data.count(b"\n") + 1
    assert b"compact_boundary" not in grown[len(data) :]

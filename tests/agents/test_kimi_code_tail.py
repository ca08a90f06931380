"""kimi-code resumes a preserved tail that starts at the user's own prompt.

kimi-code injects its reminders into the history as user messages (``origin.kind:
"injection"``), after the prompt of each turn. Counted as the spec counts "user or
assistant messages", the default tail of the last turn would be ``[reminder, answer]``:
the prompt compacted away from its answer. Our tail counts the real prompt instead.

The session is the shared one kimi-code wrote against the fake model (4 turns, 2 real
shell calls); ours is run as a user runs it, then kimi-code resumes the file.
"""

from __future__ import annotations

import json

import pytest

from kimi_compact_tui.formats import load_session
from tests.agents.fake_model import FakeModel, message_text
from tests.agents.harness import run_ours

pytestmark = pytest.mark.agents

SUMMARY = "FAKE SUMMARY: two shell calls and two questions."
RESUME_PROMPT = "Where were we?"


def _origin(message) -> str | None:
    return ((message.data.get("kimi_code") or {}).get("origin") or {}).get("kind")


def test_the_tail_kimi_code_resumes_starts_at_a_real_user_prompt(
    kimi_code_session_template, tmp_path
):
    template, sid = kimi_code_session_template
    with FakeModel(summary=SUMMARY, lifetime=300) as model:
        code = template.clone(tmp_path / "code", model)
        session = load_session(code.session_dir(sid))
        messages = session.messages
        last_prompt = max(i for i, m in enumerate(messages) if _origin(m) == "user")
        # the case the issue names: the last turn is [prompt, reminder(s), answer]
        turn = messages[last_prompt:]
        assert [m.role for m in turn][-1] == "assistant" and len(turn) >= 3
        assert all(session.format.bookkeeping(m) == "reminder" for m in turn[1:-1])
        journal = code.wire_file(sid).read_bytes()
        status, _, err = run_ours(
            ["compact", str(code.session_dir(sid)), "--in-place", "--yes", "--provider", "openai"]
            + ["--base-url", model.base_url, "--model", model.model],
            code.root,
        )
        assert status == 0, err[-2000:]
        appended = code.wire_file(sid).read_bytes()[len(journal) :]
        apply = [json.loads(x) for x in appended.split(b"\n") if b"apply_compaction" in x]
        assert apply[0]["compactedCount"] == last_prompt
        body = code.resume(sid, RESUME_PROMPT)
    history = body["messages"][1:]  # after kimi-code's system prompt
    assert SUMMARY in message_text(history[0])
    # what kimi-code resumes after the summary: the user's prompt, its reminders, its answer
    assert history[1] == {"role": "user", "content": messages[last_prompt].text()}
    assert [message_text(m) for m in history[1 : len(turn) + 1]] == [m.text() for m in turn]


def test_an_explicit_boundary_at_an_injected_reminder_is_exact(
    kimi_code_session_template, tmp_path
):
    """``--up-to`` is the person's choice and stays exact (the spec's Decision 2), even
    when it compacts the last prompt and keeps the reminder injected with it: kimi-code
    then resumes ``[summary, reminder, answer]``. Only the default tail keeps turns
    whole (see docs/decisions.md)."""
    template, sid = kimi_code_session_template
    with FakeModel(summary=SUMMARY, lifetime=300) as model:
        code = template.clone(tmp_path / "code", model)
        messages = load_session(code.session_dir(sid)).messages
        last_prompt = max(i for i, m in enumerate(messages) if _origin(m) == "user")
        up_to = last_prompt + 1  # 1-based: the prompt is the last message compacted
        assert _origin(messages[up_to]) == "injection"
        journal = code.wire_file(sid).read_bytes()
        status, _, err = run_ours(
            ["compact", str(code.session_dir(sid)), "--in-place", "--yes", "--provider", "openai"]
            + ["--base-url", model.base_url, "--model", model.model, "--up-to", str(up_to)],
            code.root,
        )
        assert status == 0, err[-2000:]
        appended = code.wire_file(sid).read_bytes()[len(journal) :]
        apply = [json.loads(x) for x in appended.split(b"\n") if b"apply_compaction" in x]
        assert apply[0]["compactedCount"] == up_to
        body = code.resume(sid, RESUME_PROMPT)
    history = body["messages"][1:]
    assert SUMMARY in message_text(history[0])
    kept = messages[up_to:]
    assert [message_text(m) for m in history[1 : len(kept) + 1]] == [m.text() for m in kept]
    assert messages[last_prompt].text() not in [message_text(m) for m in history]

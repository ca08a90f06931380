"""Codex 0.171 resumes an anchored write: the block of
exact references stays inside the summary message Codex sends first."""

from __future__ import annotations

import pytest

from kimi_compact_tui.retention import EDITOR_BLOCK_END, EDITOR_BLOCK_START
from tests.agents.test_codex_resume import (  # noqa: F401  (the module's fixtures)
    RESUME_PROMPT,
    _load,
    _our_compact,
    _text,
    chat,
    ours,
    responses,
    sent_messages,
    split_request,
    template,
)

pytestmark = pytest.mark.agents


def test_codex_resumes_an_anchored_write(template, responses, chat):  # noqa: F811
    runner, sid = template
    codex = runner.clone(responses)
    before = _load(codex, sid)
    status, _, err = _our_compact(codex, sid, chat, "--anchor")
    assert status == 0, err[-2000:]
    written = _load(codex, sid)
    summary = written.messages[0].text()
    assert EDITOR_BLOCK_START in summary and EDITOR_BLOCK_END in summary
    first = next(m.text() for m in before.messages if m.role == "user")
    assert first in summary  # the first prompt, lost by the fake summary, is in the block
    body = codex.resume(sid, RESUME_PROMPT)
    _, history, new_turn = split_request(body)
    assert EDITOR_BLOCK_START in _text(history[0])
    assert sent_messages(history) == ours(written.messages[: len(history)])
    assert _text(new_turn[-1]) == RESUME_PROMPT

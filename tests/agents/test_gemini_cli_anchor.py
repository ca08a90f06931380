"""Gemini CLI 0.61 resumes an anchored write: the block of
exact references stays inside the summary message it sends first."""

from __future__ import annotations

import pytest

from kimi_compact_tui.retention import EDITOR_BLOCK_END, EDITOR_BLOCK_START
from tests.agents.gemini_compare import ours, sent, split_request
from tests.agents.test_gemini_cli_resume import (  # noqa: F401  (the module's fixtures)
    RESUME_PROMPT,
    _load,
    _our_compact,
    fake,
    model,
    template,
)

pytestmark = pytest.mark.agents


def test_gemini_resumes_an_anchored_write(template, tmp_path, fake, model):  # noqa: F811
    runner, sid = template
    gemini = runner.clone(tmp_path / "gemini", fake)
    status, _, err = _our_compact(gemini, model, sid, "--anchor")
    assert status == 0, err[-2000:]
    written = _load(gemini, sid)
    summary = written.messages[0].text()
    assert EDITOR_BLOCK_START in summary and EDITOR_BLOCK_END in summary
    after = gemini.resume(sid, RESUME_PROMPT)
    history, new_turn = split_request(after, RESUME_PROMPT)
    assert sent(history) == ours(written.messages)
    assert EDITOR_BLOCK_START in str(history[0])
    assert sent(new_turn) == [("user", (("text", RESUME_PROMPT),))]

"""Kimi Code 2.1 resumes an anchored write: the block of
exact references stays inside the summary message it sends first."""

from __future__ import annotations

import pytest

from kimi_compact_tui.retention import EDITOR_BLOCK_END, EDITOR_BLOCK_START
from tests.agents.test_kimi_code_resume import (  # noqa: F401  (the module's fixtures)
    RESUME_PROMPT,
    _load,
    _our_compact,
    as_sent,
    history_of,
    model,
    sent,
)

pytestmark = pytest.mark.agents


def test_kimi_code_resumes_an_anchored_write(
    kimi_code_session_template, tmp_path, model  # noqa: F811
):
    template, sid = kimi_code_session_template
    code = template.clone(tmp_path / "code", model)
    status, _, err = _our_compact(code, sid, "--anchor")
    assert status == 0, err[-2000:]
    written = _load(code, sid)
    after = code.resume(sid, RESUME_PROMPT)
    _, history, new_turn = history_of(after)
    assert EDITOR_BLOCK_START in history[0]["content"]
    assert EDITOR_BLOCK_END in history[0]["content"]
    assert [sent(m) for m in history] == as_sent(written.messages[: len(history)])
    assert new_turn[0] == {"role": "user", "content": RESUME_PROMPT}

"""Claude Code 2.1.197 resumes an anchored write: the block
of exact references stays inside the summary message, which the agent sends as
the first message of the history, followed by the kept messages."""

from __future__ import annotations

import pytest

from kimi_compact_tui.retention import EDITOR_BLOCK_END, EDITOR_BLOCK_START
from tests.agents.test_claude_code_resume import (  # noqa: F401  (the module's fixtures)
    RESUME_PROMPT,
    _load,
    _our_compact,
    anthropic,
    model,
    ours,
    sent,
    split_request,
    template,
)

pytestmark = pytest.mark.agents


def test_claude_resumes_an_anchored_write(template, tmp_path, anthropic, model):  # noqa: F811
    runner, sid = template
    claude = runner.clone(tmp_path / "claude", anthropic)
    before = _load(claude, sid)
    status, _, err = _our_compact(claude, model, sid, "--anchor")
    assert status == 0, err[-2000:]
    written = _load(claude, sid)
    summary = written.messages[0]
    text = summary.text()
    assert EDITOR_BLOCK_START in text and EDITOR_BLOCK_END in text
    # the fake model's summary lost the prompts: the block holds them verbatim
    prompts = [m.text() for m in before.messages if m.role == "user" and m.text()][:1]
    assert all(p in text for p in prompts)
    after = claude.resume(sid, RESUME_PROMPT)
    history, new_turn = split_request(after)
    assert sent(history) == ours(written.messages)
    assert EDITOR_BLOCK_START in str(history[0]["content"])
    assert sent(new_turn)[0] == ("user", (("text", RESUME_PROMPT),))

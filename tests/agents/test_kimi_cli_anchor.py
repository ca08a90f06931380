"""kimi-cli 1.51 resumes an anchored write: the block of
exact references stays inside the summary's text part, which kimi-cli sends as
its own summary message; the messages after the boundary follow as before."""

from __future__ import annotations

import pytest

from kimi_compact_tui.retention import EDITOR_BLOCK_END, EDITOR_BLOCK_START
from tests.agents.test_kimi_cli_resume import (  # noqa: F401  (the module's fixtures)
    COMPACTED_PREFIX,
    RESUME_PROMPT,
    SUMMARY,
    _our_compact,
    model,
    original,
)

pytestmark = pytest.mark.agents


def test_kimi_cli_resumes_an_anchored_write(
    kimi_cli_session_template, original, tmp_path, model  # noqa: F811
):
    template, sid = kimi_cli_session_template
    _, _, before = original
    history = before["messages"][1:-1]
    cli = template.clone(tmp_path / "cli", model)
    _our_compact(cli, sid, "--up-to", "7", "--anchor")
    after = cli.resume(sid, RESUME_PROMPT)
    summary = after["messages"][1]
    assert summary["role"] == "user"
    prefix, text = (p["text"] for p in summary["content"])
    assert prefix == COMPACTED_PREFIX and text.startswith(SUMMARY)
    assert EDITOR_BLOCK_START in text and EDITOR_BLOCK_END in text
    # "What is two plus two?" (message 5): too few words for the fake summary's
    # paraphrase to count, so the block holds it verbatim
    assert "- user requests: What is two plus two? (message 5; answered)" in text
    assert after["messages"][2:-1] == history[7:]  # then the messages after message 7
    assert after["messages"][-1] == before["messages"][-1]

"""ReviewState.write (no Textual): kimi-cli's `_usage` after a compaction uses
the provider's output tokens, unless the summary was edited."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kimi_compact_tui.compaction.tokens import kimi_estimate
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.providers.base import StreamResult
from kimi_compact_tui.tui.state import ReviewState
from tests.core_helpers import SAMPLES

SUMMARY = "<current_focus>\nimporter --strict flag\n</current_focus>"


def written_usage(tmp_path: Path, *, edit: str | None) -> tuple[int, list]:
    folder = tmp_path / "s"
    shutil.copytree(SAMPLES / "kimi-debugging-session", folder)
    state = ReviewState.create()
    state.load(folder)
    state.set_result(
        StreamResult(
            status="complete",
            summary=SUMMARY,
            usage={"completion_tokens": 999},
            provider="openai",
            finish_reason="stop",
        )
    )
    if edit is not None:
        state.set_summary(edit)
    state.write()
    lines = (folder / "context.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(lines[-1])["token_count"], load_session(folder).messages


def test_usage_takes_provider_output_tokens(tmp_path: Path):
    count, messages = written_usage(tmp_path, edit=None)
    assert messages[0].data["content"][1]["text"] == SUMMARY
    assert count == 999 + kimi_estimate(messages[1:])


def test_edited_summary_is_written_and_estimated(tmp_path: Path):
    edited = SUMMARY + "\n<important_context>\n- edited by hand\n</important_context>"
    count, messages = written_usage(tmp_path, edit=edited)
    assert messages[0].data["content"][1]["text"] == edited
    assert count == kimi_estimate(messages)  # characters // 4, like kimi-cli without usage


def test_restore_checks_the_live_file_again_when_confirmed(tmp_path: Path):
    """The offer was shown before the agent appended a turn: the confirmed
    restore still refuses, and force keeps the appended file first."""
    import pytest

    from kimi_compact_tui.errors import UserError

    folder = tmp_path / "s"
    shutil.copytree(SAMPLES / "kimi-debugging-session", folder)
    live = folder / "context.jsonl"
    original = live.read_bytes()
    state = ReviewState.create()
    state.load(folder)
    state.set_result(StreamResult(status="complete", summary=SUMMARY, finish_reason="stop"))
    state.write()
    offer = state.undo_offer()
    assert offer.ours and offer.changed is None  # shown as a plain restore
    with live.open("ab") as fh:
        fh.write(b'{"role": "user", "content": "appended after the dialog opened"}\n')
    appended = live.read_bytes()
    with pytest.raises(UserError, match="changed since this tool wrote it"):
        state.restore(offer)
    assert live.read_bytes() == appended
    state.restore(offer, force=True)
    assert live.read_bytes() == original
    kept = [p for p in folder.glob("context_*.jsonl") if p.read_bytes() == appended]
    assert len(kept) == 1

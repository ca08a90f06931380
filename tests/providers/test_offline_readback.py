"""The offline provider reads the request back and adds up what it replaces
only as far as it needs: the same messages and the same figures as reading
and counting everything."""

from __future__ import annotations

from pathlib import Path

from kimi_compact_tui.compaction.tokens import estimate_tokens
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.providers.offline.render import (
    MESSAGE_OVERHEAD,
    Replaced,
    summarize,
)
from kimi_compact_tui.providers.offline.transcript import TMessage, read_parts, read_request

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


def header(n: int, role: str) -> str:
    return f"## Message {n}\nRole: {role}\nContent:\n"


def test_only_the_next_numbers_header_starts_a_message():
    parts = [
        header(1, "user"),
        "Fix it.",
        header(3, "assistant"),  # not the next number: the text of message 1
        "## Message 2\nRole: assistant\n",  # no "Content:" line: text too
        header(2, "assistant"),
        "Done.\nContent:\n",  # ends as a header does, but is none
        "the prompt",
    ]
    got = [(m.number, m.role, m.parts) for m in read_parts(parts)]
    assert got == [
        (1, "user", ["Fix it.", header(3, "assistant"), "## Message 2\nRole: assistant\n"]),
        (2, "assistant", ["Done.\nContent:\n"]),
    ]


def test_the_replaced_tokens_are_added_up_as_far_as_asked():
    messages = [TMessage(n, "user", ["x" * (4 * n), "{}"]) for n in range(1, 30)]
    total = sum(MESSAGE_OVERHEAD + sum(estimate_tokens(p) for p in m.parts) for m in messages)
    replaced = Replaced(messages)
    for limit in (0, 1, 7, 50, total - 1, total, total + 1, 10 * total):
        assert replaced.capped(limit) == min(total, limit), limit
    assert replaced.total() == total
    assert Replaced(messages).total() == total  # asked whole first
    assert Replaced([]).capped(10) == 0


def test_a_summary_that_fits_and_its_budget():
    session = load_session(SAMPLES / "kimi-debugging-session")
    prep = prepare_compaction(session, AppConfig())
    assert prep.request is not None
    transcript = read_request(prep.request)
    summary = summarize(transcript)
    whole = sum(
        MESSAGE_OVERHEAD + sum(estimate_tokens(p) for p in m.parts) for m in transcript.compacted
    )
    assert summary.budget == whole
    assert summary.fits is (summary.cost <= whole)

"""Candidate summaries: plain engine data, compared two at a time."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.retention import CandidateSet, retention_report

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "openai-retry-refactor.json"


def two_candidates() -> CandidateSet:
    session = load_session(SAMPLE)
    plan = make_plan(session.messages)
    first = "withRetry now retries 429 and 5xx.\nBackoff capped at 30 s.\n"
    second = "withRetry and isRetryable in src/http/retry.ts.\nBackoff capped at 30 s.\n"
    cands = CandidateSet()
    cands.add(
        first, provider="offline", model="offline-extractive", prompt_source="bundled",
        prompt_text="PROMPT", output_tokens=12, seconds=0.5, contract_ok=False,
        contract_warnings=("missing sections: environment",),
        retention=retention_report(session, plan, first),
    )  # fmt: skip
    cands.add(
        second, provider="openai", model="gpt-x", prompt_source="edited",
        prompt_sha256="ab" * 32, custom_instructions="keep paths", output_tokens=30,
        seconds=0.0, contract_ok=True, retention=retention_report(session, plan, second),
    )  # fmt: skip
    return cands


def test_candidates_are_numbered_and_carry_their_run():
    cands = two_candidates()
    a, b = cands.get(1), cands.get(2)
    assert a.prompt_sha256 == hashlib.sha256(b"PROMPT").hexdigest()
    assert a.tokens_per_second == 24.0
    assert b.tokens_per_second is None  # no time: no speed, not a division by zero
    assert a.retention_figures()["identifiers"] == (1, 2)
    assert b.retention_figures()["file_paths"] == (1, 1)
    data = b.to_json()
    assert data["prompt"] == {"source": "edited", "path": None, "sha256": "ab" * 32}
    assert data["custom_instructions"] == "keep paths"
    assert data["contract"] == {"ok": True, "warnings": []}
    assert data["retention"]["categories"]["identifiers"]["kept"] == 2
    assert a.label().startswith("#1  offline/offline-extractive  prompt bundled:")
    assert "24 tokens/s" in a.label() and "contract !" in a.label()
    with pytest.raises(KeyError):
        cands.get(3)


def test_compare_gives_a_text_diff_and_both_figures():
    comparison = two_candidates().compare(1, 2)
    assert comparison.diff[:2] == ["--- #1", "+++ #2"]
    assert "-withRetry now retries 429 and 5xx." in comparison.diff
    assert "+withRetry and isRetryable in src/http/retry.ts." in comparison.diff
    assert " Backoff capped at 30 s." in comparison.diff
    rows = dict((name, (left, right)) for name, left, right in comparison.figure_rows())
    assert rows["file_paths"] == ("0/1 0%", "1/1 100%")
    assert rows["urls"] == ("0/0 -", "0/0 -")


def test_choose_marks_one_for_writing():
    cands = two_candidates()
    assert cands.choose(2).model == "gpt-x"
    assert cands.to_json()["chosen"] == 2

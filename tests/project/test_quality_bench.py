"""The quality benchmark's sessions: on
Claude Code, Codex, kimi-cli and an OpenAI file, the offline summary keeps every
user request, instruction, open plan item and file written, never lists an open
item as completed and carries no bookkeeping; the shipped lossy model summary
loses them, and retention says so, flagged critical."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from benchmarks.quality_bench import SESSIONS, bench_quality, score
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.providers.offline import offline_summary

CRITICAL = ("user_requests", "instructions", "open_tasks", "edited_files")


@pytest.fixture(scope="module")
def results():
    return bench_quality()


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_the_offline_summary_keeps_what_matters(results, name):
    offline = results[name]["offline"]
    for category in CRITICAL:
        kept, total = offline["categories"][category]
        assert kept == total, (name, category, offline["missing"])
    assert offline["critical"] is None
    model = results[name]["model"]
    assert model["categories"]["user_requests"][0] == 0
    assert model["critical"] and model["critical"].startswith("CRITICAL: the summary loses")
    anchored = results[name]["model+anchor"]
    for category in CRITICAL:  # --anchor puts them all back
        kept, total = anchored["categories"][category]
        assert kept == total, (name, category)
    assert 0 < results[name]["anchor"]["tokens"] <= results[name]["anchor"]["budget"]


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_no_open_item_is_completed_and_no_bookkeeping_shows(name):
    with tempfile.TemporaryDirectory() as tmp:
        session = load_session(SESSIONS[name](Path(tmp) / name))
        prep = prepare_compaction(session, AppConfig())
        text = offline_summary(prep.request)
    done = text[text.index("<completed_tasks>") : text.index("</completed_tasks>")]
    assert "[completed] Rework the refund aggregation" in done
    for open_item in ("month-boundary regression test", "Run the linters", "Fix lint", "Ship it"):
        assert open_item not in done
    for noise in ("command-name", "local-command", "system-reminder", "Plan mode", "Be brief"):
        assert noise not in text


def test_score_takes_any_summary():
    with tempfile.TemporaryDirectory() as tmp:
        path = SESSIONS["openai"](Path(tmp) / "openai")
        out = score(path, {"empty": ""})
    assert out["empty"]["categories"]["user_requests"] == [0, 2]

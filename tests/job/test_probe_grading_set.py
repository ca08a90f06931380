"""Probe grading on its labelled set (benchmarks/labelled/probe_grading.json):
precision and recall of the ``correct`` verdict stay at 0.95 or more."""

from __future__ import annotations

import pytest

from benchmarks.grading_bench import SETS, TARGET, bench_grading, cases


def test_the_set_is_large_and_covers_every_rule():
    rows = cases(SETS[0])
    assert len(rows) >= 60
    assert {c["kind"] for c in rows} == {"path", "command", "text"}
    assert any(c.get("status") for c in rows)  # a stated status
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in c["expected"]) for c in rows)
    right = sum(c["right"] for c in rows)
    assert 0.3 * len(rows) < right < 0.7 * len(rows)


@pytest.mark.parametrize("name", [*SETS, "all"])
def test_precision_and_recall_stay_above_the_target(name):
    result = bench_grading()[name]
    assert result["precision"] >= TARGET, result["errors"]
    assert result["recall"] >= TARGET, result["errors"]

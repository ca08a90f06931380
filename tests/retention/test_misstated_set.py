"""The misstated verdict on its labelled cases (benchmarks/labelled/misstated_cases.json):
precision and recall stay at 0.95 or more, in English and Chinese."""

from __future__ import annotations

from benchmarks.misstated_bench import TARGET, bench_misstated, cases


def test_the_cases_cover_every_kind_and_both_languages():
    rows = cases()
    assert len(rows) >= 40
    assert {c["category"] for c in rows} == {"open_tasks", "commands", "edited_files", "file_paths"}
    assert {c["stated"] for c in rows} >= {"completed", "cancelled", "passed", "written", None}
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in c["summary"]) for c in rows)


def test_precision_and_recall_stay_above_the_target():
    result = bench_misstated()
    assert result["precision"] >= TARGET, result["errors"]
    assert result["recall"] >= TARGET, result["errors"]

"""Probe grading, measured: precision and recall of the ``correct`` verdict on
hand-labelled (question, expected, answer, right?) cases
(``benchmarks/labelled/probe_grading.json``): paths in every form, commands,
requests, open tasks with a status, errors and decisions, in English and
Chinese, with numbers and units. "Right" is the positive class: precision is
the share of ``correct`` verdicts that are right (a wrong answer never counts
as knowing), recall the share of right answers graded ``correct``.

    .venv/bin/python -m benchmarks.grading_bench          # the figures
    .venv/bin/python -m benchmarks.grading_bench --json   # and the errors
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from kimi_compact_tui.job.probe.grade import CORRECT, grade
from kimi_compact_tui.job.probe.questions import COMMAND, PATH, TEXT, Question

CASES = Path(__file__).resolve().parent / "labelled" / "probe_grading.json"
TARGET = 0.95
KINDS = {"path": PATH, "command": COMMAND, "text": TEXT}
CATEGORY = {"path": "edited_files", "command": "commands"}


def cases() -> list[dict[str, Any]]:
    data = json.loads(CASES.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def verdict(case: dict[str, Any]) -> str:
    kind = KINDS[case["kind"]]
    category = case.get("category") or CATEGORY[case["kind"]]
    question = Question(1, category, "?", (case["expected"],), kind, (1,), case.get("status"))
    return grade(question, case["answer"]).verdict


def bench_grading() -> dict[str, Any]:
    tp = fp = fn = tn = 0
    errors = []
    rows = cases()
    for case in rows:
        got = verdict(case) == CORRECT
        want = bool(case["right"])
        tp += got and want
        fp += got and not want
        fn += want and not got
        tn += not got and not want
        if got != want:
            errors.append(case)
    return {
        "cases": len(rows),
        "right": tp + fn,
        "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 3) if tp + fn else 1.0,
        "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
        "errors": errors,
    }


def main(argv: list[str]) -> int:
    result = bench_grading()
    if argv == ["--json"]:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(
            f"{result['cases']} cases, {result['right']} right: "
            f"precision {result['precision']:.3f}, recall {result['recall']:.3f}"
        )
        for case in result["errors"]:
            print(f"wrong: {case}")
    ok = result["precision"] >= TARGET and result["recall"] >= TARGET
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

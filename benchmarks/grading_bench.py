"""Probe grading, measured: precision and recall of the ``correct`` verdict on
hand-labelled (question, expected, answer, right?) cases
(``benchmarks/labelled/probe_grading.json`` and ``probe_grading_heldout.json``): paths in every form, commands,
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

LABELLED = Path(__file__).resolve().parent / "labelled"
#: The development set, and one written before the grader's last change was tried on it.
SETS = ("probe_grading.json", "probe_grading_heldout.json")
TARGET = 0.95
KINDS = {"path": PATH, "command": COMMAND, "text": TEXT}
CATEGORY = {"path": "edited_files", "command": "commands"}


def cases(name: str = SETS[0]) -> list[dict[str, Any]]:
    data = json.loads((LABELLED / name).read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def verdict(case: dict[str, Any]) -> str:
    kind = KINDS[case["kind"]]
    category = case.get("category") or CATEGORY[case["kind"]]
    question = Question(1, category, "?", (case["expected"],), kind, (1,), case.get("status"))
    return grade(question, case["answer"]).verdict


def bench_grading() -> dict[str, Any]:
    """Per set, and both together."""
    out = {name: score(cases(name)) for name in SETS}
    out["all"] = score([c for name in SETS for c in cases(name)])
    return out


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tp = fp = fn = tn = 0
    errors = []
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
    results = bench_grading()
    if argv == ["--json"]:
        print(json.dumps(results, ensure_ascii=False, indent=2))
    else:
        for name, result in results.items():
            print(
                f"{name}: {result['cases']} cases, {result['right']} right: "
                f"precision {result['precision']:.3f}, recall {result['recall']:.3f}"
            )
        for case in results["all"]["errors"]:
            print(f"wrong: {case}")
    every = results["all"]
    ok = every["precision"] >= TARGET and every["recall"] >= TARGET
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

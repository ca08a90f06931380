"""Misstated items, measured: precision and recall of retention's
``misstated`` verdict on hand-labelled (item, what the session says, summary
passage, what the passage states wrongly or nothing) cases
(``benchmarks/labelled/misstated_cases.json``): open tasks stated done or
cancelled, failed commands stated passed, rejected writes stated written, and
passages that state them rightly or not at all, in English and Chinese.
"Misstated" is the positive class; a case is right when the verdict and the
stated status both match.

    .venv/bin/python -m benchmarks.misstated_bench
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from kimi_compact_tui.retention.matching import Haystack, misstatement
from kimi_compact_tui.specifics import Item

CASES = Path(__file__).resolve().parent / "labelled" / "misstated_cases.json"
TARGET = 0.95


def cases() -> list[dict[str, Any]]:
    data = json.loads(CASES.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def stated(case: dict[str, Any]) -> str | None:
    text = case["item"]
    item = Item(case["category"], text.lower(), text, [1], weight=8, status=case["status"])
    got = misstatement(item, Haystack(case["summary"]))
    return None if got is None else got.stated


def bench_misstated() -> dict[str, Any]:
    tp = fp = fn = tn = 0
    errors = []
    rows = cases()
    for case in rows:
        got, want = stated(case), case["stated"]
        if got is not None and got == want:
            tp += 1
        elif got is not None:
            fp += 1
        elif want is not None:
            fn += 1
        else:
            tn += 1
        if got != want:
            errors.append({**case, "got": got})
    return {
        "cases": len(rows),
        "misstated": sum(1 for c in rows if c["stated"] is not None),
        "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 3) if tp + fn else 1.0,
        "errors": errors,
    }


def main(argv: list[str]) -> int:
    result = bench_misstated()
    print(
        f"{result['cases']} cases, {result['misstated']} misstated: "
        f"precision {result['precision']:.3f}, recall {result['recall']:.3f}"
    )
    for error in result["errors"]:
        print(f"wrong: {error}")
    return 0 if result["precision"] >= TARGET and result["recall"] >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

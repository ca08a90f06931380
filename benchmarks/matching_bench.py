"""Request matching, measured: precision and recall of the retention rule for
user requests, instructions and open tasks on hand-labelled (request, summary
passage, kept?) pairs in English, Chinese and Japanese.

Two sets under ``benchmarks/labelled/``: ``request_pairs.json`` (the set the
rule was developed on) and ``request_pairs_heldout.json`` (written before the
rule's last changes were tried on it). Every pair is also scored with its
passage inside a long summary of another task (``filler_summary.md``). Each pair has a ``shape``: verbatim,
typo, case-punctuation, cut-keeps-point, paraphrase, stub, prefix-drops-point,
scattered, negation, number, unrelated, same-topic-other-request... ("zh-" and
"ja-" for Chinese and Japanese). "kept" is the positive class: precision is
the share of "kept" verdicts that are right (a summary is never credited with a
request it lost), recall the share of kept requests found.

    .venv/bin/python -m benchmarks.matching_bench          # a table
    .venv/bin/python -m benchmarks.matching_bench --json   # the figures and the errors
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from kimi_compact_tui.retention.matching import Haystack, find
from kimi_compact_tui.specifics import Item, kinds

LABELLED = Path(__file__).resolve().parent / "labelled"
SETS = ("request_pairs.json", "request_pairs_heldout.json")
TARGET = 0.95


def pairs(name: str) -> list[dict[str, Any]]:
    data = json.loads((LABELLED / name).read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


#: A summary of another task (written for this benchmark), in English and
#: Chinese: each passage is also scored inside it, so that a verdict is shown
#: to be about the passage, not about a short text.
FILLER = LABELLED / "filler_summary.md"


def verdict(request: str, passage: str) -> bool:
    """The retention verdict: does ``passage`` (as a summary) keep ``request``?"""
    item = Item(kinds.USER_REQUESTS, "0", request, [0], weight=10)
    return find(item, Haystack(passage))


def in_summary(passage: str) -> str:
    """``passage`` in the middle of :data:`FILLER`."""
    lines = FILLER.read_text(encoding="utf-8").split("\n")
    mid = len(lines) // 2
    return "\n".join([*lines[:mid], passage, *lines[mid:]])


def language(pair: dict[str, Any]) -> str:
    shape = str(pair["shape"])
    return shape.split("-", 1)[0] if shape.startswith(("zh-", "ja-")) else "en"


def score(rows: list[dict[str, Any]], embed: bool = False) -> dict[str, Any]:
    tp = fp = fn = tn = 0
    errors = []
    for pair in rows:
        passage = in_summary(pair["passage"]) if embed else pair["passage"]
        got = verdict(pair["request"], passage)
        want = bool(pair["kept"])
        if got and want:
            tp += 1
        elif got:
            fp += 1
        elif want:
            fn += 1
        else:
            tn += 1
        if got != want:
            errors.append({"shape": pair["shape"], "expected": want, **pair})
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {
        "pairs": len(rows),
        "kept": tp + fn,
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
        "errors": errors,
    }


def bench_matching() -> dict[str, Any]:
    """Per set and in all; per language in all."""
    out: dict[str, Any] = {}
    every: list[dict[str, Any]] = []
    for name in SETS:
        rows = pairs(name)
        every += rows
        out[name] = score(rows)
    out["all"] = score(every)
    for lang in ("en", "zh", "ja"):
        out[f"all/{lang}"] = score([p for p in every if language(p) == lang])
    out["all, inside a long summary"] = score(every, embed=True)
    return out


def table(result: dict[str, Any]) -> str:
    lines = ["| set | pairs | kept | precision | recall |", "|---|---|---|---|---|"]
    for name, r in result.items():
        lines.append(
            f"| {name} | {r['pairs']} | {r['kept']} | {r['precision']:.3f} | {r['recall']:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    result = bench_matching()
    if argv == ["--json"]:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(table(result))
        for error in result["all"]["errors"]:
            print(f"wrong ({error['shape']}): {error['request']!r} / {error['passage']!r}")
    ok = result["all"]["precision"] >= TARGET and result["all"]["recall"] >= TARGET
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Retention benchmark: extraction and matching on a 10,000-message range.

The lead calls :func:`bench_retention` from ``benchmarks/run.py``; run alone::

    .venv/bin/python -m benchmarks.retention_bench            # 10,000 messages
    .venv/bin/python -m benchmarks.retention_bench 100000
    .venv/bin/python -m benchmarks.retention_bench --baseline   # offline provider, samples
    .venv/bin/python -m benchmarks.retention_bench --check      # outputs unchanged?

``--check`` is the guard of speed work: it digests what the extractor yields
(every item, the causes, fixes and findings), the offline summary and the
retention report, on the bundled samples and the generated 1,000- and
10,000-message ranges (both shapes), and compares each digest with
:data:`DIGESTS`, taken before the speed work. A change that means to change
an output updates the digest it changes, and says why in its commit.

The session comes from :mod:`benchmarks.generate` (same seed, same bytes).
The summary scored is the offline provider's for the same range, so the
matching side works on a realistic summary of realistic size. Only
``retention_report`` is timed (extraction of the range, the tail haystack,
matching every item); loading, planning and the summary are not. Both the
wall time and this process's CPU time are given; the target is checked on
CPU time, which a busy neighbour on a shared machine disturbs far less.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import generate
from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.retention import retention_report

TARGET_SECONDS = 1.0


def offline_summary_for(session: Any, plan: Any) -> str:
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.job import prepare_compaction
    from kimi_compact_tui.providers.offline import offline_summary

    prep = prepare_compaction(session, AppConfig())
    return offline_summary(prep.request) if prep.request is not None else ""


def bench_retention(n: int = 10_000, repeats: int = 3) -> dict[str, Any]:
    """Median seconds of ``retention_report`` on the compacted range of a
    generated ``n``-message kimi session, with the item counts."""
    path = generate.ensure(n)["kimi"]
    session = load_session(path)
    plan = make_plan(session.messages)
    summary = offline_summary_for(session, plan)
    times, cpu_times = [], []
    report = None
    for _ in range(repeats):
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        report = retention_report(session, plan, summary)
        times.append(time.perf_counter() - t0)
        cpu_times.append(time.process_time() - c0)
    assert report is not None
    seconds = statistics.median(times)
    cpu_seconds = statistics.median(cpu_times)
    return {
        "messages": len(session.messages),
        "compacted": len(plan.compact_indices),
        "summary_chars": len(summary),
        "items": report.total,
        "kept": report.kept,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu_seconds, 3),
        "target_seconds": TARGET_SECONDS,
        # This process's CPU time: on a shared machine a busy neighbour inflates wall time.
        "ok": cpu_seconds < TARGET_SECONDS,
    }


SAMPLES = Path(__file__).resolve().parent.parent / "sample_sessions"
SAMPLE_NAMES = ("kimi-debugging-session", "openai-retry-refactor.json", "cjk-orders-store.jsonl")


def offline_baseline() -> dict[str, Any]:
    """The offline provider's summary of each bundled sample, scored like any
    other: {sample: {"kept", "total", "categories": {name: [kept, total]}}}."""
    out: dict[str, Any] = {}
    for name in SAMPLE_NAMES:
        session = load_session(SAMPLES / name)
        plan = make_plan(session.messages)
        report = retention_report(session, plan, offline_summary_for(session, plan))
        out[name] = {
            "kept": report.kept,
            "total": report.total,
            "categories": {k: list(v) for k, v in report.figures().items()},
        }
    return out


#: name -> (extractor digest, offline summary digest, retention report digest).
#: Taken on main at b676e15, before the speed work.
DIGESTS: dict[str, tuple[str, str, str]] = {
    "kimi-debugging-session": ("62054110515da5e9", "0364bf941b914224", "13de6f54cdf08712"),
    "openai-retry-refactor.json": ("f114171d6287878b", "ff25dc1b5210443a", "96faee6f780cd3b8"),
    "cjk-orders-store.jsonl": ("eec10bd0bd6caabd", "5f4bfb0dfa08941d", "53ae66d228cd642f"),
    "generated-1000": ("27736b030c49911d", "897e8828fe0c6663", "a48ad480cec3512c"),
    "dense-1000": ("b801a8fec4c64dc8", "49f3d7de5a6c222e", "1dc94c117bf72068"),
    "generated-10000": ("0ba69244b77bc7a1", "efbae0fe3c5328a4", "90f167f208ebf68d"),
    "dense-10000": ("db93d679c7007379", "606379ca151668c8", "ef6f2ecd92b2fd77"),
}


def _digest(value: Any) -> str:
    blob = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def digests() -> dict[str, tuple[str, str, str]]:
    """The digests of the extractor's items, the offline summary and the
    retention report on each checked range."""
    from kimi_compact_tui.specifics import extract

    paths: dict[str, Path] = {name: SAMPLES / name for name in SAMPLE_NAMES}
    for n in (1_000, 10_000):
        paths[f"generated-{n}"] = generate.ensure(n)["kimi"]
        paths[f"dense-{n}"] = generate.ensure(n, shape="dense")["kimi"]
    out = {}
    for name, path in paths.items():
        session = load_session(path)
        plan = make_plan(session.messages)
        found = extract(session.messages, plan.compact_indices, session.format.vocabulary())
        items = {k: [dataclasses.astuple(i) for i in b.values()] for k, b in found.items.items()}
        extracted = [
            items,
            found.causes,
            found.fixes,
            found.findings,
            found.root,
            found.plan_message,
        ]
        summary = offline_summary_for(session, plan)
        report = retention_report(session, plan, summary).to_json()
        out[name] = (_digest(extracted), _digest(summary), _digest(report))
    return out


def check() -> int:
    """0 when every digest is the recorded one; else the ranges that differ."""
    bad = 0
    for name, got in digests().items():
        want = DIGESTS.get(name)
        same = got == want
        bad += not same
        print(f"{'same' if same else 'CHANGED'}  {name}  {' '.join(got)}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--check"]:
        return check()
    if argv == ["--baseline"]:
        for name, figures in offline_baseline().items():
            cats = ", ".join(f"{k} {a}/{b}" for k, (a, b) in figures["categories"].items())
            print(f"{name}: {figures['kept']}/{figures['total']} ({cats})")
        return 0
    n = int(argv[0]) if argv else 10_000
    result = bench_retention(n)
    for key, value in result.items():
        print(f"{key:>14}  {value}")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

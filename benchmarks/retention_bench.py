"""Retention benchmark: extraction and matching on a 10,000-message range.

The lead calls :func:`bench_retention` from ``benchmarks/run.py``; run alone::

    .venv/bin/python -m benchmarks.retention_bench            # 10,000 messages
    .venv/bin/python -m benchmarks.retention_bench 100000
    .venv/bin/python -m benchmarks.retention_bench --baseline   # offline provider, samples

The session comes from :mod:`benchmarks.generate` (same seed, same bytes).
The summary scored is the offline provider's for the same range, so the
matching side works on a realistic summary of realistic size. Only
``retention_report`` is timed (extraction of the range, the tail haystack,
matching every item); loading, planning and the summary are not. Both the
wall time and this process's CPU time are given; the target is checked on
CPU time, which a busy neighbour on a shared machine disturbs far less.
"""

from __future__ import annotations

import gc
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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
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

"""The offline summary and retention of a large session against ``plan --json``
of it, in one run (issue 31's speed targets).

    .venv/bin/python -m benchmarks.summary_bench              # 100,000 messages
    .venv/bin/python -m benchmarks.summary_bench --size 10000

``plan --json`` runs as a whole command in a fresh interpreter (its own CPU
time, :func:`benchmarks.commands_bench.measure`). The session is then loaded
in this process (not timed), and two steps are timed on this process's CPU
clock, each from the loaded session, as a front end runs them:

- the offline summary: plan, request, extraction of the compacted range and
  the six sections (``prepare_compaction`` + ``offline_summary``);
- retention of that summary twice: from scratch, as the ``retention``
  command scores a given summary (``retention_report``: extraction, the kept
  tail, matching every item), and, in a fresh process (no cache warmed by
  the first score), as ``compact`` and the TUI score it after the summary
  (``Preparation.retention``: the range's items the summary made are shared).
  Both give the same report (their digests are compared).

Each must take at most :data:`RATIO` times ``plan --json``. The figures also
say whether the offline summary's own retention is CRITICAL.

``--parts`` times, instead, three steps of the offline summary alone on the
same loaded session (median CPU of three): the extraction of the compacted
range (as the compaction job makes it), reading the request back, and the
six sections from them::

    .venv/bin/python -m benchmarks.summary_bench --parts
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import generate
from benchmarks.commands_bench import measure

RATIO = 2.0


def cpu(fn: Any) -> tuple[float, Any]:
    gc.collect()
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


def bench_summary(n: int = 100_000, path: Path | None = None) -> dict[str, Any]:
    """The figures for a generated ``n``-message kimi session (or the session at
    ``path``)."""
    from kimi_compact_tui.compaction.tokens import estimate_tokens
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.job import prepare_compaction
    from kimi_compact_tui.providers.offline import offline_summary
    from kimi_compact_tui.retention import retention_report

    path = path or generate.ensure(n)["kimi"]
    plan_cpu, _ = measure([sys.executable, "-m", "kimi_compact_tui", "plan", str(path), "--json"])
    session = load_frozen(path)  # as the commands load it (commands/common.py)

    def summarize() -> tuple[Any, str]:
        prep = prepare_compaction(session, AppConfig())
        return prep, offline_summary(prep.request) if prep.request is not None else ""

    summary_cpu, (prep, summary) = cpu(summarize)
    # from scratch, as ``retention SESSION --summary FILE`` scores it: extraction included
    retention_cpu, report = cpu(lambda: retention_report(session, prep.plan, summary))
    # as ``compact`` and the TUI score it, in a fresh process (no cache warmed by
    # the score above): the range's items, made by the summary, shared
    child = subprocess.run(
        [sys.executable, "-m", "benchmarks.summary_bench", "--shared-child", str(path)],
        capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    shared_cpu, shared_digest = json.loads(child.stdout)
    assert shared_digest == report_digest(report), "the shared score differs"
    return {
        "messages": len(session.messages),
        "compacted": len(prep.plan.compact_indices),
        "plan_json_cpu": round(plan_cpu, 2),
        "summary_cpu": round(summary_cpu, 2),
        "summary_ratio": round(summary_cpu / plan_cpu, 2),
        "retention_cpu": round(retention_cpu, 2),
        "retention_ratio": round(retention_cpu / plan_cpu, 2),
        "retention_after_summary_cpu": round(shared_cpu, 2),
        "retention_after_summary_ratio": round(shared_cpu / plan_cpu, 2),
        "summary_tokens": estimate_tokens(summary),
        "critical": len(report.to_json()["critical"]),
        "target_ratio": RATIO,
        "ok": summary_cpu <= RATIO * plan_cpu and retention_cpu <= RATIO * plan_cpu,
    }


def report_digest(report: Any) -> str:
    return hashlib.sha256(json.dumps(report.to_json(), sort_keys=True).encode()).hexdigest()


def shared_child(path: Path) -> tuple[float, str]:
    """In this (fresh) process: the offline summary, then its retention as
    ``compact`` and the TUI run it (``Preparation.retention``); that score's
    CPU seconds and its report's digest."""
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.job import prepare_compaction
    from kimi_compact_tui.providers.offline import offline_summary

    session = load_frozen(path)
    prep = prepare_compaction(session, AppConfig())
    summary = offline_summary(prep.request) if prep.request is not None else ""
    seconds, report = cpu(lambda: prep.retention(summary))
    return seconds, report_digest(report)


def load_frozen(path: Path) -> Any:
    """The session loaded as the commands load it (no collection during the
    load, then its objects frozen out of later ones)."""
    from kimi_compact_tui.formats import load_session

    gc.disable()
    try:
        session = load_session(path)
        gc.freeze()
    finally:
        gc.enable()
    return session


def bench_parts(n: int = 100_000, repeats: int = 3, path: Path | None = None) -> dict[str, Any]:
    """Median CPU seconds of the offline summary's extraction, reading the
    request back, and its sections, each alone on a generated ``n``-message
    kimi session (or the session at ``path``)."""
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.job import prepare_compaction
    from kimi_compact_tui.job.prepare import specifics_of
    from kimi_compact_tui.providers.offline.render import summarize
    from kimi_compact_tui.providers.offline.transcript import read_request

    session = load_frozen(path or generate.ensure(n)["kimi"])
    prep = prepare_compaction(session, AppConfig())
    assert prep.request is not None
    extraction, reading, sections = [], [], []
    for _ in range(repeats):
        seconds, specifics = cpu(specifics_of(session, prep.plan))
        extraction.append(seconds)
        seconds, transcript = cpu(lambda: read_request(prep.request))
        reading.append(seconds)
        seconds, _ = cpu(lambda: summarize(transcript, specifics))  # noqa: B023
        sections.append(seconds)
    return {
        "messages": len(session.messages),
        "extraction_cpu": round(statistics.median(extraction), 2),
        "read_back_cpu": round(statistics.median(reading), 2),
        "sections_cpu": round(statistics.median(sections), 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--parts", action="store_true", help="time the summary's steps alone")
    parser.add_argument("--shared-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.shared_child is not None:
        print(json.dumps(shared_child(args.shared_child)))
        return 0
    if args.parts:
        print(json.dumps(bench_parts(args.size), indent=2))
        return 0
    result = bench_summary(args.size)
    print(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

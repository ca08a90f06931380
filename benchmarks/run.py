"""Run every benchmark in one go and print the tables (see docs/BENCHMARKS.md).

    .venv/bin/python -m benchmarks.run                 # 1k, 10k, 100k; 5 repeats
    .venv/bin/python -m benchmarks.run --sizes 1000 --repeats 3 --skip-tui
    .venv/bin/python -m benchmarks.run --profile load  # cProfile of one 100k step

Every figure is the median of ``--repeats`` runs. Sessions are generated
(deterministically) into ``benchmarks/out/`` on first use.

Steps, per size (kimi-cli ``context.jsonl``; OpenAI ``.json`` for load only):

* floor — read the bytes, decode, and ``json.loads`` each record: the least any
  loader must do;
* load — ``formats.load_session``;
* load + plan — load, ``compaction.make_plan`` and the per-message token
  figures (what ``plan`` and the TUI show);
* request / compacted / diff — ``build_request``, ``build_compacted_session``
  and ``diff.diff_sessions`` on the loaded session;
* peak memory — in a fresh subprocess per size: peak RSS growth (``ru_maxrss``)
  while loading and planning, against the file size;
* TUI — ``tui.app.create_app`` headless (``App.run_test``) until the message
  list shows the session, then ``end`` until the last row is highlighted;
* stream — 10,000 tiny chunks from the loopback server through the TUI's
  stream screen: time from the last chunk arriving to its text being on screen;
* start-up — ``--help`` and ``plan`` of a 10-message session as whole commands
  (CPU of the child), with ``--code DIR`` another checkout's beside them;
* shapes — ``plan --json`` on both shapes at the largest size against a
  ``json.loads`` script and a native (msgspec) floor, and the TUI's ready time.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python benchmarks/run.py` as well as `-m benchmarks.run`
    sys.path.insert(0, str(ROOT))

from benchmarks import generate  # noqa: E402
from kimi_compact_tui.compaction.request import build_request  # noqa: E402
from kimi_compact_tui.config import AppConfig  # noqa: E402
from kimi_compact_tui.formats import load_session  # noqa: E402
from kimi_compact_tui.job import build_compacted_session  # noqa: E402

TARGETS = {
    "load+plan / floor": 1.5,
    "request+compacted+diff / load": 0.5,
    "tui ready - load (s)": 1.0,
    "stream lag (s)": 0.5,
    "peak memory / file": 3.0,
}


from benchmarks import core_bench  # noqa: E402
from benchmarks.core_bench import (  # noqa: E402
    SUMMARY,
    bench_core,
    bench_memory,
    floor_kimi,
    memory_child,
    plan_and_tokens,
)
from benchmarks.report import fmt_s, load_avg, machine, print_table, verdict  # noqa: E402
from benchmarks.tui_bench import (  # noqa: E402
    bench_stream,
    bench_tui,
    stream_available,
    tui_available,
    tui_open_once,
    wall,
)


def whole_commands(paths_by_n: dict[int, dict[str, Path]], args: argparse.Namespace) -> list:
    """``plan --json`` as a whole command and the retention report: tables, and
    their target rows (see benchmarks/commands_bench.py, retention_bench.py)."""
    from benchmarks import startup_bench
    from benchmarks.discover_bench import bench_discover
    from benchmarks.retention_bench import bench_retention
    from benchmarks.shapes_bench import HEADERS, bench_shape, rows

    starts = [startup_bench.bench_startup(max(5, args.repeats))]
    starts += [startup_bench.bench_startup(max(5, args.repeats), code) for code in args.code]
    start_table, start_targets = startup_bench.rows(starts)
    print("Start-up: whole commands, CPU (user + system) of the child, medians")
    print_table(startup_bench.HEADERS, start_table)
    from benchmarks import hook_bench

    hook = hook_bench.bench_hook(max(5, args.repeats))
    hook_table, hook_targets = hook_bench.rows(hook)
    print("The gate's hook (hook run AGENT): whole command, CPU of the child, medians")
    print_table(hook_bench.HEADERS, hook_table)
    start_targets = [*start_targets, *hook_targets]

    big_n = max(paths_by_n)
    repeats = max(1, min(args.repeats, 3))

    def tui(path: Path) -> dict[str, float]:
        t = bench_tui(path, repeats)
        t["load_wall"] = statistics.median(wall(lambda: load_session(path)) for _ in range(3))
        return t

    shapes = [
        bench_shape(
            shape,
            big_n,
            repeats,
            tui=None if args.skip_tui or tui_available() else tui,
            kimi_cli=not args.skip_kimi_cli,
        )
        for shape in generate.SHAPES
    ]
    args.shape_results = shapes
    table, targets = rows(shapes)
    print(f"Both shapes at {big_n:,} messages: plan --json as a whole command, TUI, kimi-cli")
    print_table(HEADERS, table)
    ret = bench_retention(min(10_000, big_n), max(1, min(args.repeats, 3)))
    print(f"retention report on a {ret['compacted']:,}-message range ({ret['items']:,} items)")
    print_table(["wall", "CPU"], [[fmt_s(ret["seconds"]), fmt_s(ret["cpu_seconds"])]])
    found = bench_discover(1500, max(1, min(args.repeats, 3)))
    print(f"session discovery ({found['sessions']:,} kimi-cli sessions)")
    print_table(["wall", "CPU"], [[fmt_s(found["seconds"]), fmt_s(found["cpu_seconds"])]])
    return [
        *start_targets,
        *targets,
        [
            "retention on 10k messages < 1 s (CPU)",
            fmt_s(ret["cpu_seconds"]),
            verdict(ret["cpu_seconds"] < 1.0),
        ],
        [
            "discover 1,500 sessions < 5 s (CPU)",
            fmt_s(found["cpu_seconds"]),
            verdict(found["cpu_seconds"] < 5.0),
        ],
    ]


def run(args: argparse.Namespace) -> int:
    print(f"machine: {machine()}")
    print(
        f"repeats: {args.repeats} (medians); clock: {args.clock}; "
        f"load average at start: {load_avg()}\n"
    )
    results = []
    paths_by_n = {}
    for n in args.sizes:
        paths_by_n[n] = generate.ensure(n)
    for n in args.sizes:
        row = bench_core(n, paths_by_n[n], args.repeats)
        if not args.skip_memory:
            row["memory"] = bench_memory(paths_by_n[n]["kimi"])
        results.append(row)
        print(f"... {n} messages done", file=sys.stderr)

    print("kimi-cli context.jsonl")
    headers = [
        "messages",
        "file",
        "floor",
        "floor gc off",
        "load",
        "load/floor",
        "load/floor gc off",
        "load+plan",
        "l+p/floor",
        "+tokens",
        "l+p+t/floor",
        "request",
        "compacted",
        "diff",
        "r+c+d/load",
    ]
    rows = []
    for r in results:
        rows.append(
            [
                f"{r['n']:,}",
                f"{r['file_mb']:.1f} MB",
                fmt_s(r["floor"]),
                fmt_s(r["floor_nogc"]),
                fmt_s(r["load"]),
                f"{r['load'] / r['floor']:.2f}x",
                f"{r['load'] / r['floor_nogc']:.2f}x",
                fmt_s(r["load+plan"]),
                f"{r['load+plan'] / r['floor']:.2f}x",
                fmt_s(r["load+plan+tokens"]),
                f"{r['load+plan+tokens'] / r['floor']:.2f}x",
                fmt_s(r["request"]),
                fmt_s(r["compacted"]),
                fmt_s(r["diff"]),
                f"{r['r+c+d'] / r['load']:.2f}x",
            ]
        )
    print_table(headers, rows)

    print("OpenAI .json (load only)")
    print_table(
        ["messages", "file", "floor", "load", "load/floor"],
        [
            [
                f"{r['n']:,}",
                f"{r['json_mb']:.1f} MB",
                fmt_s(r["json_floor"]),
                fmt_s(r["json_load"]),
                f"{r['json_load'] / r['json_floor']:.2f}x",
            ]
            for r in results
        ],
    )

    if not args.skip_memory:
        print("Peak memory (RSS growth in a fresh process, / file size)")
        print_table(
            ["messages", "file", "json.loads floor", "load", "load+plan"],
            [
                [
                    f"{r['n']:,}",
                    f"{r['file_mb']:.1f} MB",
                    f"{r['memory']['floor']:.2f}x",
                    f"{r['memory']['load']:.2f}x",
                    f"{r['memory']['load+plan']:.2f}x",
                ]
                for r in results
            ],
        )

    tui_rows = []
    if not args.skip_tui:
        reason = tui_available()
        if reason:
            print(f"TUI: skipped ({reason})\n")
        else:
            for r in results:
                path = paths_by_n[r["n"]]["kimi"]
                t = bench_tui(path, max(1, min(args.repeats, 3)))
                # Compared with the load by the same (wall) clock, whatever --clock says.
                t["load_wall"] = statistics.median(
                    wall(lambda p=path: load_session(p)) for _ in range(3)
                )
                r["tui"] = t
                tui_rows.append(
                    [
                        f"{r['n']:,}",
                        fmt_s(t["load_wall"]),
                        fmt_s(t["ready"]),
                        f"{t['ready'] - t['load_wall']:+.2f} s",
                        fmt_s(t["to_end"]),
                    ]
                )
            print("TUI headless (App.run_test, 120x40)")
            print_table(
                ["messages", "load (wall)", "list ready", "ready - load", "end key"], tui_rows
            )

    stream_res = None
    if not args.skip_stream:
        reason = stream_available()
        if reason:
            print(f"Stream: skipped ({reason})\n")
        else:
            stream_res = bench_stream(args.chunks, max(1, min(args.repeats, 3)))
            print(f"Streaming {args.chunks:,} chunks from the loopback server through the TUI")
            print_table(
                ["chunks", "whole stream", "last chunk -> on screen"],
                [[f"{args.chunks:,}", fmt_s(stream_res["total"]), fmt_s(stream_res["lag"])]],
            )

    extra_checks = whole_commands(paths_by_n, args)

    # Targets, judged on the largest size.
    big = results[-1]
    print(f"Targets (largest size, {big['n']:,} messages)")
    checks = [
        [
            "load + plan <= 1.5x floor",
            f"{big['load+plan'] / big['floor']:.2f}x",
            verdict(big["load+plan"] / big["floor"] <= 1.5),
        ],
        [
            "request + compacted + diff < 0.5x load",
            f"{big['r+c+d'] / big['load']:.2f}x",
            verdict(big["r+c+d"] / big["load"] < 0.5),
        ],
        [
            "load + plan <= 1.5x floor with the GC off too",
            f"{big['load+plan'] / big['floor_nogc']:.2f}x",
            verdict(big["load+plan"] / big["floor_nogc"] <= 1.5),
        ],
        [
            "(load + plan + token figures) <= 1.5x floor",
            f"{big['load+plan+tokens'] / big['floor']:.2f}x",
            verdict(big["load+plan+tokens"] / big["floor"] <= 1.5),
        ],
    ]
    if "memory" in big:
        m = big["memory"]["load+plan"]
        checks.append(["peak memory < 3x file", f"{m:.2f}x", verdict(m < 3.0)])
    if "tui" in big:
        d = big["tui"]["ready"] - big["tui"]["load_wall"]
        checks.append(["TUI ready <= load + 1 s", f"load {d:+.2f} s", verdict(d <= 1.0)])
    if stream_res is not None:
        checks.append(
            [
                "10k chunks on screen < 0.5 s after the last",
                fmt_s(stream_res["lag"]),
                verdict(stream_res["lag"] < 0.5),
            ]
        )
    checks.extend(extra_checks)
    print_table(["target", "measured", "verdict"], checks)
    print(f"load average at the end: {load_avg()}")
    if args.json:
        raw = {"sizes": results, "shapes": args.shape_results}
        Path(args.json).write_text(json.dumps(raw, indent=2, default=str))
    return 0


def profile(step: str, n: int) -> int:
    paths = generate.ensure(n)
    path = paths["kimi"]
    session = load_session(path)
    plan, _ = plan_and_tokens(session)
    config = AppConfig()
    cfg = config.compaction.as_spec()
    prompt = config.prompt()
    compacted = build_compacted_session(session, plan, SUMMARY)
    from kimi_compact_tui.diff import diff_sessions

    steps: dict[str, Callable[[], Any]] = {
        "floor": lambda: floor_kimi(path),
        "load": lambda: load_session(path),
        "plan": lambda: plan_and_tokens(session),
        "request": lambda: build_request(session.messages, plan, prompt, cfg),
        "compacted": lambda: build_compacted_session(session, plan, SUMMARY),
        "diff": lambda: diff_sessions(session, compacted),
        "tui": lambda: asyncio.run(tui_open_once(path)),
    }
    prof = cProfile.Profile()
    prof.enable()
    steps[step]()
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="kimi-compact-tui benchmarks")
    parser.add_argument("--sizes", nargs="+", type=int, default=list(generate.SIZES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="time the in-process steps by wall clock or by this process's CPU time",
    )
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--skip-tui", action="store_true")
    parser.add_argument("--skip-stream", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-kimi-cli", action="store_true", help="leave out Context.restore()")
    parser.add_argument("--json", metavar="FILE", help="also write the raw figures as JSON")
    parser.add_argument(
        "--code",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="also time the start-up of another checkout (e.g. main), for a before and after",
    )
    parser.add_argument(
        "--profile",
        metavar="STEP",
        choices=("floor", "load", "plan", "request", "compacted", "diff", "tui"),
        help="cProfile one step on the largest size instead of benchmarking",
    )
    parser.add_argument("--memory-child", nargs=2, metavar=("PATH", "WHAT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    core_bench.CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.memory_child:
        memory_child(*args.memory_child)
        return 0
    if args.profile:
        return profile(args.profile, max(args.sizes))
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())

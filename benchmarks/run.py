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
  stream screen: time from the last chunk arriving to its text being on screen.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python benchmarks/run.py` as well as `-m benchmarks.run`
    sys.path.insert(0, str(ROOT))

from benchmarks import generate  # noqa: E402
from kimi_compact_tui.compaction import make_plan  # noqa: E402
from kimi_compact_tui.compaction.prompts import resolve_prompt  # noqa: E402
from kimi_compact_tui.compaction.request import build_request  # noqa: E402
from kimi_compact_tui.compaction.tokens import message_tokens  # noqa: E402
from kimi_compact_tui.config import AppConfig, _get_compaction_config  # noqa: E402
from kimi_compact_tui.formats import load_session  # noqa: E402
from kimi_compact_tui.job import build_compacted_session  # noqa: E402

SUMMARY = "## Summary\n" + "The user and the assistant refactored the parser. " * 40
TARGETS = {
    "load+plan / floor": 1.5,
    "request+compacted+diff / load": 0.5,
    "tui ready - load (s)": 1.0,
    "stream lag (s)": 0.5,
    "peak memory / file": 3.0,
}


# ----------------------------------------------------------------------------- timing helpers


# The clock of the in-process steps: wall time (default), or this process's
# CPU time (``--clock cpu``), which a busy neighbour on a shared machine
# disturbs far less. The TUI and stream figures are always wall time.
CLOCK: Callable[[], float] = time.perf_counter


def median_time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = CLOCK()
        result = fn()
        times.append(CLOCK() - t0)
        del result
    return statistics.median(times)


def floor_kimi(path: Path) -> list[Any]:
    """Plain ``json.loads`` per record: the floor for a line-based file."""
    text = path.read_bytes().decode("utf-8")
    loads = json.loads
    return [loads(line) for line in text.split("\n") if line]


def floor_kimi_nogc(path: Path) -> list[Any]:
    """The same with the cyclic GC paused, as ``formats.parse_session`` does:
    the stricter floor."""
    gc.disable()
    try:
        return floor_kimi(path)
    finally:
        gc.enable()


def floor_json(path: Path) -> Any:
    return json.loads(path.read_bytes().decode("utf-8"))


def plan_and_tokens(session) -> tuple[Any, list[int]]:
    cfg = _get_compaction_config(AppConfig().raw)
    plan = make_plan(session.messages, max_preserved_messages=cfg["max_preserved_messages"])
    return plan, [message_tokens(m) for m in session.messages]


def load_and_plan(path: Path) -> Any:
    """Load and plan: what ``plan`` needs to draw the regions."""
    session = load_session(path)
    cfg = _get_compaction_config(AppConfig().raw)
    return session, make_plan(
        session.messages, max_preserved_messages=cfg["max_preserved_messages"]
    )


def load_plan_tokens(path: Path) -> Any:
    """Load, plan and the per-message token figures (what ``plan`` prints)."""
    session = load_session(path)
    return session, plan_and_tokens(session)


# ----------------------------------------------------------------------------- core benchmarks


def bench_core(n: int, paths: dict[str, Path], repeats: int) -> dict[str, Any]:
    """Medians of ``repeats`` rounds; each round runs every step once, in turn,
    so that a busy neighbour on the machine slows all steps alike."""
    from kimi_compact_tui.diff import diff_sessions

    kimi_path = paths["kimi"]
    json_path = paths["openai-json"]
    session = load_session(kimi_path)
    cfg = _get_compaction_config(AppConfig().raw)
    prompt = resolve_prompt(cfg)
    plan, tokens = plan_and_tokens(session)
    compacted = build_compacted_session(session, plan, SUMMARY)
    steps: dict[str, Callable[[], Any]] = {
        "floor": lambda: floor_kimi(kimi_path),
        "floor_nogc": lambda: floor_kimi_nogc(kimi_path),
        "load": lambda: load_session(kimi_path),
        "load+plan": lambda: load_and_plan(kimi_path),
        "load+plan+tokens": lambda: load_plan_tokens(kimi_path),
        "request": lambda: build_request(session.messages, plan, prompt, cfg),
        "compacted": lambda: build_compacted_session(session, plan, SUMMARY),
        # As the TUI does it: the per-message token figures of the plan are reused.
        "diff": lambda: diff_sessions(session, compacted, before_tokens=tokens),
        "json_floor": lambda: floor_json(json_path),
        "json_load": lambda: load_session(json_path),
    }
    samples: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(repeats):
        for name, fn in steps.items():
            samples[name].append(median_time(fn, 1))
    row: dict[str, Any] = {k: statistics.median(v) for k, v in samples.items()}
    row["n"] = n
    row["file_mb"] = kimi_path.stat().st_size / 1e6
    row["json_mb"] = json_path.stat().st_size / 1e6
    row["r+c+d"] = row["request"] + row["compacted"] + row["diff"]
    return row


# ----------------------------------------------------------------------------- memory (subprocess)


def _peak_rss() -> int:
    """This process's peak RSS in bytes. ``VmHWM`` rather than ``ru_maxrss``:
    on Linux ``ru_maxrss`` survives ``exec`` and would report the parent's peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _memory_child(path: str, what: str) -> None:
    """Runs in a fresh interpreter: print the peak RSS growth in bytes."""
    p = Path(path)
    gc.collect()
    before = _peak_rss()
    if what == "floor":
        keep = floor_kimi(p)
    elif what == "load":
        keep = load_session(p)
    else:
        keep = load_plan_tokens(p)
    after = _peak_rss()
    print(json.dumps({"peak_growth": after - before, "baseline": before}))
    del keep


def bench_memory(path: Path) -> dict[str, float]:
    out = {}
    size = path.stat().st_size
    for what in ("floor", "load", "load+plan"):
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.run", "--memory-child", str(path), what],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        out[what] = data["peak_growth"] / size
        out["baseline_mb"] = data["baseline"] / 1e6
    return out


# ----------------------------------------------------------------------------- TUI


def tui_available() -> str | None:
    """None when the TUI can be benchmarked, else the reason it cannot."""
    try:
        from kimi_compact_tui.tui import app as _app  # noqa: F401
    except Exception as exc:  # not landed yet / broken import
        return f"kimi_compact_tui.tui.app not importable ({type(exc).__name__}: {exc})"
    if not hasattr(_app, "create_app"):
        return "kimi_compact_tui.tui.app has no create_app"
    return None


def _find_message_list(app) -> Any:
    from kimi_compact_tui.tui.widgets.message_list import MessageList

    for screen in [app.screen, *getattr(app, "screen_stack", [])]:
        found = screen.query(MessageList)
        if found:
            return found.first()
    return None


async def _tui_open_once(path: Path) -> tuple[float, float]:
    from kimi_compact_tui.tui.app import create_app

    t0 = time.perf_counter()
    app = create_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        total = None
        while True:
            lst = _find_message_list(app)
            count = _row_count(lst) if lst is not None else None
            if count:
                total = count
                break
            await pilot.pause(0.005)
            if time.perf_counter() - t0 > 120:
                raise TimeoutError("TUI list not ready after 120 s")
        ready = time.perf_counter() - t0
        t1 = time.perf_counter()
        lst.focus()
        await pilot.press("end")
        while _highlighted(lst) != total - 1:
            await pilot.pause(0.005)
            if time.perf_counter() - t1 > 60:
                raise TimeoutError("end of list not reached after 60 s")
        await pilot.pause()  # let the refresh happen
        to_end = time.perf_counter() - t1
    return ready, to_end


def _row_count(lst) -> int | None:
    for attr in ("message_count", "row_count", "count", "total"):
        value = getattr(lst, attr, None)
        if isinstance(value, int):
            return value
    items = getattr(lst, "items", None) or getattr(lst, "messages", None)
    return len(items) if items is not None else None


def _highlighted(lst) -> int | None:
    for attr in ("index", "cursor", "highlighted", "selected"):
        value = getattr(lst, attr, None)
        if isinstance(value, int):
            return value
    return None


def _wall(fn: Callable[[], Any]) -> float:
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench_tui(path: Path, repeats: int) -> dict[str, float]:
    ready, to_end = [], []
    for _ in range(repeats):
        gc.collect()
        r, e = asyncio.run(_tui_open_once(path))
        ready.append(r)
        to_end.append(e)
    return {"ready": statistics.median(ready), "to_end": statistics.median(to_end)}


# ----------------------------------------------------------------------------- streaming


def stream_available() -> str | None:
    reason = tui_available()
    if reason:
        return reason
    try:
        from kimi_compact_tui.tui.screens import stream  # noqa: F401
    except Exception as exc:
        return f"kimi_compact_tui.tui.screens.stream not importable ({type(exc).__name__}: {exc})"
    return None


async def _stream_once(chunks: int) -> dict[str, float]:
    from benchmarks.stream_bench import stream_through_tui

    return await stream_through_tui(chunks)


def bench_stream(chunks: int, repeats: int) -> dict[str, float]:
    lags, totals = [], []
    for _ in range(repeats):
        res = asyncio.run(_stream_once(chunks))
        lags.append(res["lag"])
        totals.append(res["total"])
    return {"lag": statistics.median(lags), "total": statistics.median(totals)}


# ----------------------------------------------------------------------------- report


def machine() -> str:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f", {int(line.split()[1]) / 1e6:.0f} GB RAM"
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}"
    )


def _load_avg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def fmt_s(value: float) -> str:
    if value < 1:
        return f"{value * 1000:.1f} ms"
    return f"{value:.2f} s"


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    print(line)
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print()


def whole_commands(paths_by_n: dict[int, dict[str, Path]], args: argparse.Namespace) -> list:
    """``plan --json`` as a whole command and the retention report: tables, and
    their target rows (see benchmarks/commands_bench.py, retention_bench.py)."""
    from benchmarks.discover_bench import bench_discover
    from benchmarks.retention_bench import bench_retention
    from benchmarks.shapes_bench import HEADERS, bench_shape, rows

    big_n = max(paths_by_n)
    repeats = max(1, min(args.repeats, 3))

    def tui(path: Path) -> dict[str, float]:
        t = bench_tui(path, repeats)
        t["load_wall"] = statistics.median(_wall(lambda: load_session(path)) for _ in range(3))
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
        f"load average at start: {_load_avg()}\n"
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
                    _wall(lambda p=path: load_session(p)) for _ in range(3)
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
    print(f"load average at the end: {_load_avg()}")
    if args.json:
        raw = {"sizes": results, "shapes": args.shape_results}
        Path(args.json).write_text(json.dumps(raw, indent=2, default=str))
    return 0


def profile(step: str, n: int) -> int:
    paths = generate.ensure(n)
    path = paths["kimi"]
    session = load_session(path)
    plan, _ = plan_and_tokens(session)
    cfg = _get_compaction_config(AppConfig().raw)
    prompt = resolve_prompt(cfg)
    compacted = build_compacted_session(session, plan, SUMMARY)
    from kimi_compact_tui.diff import diff_sessions

    steps: dict[str, Callable[[], Any]] = {
        "floor": lambda: floor_kimi(path),
        "load": lambda: load_session(path),
        "plan": lambda: plan_and_tokens(session),
        "request": lambda: build_request(session.messages, plan, prompt, cfg),
        "compacted": lambda: build_compacted_session(session, plan, SUMMARY),
        "diff": lambda: diff_sessions(session, compacted),
        "tui": lambda: asyncio.run(_tui_open_once(path)),
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
        "--profile",
        metavar="STEP",
        choices=("floor", "load", "plan", "request", "compacted", "diff", "tui"),
        help="cProfile one step on the largest size instead of benchmarking",
    )
    parser.add_argument("--memory-child", nargs=2, metavar=("PATH", "WHAT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.memory_child:
        _memory_child(*args.memory_child)
        return 0
    if args.profile:
        return profile(args.profile, max(args.sizes))
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())

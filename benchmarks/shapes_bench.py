"""Both generator shapes at the largest size, as a user meets them: ``plan
SESSION --json`` as a whole command against a ``json.loads``-per-line script
(CPU time, medians), its peak memory against the file size, the TUI list
ready time against the load, and kimi-cli's own ``Context.restore()`` of the
same file (skipped when kimi-cli 1.51 is not installed). Run from
``benchmarks.run`` (``--skip-kimi-cli`` leaves kimi-cli out: about 40 s a
shape), or alone::

    .venv/bin/python -m benchmarks.shapes_bench [--size 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import generate
from benchmarks.commands_bench import bench_plan_command
from benchmarks.kimi_cli_bench import bench_restore

PLAN_RATIO = 1.5  # plan --json CPU / json.loads-per-line script
NATIVE_RATIO = 3.0  # plan --json CPU / msgspec decode-and-keep script (the native floor)
PEAK_RATIO = 2.5  # plan --json peak RSS growth / file size
TUI_SLACK = 0.5  # list ready - load (s), and list ready - plan --json (wall, s)


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def bench_shape(
    shape: str,
    n: int,
    repeats: int,
    *,
    tui: Callable[[Path], dict[str, float]] | None = None,
    kimi_cli: bool = True,
) -> dict[str, Any]:
    """The figures of one shape; ``tui(path)`` gives ``ready`` and ``load_wall``."""
    path = generate.ensure(n, shape=shape)["kimi"]
    small = generate.ensure(10)["kimi"]
    out: dict[str, Any] = {"shape": shape, "n": n, "load_start": load_average()}
    out["plan"] = bench_plan_command(path, small, repeats)
    if tui is not None:
        out["tui"] = tui(path)
    if kimi_cli:
        out["kimi_cli"] = bench_restore(path, 1)
    out["load_end"] = load_average()
    return out


def _fmt(seconds: float) -> str:
    return f"{seconds:.2f} s"


def rows(results: list[dict[str, Any]]) -> tuple[list[list[str]], list[list[str]]]:
    """Table rows (one a shape) and target rows (verdicts)."""
    table, targets = [], []
    for r in results:
        p = r["plan"]
        t = r.get("tui")
        k = r.get("kimi_cli")
        table.append(
            [
                r["shape"],
                f"{p['file_mb']:.1f} MB",
                _fmt(p["plan_cpu"]),
                _fmt(p["floor_cpu"]),
                f"{p['ratio']:.2f}x",
                _fmt(p["native_floor_cpu"]),
                f"{p['native_ratio']:.2f}x",
                f"{p['memory_growth']:.2f}x",
                (
                    f"{_fmt(t['ready'])} (load {t['ready'] - t['load_wall']:+.2f} s, "
                    f"plan {t['ready'] - p['plan_wall']:+.2f} s)"
                    if t
                    else "-"
                ),
                (
                    f"{_fmt(k['restore_cpu'])} ({k['ratio']:.1f}x)"
                    if k
                    else "-" if "kimi_cli" not in r else "not installed"
                ),
                f"{r['load_start']} / {r['load_end']}",
            ]
        )
        s = r["shape"]
        ok = "met" if p["ratio"] <= PLAN_RATIO else "MISSED"
        targets.append(
            [f"{s}: plan --json <= {PLAN_RATIO}x json.loads script", f"{p['ratio']:.2f}x", ok]
        )
        ok = "met" if p["native_ratio"] <= NATIVE_RATIO else "MISSED"
        targets.append(
            [
                f"{s}: plan --json <= {NATIVE_RATIO}x native floor (msgspec)",
                f"{p['native_ratio']:.2f}x",
                ok,
            ]
        )
        ok = "met" if p["memory_growth"] <= PEAK_RATIO else "MISSED"
        targets.append(
            [f"{s}: plan --json peak <= {PEAK_RATIO}x file", f"{p['memory_growth']:.2f}x", ok]
        )
        if t:
            d = t["ready"] - t["load_wall"]
            ok = "met" if d <= TUI_SLACK else "MISSED"
            targets.append([f"{s}: TUI ready <= load + {TUI_SLACK} s", f"load {d:+.2f} s", ok])
            d = t["ready"] - p["plan_wall"]
            ok = "met" if d <= TUI_SLACK else "MISSED"
            targets.append(
                [
                    f"{s}: TUI ready <= plan --json (wall) + {TUI_SLACK} s",
                    f"plan {d:+.2f} s",
                    ok,
                ]
            )
    return table, targets


HEADERS = [
    "shape",
    "file",
    "plan --json (CPU)",
    "json.loads script",
    "ratio",
    "msgspec floor",
    "/ native",
    "peak growth / file",
    "TUI list ready",
    "kimi-cli restore() (CPU, / script)",
    "load avg start / end",
]


def print_table(headers: list[str], table: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(headers)]
    for r in [headers, ["-" * w for w in widths], *table]:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-kimi-cli", action="store_true")
    args = parser.parse_args(argv)
    results = [
        bench_shape(s, args.size, args.repeats, kimi_cli=not args.skip_kimi_cli)
        for s in generate.SHAPES
    ]
    table, targets = rows(results)
    print_table(HEADERS, table)
    print_table(["target", "measured", "verdict"], targets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

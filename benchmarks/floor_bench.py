"""``plan --json`` of the dense 100,000-message session against the native
floor (issue 32, "Performance"): a script that decodes every line with
msgspec's C decoder and keeps it, with the garbage collector off.

    .venv/bin/python -m benchmarks.floor_bench [--shape dense] [--repeats 5] [--code DIR]

Whole commands in fresh interpreters (CPU of the child, peak RSS), medians of
``--repeats``, the runs of every checkout interleaved so a change in the
machine's load falls on all of them alike. ``--code DIR`` adds another
checkout's ``plan --json`` (run from ``DIR``) for a before/after in one run.
Memory: peak RSS growth over the same command on a 10-message session, against
the file size (the floor: its peak against the file).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import generate  # noqa: E402
from benchmarks.commands_bench import MSGSPEC_FLOOR_SCRIPT, measure  # noqa: E402

NATIVE_FLOOR_NO_GC = "import gc\ngc.disable()\n" + MSGSPEC_FLOOR_SCRIPT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=generate.SHAPES, default="dense")
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--code", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    big = generate.ensure(args.messages, shape=args.shape)["kimi"]
    small = generate.ensure(10)["kimi"]
    size = big.stat().st_size
    codes = [*args.code, ROOT]
    cpu: dict[str, list[float]] = {}
    rss: dict[str, list[int]] = {}
    for _ in range(args.repeats):
        for code in codes:
            env = {**os.environ, "PYTHONPATH": str(code)}
            for name, path in ((str(code), big), (f"{code} (10 messages)", small)):
                c, r = measure(
                    [sys.executable, "-m", "kimi_compact_tui", "plan", str(path), "--json"],
                    env,
                    code,
                )
                cpu.setdefault(name, []).append(c)
                rss.setdefault(name, []).append(r)
        for name, script in (
            ("floor", MSGSPEC_FLOOR_SCRIPT),
            ("floor, GC off", NATIVE_FLOOR_NO_GC),
        ):
            c, r = measure([sys.executable, "-c", script, str(big)])
            cpu.setdefault(name, []).append(c)
            rss.setdefault(name, []).append(r)
    floor = statistics.median(cpu["floor, GC off"])
    print(f"{big} ({size / 1e6:.1f} MB), medians of {args.repeats}")
    for name in ("floor, GC off", "floor"):
        print(
            f"  {name:<14} {statistics.median(cpu[name]):.2f} s CPU; "
            f"peak {statistics.median(rss[name]) / size:.2f}x the file"
        )
    for code in codes:
        c = statistics.median(cpu[str(code)])
        grown = statistics.median(rss[str(code)]) - min(rss[f"{code} (10 messages)"])
        print(
            f"  plan --json {code}: {c:.2f} s CPU = {c / floor:.2f}x the native floor (GC off); "
            f"memory growth {grown / size:.2f}x the file"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

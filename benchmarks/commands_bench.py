"""Whole commands, as a user runs them: ``plan SESSION --json`` against a
plain ``json.loads``-per-line script over the same file and against a native
floor (msgspec's C decoder decoding and keeping every line), each in a fresh
interpreter, and the peak memory of the command as growth over the same
command on a 10-message session.

Each child reports its own user+system CPU time and peak RSS (``ru_maxrss``
of the child, read by a small wrapper), so a busy neighbour on a shared
machine disturbs the ratio far less than wall time would.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

FLOOR_SCRIPT = (
    "import json, sys\n"
    "out = []\n"
    "with open(sys.argv[1], 'rb') as fh:\n"
    "    for line in fh:\n"
    "        out.append(json.loads(line))\n"
    "print(len(out))\n"
)

# The native floor: the C decoder the loader itself uses, every line decoded and kept.
MSGSPEC_FLOOR_SCRIPT = (
    "import sys\n"
    "import msgspec\n"
    "decode = msgspec.json.Decoder().decode\n"
    "out = []\n"
    "with open(sys.argv[1], 'rb') as fh:\n"
    "    for line in fh.read().split(b'\\n'):\n"
    "        if line.strip():\n"
    "            out.append(decode(line))\n"
    "print(len(out))\n"
)

# Runs the command given after it, then prints the child's CPU seconds, peak RSS
# (KiB) and wall seconds.
WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
    "t = time.perf_counter() - t\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(r.ru_utime + r.ru_stime, r.ru_maxrss, t)\n"
)
LAST_WALL: list[float] = []  # the wall seconds of each measure(), in order


def measure(
    argv: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT
) -> tuple[float, int]:
    """The child's CPU seconds (user + system) and peak RSS in bytes."""
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    cpu, rss_kib, seconds = proc.stdout.split()
    LAST_WALL.append(float(seconds))
    return float(cpu), int(rss_kib) * 1024


def _plan_argv(path: Path) -> list[str]:
    return [sys.executable, "-m", "kimi_compact_tui", "plan", str(path), "--json"]


def bench_plan_command(big: Path, small: Path, repeats: int = 3) -> dict[str, Any]:
    plan, plan_wall = [], []
    for _ in range(repeats):
        plan.append(measure(_plan_argv(big)))
        plan_wall.append(LAST_WALL[-1])
    floor = [measure([sys.executable, "-c", FLOOR_SCRIPT, str(big)]) for _ in range(repeats)]
    native = [
        measure([sys.executable, "-c", MSGSPEC_FLOOR_SCRIPT, str(big)]) for _ in range(repeats)
    ]
    small_rss = min(measure(_plan_argv(small))[1] for _ in range(repeats))
    plan_cpu = statistics.median(t for t, _ in plan)
    floor_cpu = statistics.median(t for t, _ in floor)
    native_cpu = statistics.median(t for t, _ in native)
    plan_rss = statistics.median(r for _, r in plan)
    size = big.stat().st_size
    return {
        "file_mb": size / 1e6,
        "plan_cpu": plan_cpu,
        "plan_wall": statistics.median(plan_wall),
        "floor_cpu": floor_cpu,
        "ratio": plan_cpu / floor_cpu,
        "native_floor_cpu": native_cpu,
        "native_ratio": plan_cpu / native_cpu,
        "plan_peak_mb": plan_rss / 1e6,
        "small_peak_mb": small_rss / 1e6,
        "memory_growth": (plan_rss - small_rss) / size,
    }


def main() -> int:
    from benchmarks import generate

    big = generate.ensure(100_000)["kimi"]
    small = generate.ensure(10)["kimi"]
    print(json.dumps(bench_plan_command(big, small), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

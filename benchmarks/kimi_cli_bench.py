"""kimi-cli's own load of a ``context.jsonl``: ``Context.restore()`` of the
kimi-cli 1.51 that ``.ci/install-agents`` installs (its own venv, Python 3.13),
timed in that interpreter by CPU time (the call alone, and the whole child
with its imports), beside a ``json.loads``-per-line script over the same file.

Skipped (None) when that kimi-cli is not installed. ``KIMI_CLI_PYTHON`` names
another interpreter that can import ``kimi_cli``.

    .venv/bin/python -m benchmarks.kimi_cli_bench [--shape dense] [--repeats 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.commands_bench import FLOOR_SCRIPT, measure

KIMI_CLI_VERSION = "1.51.0"

# Runs in kimi-cli's interpreter: restore the file, print the CPU seconds of
# restore(), the number of messages it restored and the whole process's CPU seconds.
RESTORE_SCRIPT = (
    "import asyncio, resource, sys, time\n"
    "from pathlib import Path\n"
    "from loguru import logger\n"
    "logger.remove()\n"
    "from kimi_cli.soul.context import Context\n"
    "ctx = Context(Path(sys.argv[1]))\n"
    "t = time.process_time()\n"
    "asyncio.run(ctx.restore())\n"
    "r = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(time.process_time() - t, len(ctx.history), r.ru_utime + r.ru_stime)\n"
)


def kimi_cli_python() -> Path | None:
    """kimi-cli's interpreter, when it is installed."""
    override = os.environ.get("KIMI_CLI_PYTHON")
    if override:
        return Path(override)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    python = cache / "kimi-compact-tui" / "agents" / f"kimi-cli-{KIMI_CLI_VERSION}" / "venv"
    python = python / "bin" / "python"
    return python if python.is_file() else None


def bench_restore(path: Path, repeats: int = 1) -> dict[str, Any] | None:
    """CPU seconds of kimi-cli's ``Context.restore()`` on ``path`` (median of
    ``repeats``), of its whole child process, and of the floor script."""
    python = kimi_cli_python()
    if python is None:
        return None
    restore, whole = [], []
    messages = 0
    for _ in range(repeats):
        proc = subprocess.run(
            [str(python), "-c", RESTORE_SCRIPT, str(path)],
            capture_output=True,
            text=True,
            check=True,
        )
        cpu, count, process = proc.stdout.split()
        restore.append(float(cpu))
        messages = int(count)
        whole.append(float(process))
    floor = statistics.median(
        measure([sys.executable, "-c", FLOOR_SCRIPT, str(path)])[0] for _ in range(repeats)
    )
    return {
        "restore_cpu": statistics.median(restore),
        "process_cpu": statistics.median(whole),
        "floor_cpu": floor,
        "ratio": statistics.median(restore) / floor,
        "messages": messages,
    }


def main(argv: list[str] | None = None) -> int:
    from benchmarks import generate

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shape", choices=generate.SHAPES, default="default")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    path = generate.ensure(args.size, shape=args.shape)["kimi"]
    result = bench_restore(path, args.repeats)
    if result is None:
        print(f"kimi-cli {KIMI_CLI_VERSION} is not installed (.ci/install-agents): skipped")
        return 0
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

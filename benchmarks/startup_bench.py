"""Start-up: whole commands that do little, as a user runs them.

``kimi-compact-tui --help`` and ``plan`` of a 10-message session, each in a
fresh interpreter, by the child's own CPU time (user + system, read by the
wrapper of :mod:`benchmarks.commands_bench`), medians of several runs, beside
a bare ``python -c pass`` (the interpreter's own start). ``--code DIR`` runs
the same commands from another checkout too (from ``DIR``, ``PYTHONPATH=DIR``), so a before
and an after are measured in one run, under the same load::

    .venv/bin/python -m benchmarks.startup_bench [--repeats 9] [--code /path/to/main]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from benchmarks import generate
from benchmarks.commands_bench import ROOT, measure
from benchmarks.report import fmt_s, load_avg, print_table, verdict

HELP_TARGET = 0.10  # s of CPU, the whole command (issue 30)
PLAN_TARGET = 0.12  # s of CPU, the whole command, a 10-message session (issue 30)


def _commands(small: Path) -> dict[str, list[str]]:
    cli = [sys.executable, "-m", "kimi_compact_tui"]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "--help": [*cli, "--help"],
        "plan (10 messages)": [*cli, "plan", str(small)],
    }


def bench_startup(repeats: int = 9, code: Path | None = None) -> dict[str, Any]:
    """CPU seconds (median and min) of each command; ``code``: another
    checkout's package instead of this one (``PYTHONPATH``)."""
    small = generate.ensure(10)["kimi"]
    env = dict(os.environ)
    env.pop("KIMI_COMPACT_TUI_CONFIG", None)
    env["XDG_CONFIG_HOME"] = str(generate.OUT_DIR / "no-config")  # no user config is read
    if code is not None:
        env["PYTHONPATH"] = str(code)
    out: dict[str, Any] = {"code": str(code) if code else "this checkout", "load": load_avg()}
    for name, argv in _commands(small).items():
        times = [measure(argv, env=env, cwd=code or ROOT)[0] for _ in range(repeats)]
        out[name] = {"median": statistics.median(times), "min": min(times)}
    return out


def rows(results: list[dict[str, Any]]) -> tuple[list[list[str]], list[list[str]]]:
    table = [
        [
            r["code"],
            *(
                f"{fmt_s(r[name]['median'])} (min {fmt_s(r[name]['min'])})"
                for name in ("python -c pass", "--help", "plan (10 messages)")
            ),
            r["load"],
        ]
        for r in results
    ]
    mine = results[0]
    targets = [
        [
            f"--help <= {HELP_TARGET} s CPU",
            fmt_s(mine["--help"]["median"]),
            verdict(mine["--help"]["median"] <= HELP_TARGET),
        ],
        [
            f"plan of 10 messages <= {PLAN_TARGET} s CPU",
            fmt_s(mine["plan (10 messages)"]["median"]),
            verdict(mine["plan (10 messages)"]["median"] <= PLAN_TARGET),
        ],
    ]
    return table, targets


HEADERS = ["code", "python -c pass", "--help", "plan (10 messages)", "load avg"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--code", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    results = [bench_startup(args.repeats)]
    results += [bench_startup(args.repeats, code) for code in args.code]
    table, targets = rows(results)
    print("Start-up: whole commands, CPU (user + system) of the child, medians")
    print_table(HEADERS, table)
    print_table(["target", "measured", "verdict"], targets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

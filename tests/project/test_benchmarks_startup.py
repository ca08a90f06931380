"""The start-up benchmark and the native floor still run (figures are judged
by ``python -m benchmarks.run``, not here)."""

from __future__ import annotations

import json
import sys

from benchmarks import startup_bench
from benchmarks.commands_bench import MSGSPEC_FLOOR_SCRIPT
from tests import procs


def test_the_startup_benchmark_times_each_command():
    result = startup_bench.bench_startup(repeats=1)
    for name in ("python -c pass", "--help", "plan (10 messages)"):
        assert result[name]["median"] > 0
    table, targets = startup_bench.rows([result])
    assert len(table) == 1 and len(targets) == 2


def test_the_native_floor_decodes_and_keeps_every_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"n": i}) + "\n" for i in range(7)), encoding="utf-8")
    out = procs.run(
        [sys.executable, "-c", MSGSPEC_FLOOR_SCRIPT, str(path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "7"

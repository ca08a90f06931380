"""Session discovery benchmark: the picker's scan of a kimi-cli share folder holding
many sessions (``formats.kimi_cli.discover.discover``).

``benchmarks/run.py`` calls :func:`bench_discover`; run alone::

    .venv/bin/python -m benchmarks.discover_bench          # 1,500 sessions
    .venv/bin/python -m benchmarks.discover_bench 5000

The folder is generated into a temporary directory (one work folder, sessions of a
few messages with a ``wire.jsonl`` title each). The target is checked on this
process's CPU time, which a busy neighbour on a shared machine disturbs far less
than wall time.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.kimi_cli.discover import discover

TARGET_SECONDS = 5.0
WORK = "/home/dev/project"


def make_share(root: Path, n: int) -> Path:
    share = root / "share"
    folder = share / "sessions" / hashlib.md5(WORK.encode()).hexdigest()
    folder.mkdir(parents=True)
    entry = {"path": WORK, "kaos": "local", "last_session_id": None}
    (share / "kimi.json").write_text(json.dumps({"work_dirs": [entry]}))
    records = [{"role": "_system_prompt", "content": "system"}]
    for i, role in enumerate(["user", "assistant", "user"]):
        records += [{"role": "_checkpoint", "id": i}, {"role": role, "content": f"message {i}"}]
    context = "".join(json.dumps(r) + "\n" for r in records)
    for i in range(n):
        session = folder / f"s{i:05d}"
        session.mkdir()
        (session / "context.jsonl").write_text(context)
        turn = {"type": "TurnBegin", "payload": {"user_input": [{"type": "text", "text": f"t{i}"}]}}
        (session / "wire.jsonl").write_text(json.dumps({"timestamp": 1.0, "message": turn}) + "\n")
    return share


def bench_discover(n: int = 1500, repeats: int = 3) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kct-discover-") as tmp:
        share = make_share(Path(tmp), n)
        walls, cpus = [], []
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            found = discover({"KIMI_SHARE_DIR": str(share)}, Path(tmp))
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            assert len(found) == n, len(found)
    return {
        "sessions": n,
        "seconds": statistics.median(walls),
        "cpu_seconds": statistics.median(cpus),
    }


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 1500
    result = bench_discover(n)
    ok = result["cpu_seconds"] < TARGET_SECONDS
    print(
        f"discover {n:,} sessions: {result['seconds']:.2f} s wall, "
        f"{result['cpu_seconds']:.2f} s CPU (target < {TARGET_SECONDS:.0f} s CPU): "
        f"{'ok' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""One huge message (issue 32 item 2): a session of a few turns whose one tool
result is 30 MB: the ``cat`` of a minified JSON export (one line, no space:
one word of 30 MB), or with ``--shape log`` of a service's log. ``plan`` (the table, with each
message's one-line preview) and the TUI must cost what they show: within 2×
``plan --json`` (which shows no preview), memory within 4× the file.

    .venv/bin/python -m benchmarks.huge_bench [--mb 30] [--repeats 3] [--code DIR] [--skip-tui]

Whole commands in fresh interpreters (CPU of the child and its peak RSS, as
``benchmarks/commands_bench.py`` measures them); ``--code DIR`` measures
another checkout's commands (run from ``DIR``) on the same file in the same
run, for a before/after. The TUI figure is the headless list-ready time of
``benchmarks/tui_bench.py`` (wall clock).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import generate  # noqa: E402
from benchmarks.generate import OUT_DIR, write_kimi  # noqa: E402

LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")
PATHS = ("/api/v1/orders", "/api/v1/users/me", "/healthz", "/api/v1/invoices/search")


def log_text(mb: float, seed: int = 32) -> str:
    """About ``mb`` megabytes of a service's log, one event a line."""
    rng = random.Random(seed)
    lines: list[str] = []
    size = 0
    target = int(mb * 1e6)
    i = 0
    while size < target:
        i += 1
        line = (
            f"2026-12-01T10:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z "
            f"{rng.choice(LEVELS)} worker-{rng.randint(1, 8)} request id={rng.getrandbits(48):012x} "
            f"path={rng.choice(PATHS)} status={rng.choice((200, 200, 201, 404, 500))} "
            f"took={rng.randint(1, 900)}ms"
        )
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def minified_text(mb: float, seed: int = 32) -> str:
    """About ``mb`` megabytes of minified JSON (an export: one line, no spaces)."""
    rng = random.Random(seed)
    rows: list[str] = []
    size = 0
    i = 0
    while size < mb * 1e6:
        i += 1
        row = (
            f'{{"id":{i},"sku":"SKU-{rng.getrandbits(32):08x}","qty":{rng.randint(1, 40)},'
            f'"price":{rng.randint(100, 99999) / 100},"path":"{rng.choice(PATHS)}"}}'
        )
        rows.append(row)
        size += len(row) + 1
    return '{"orders":[' + ",".join(rows) + "]}"


def huge_messages(mb: float, shape: str = "minified") -> list[dict[str, Any]]:
    what = "cat /var/log/app/service.log" if shape == "log" else "cat exports/orders.min.json"
    call = {
        "id": "call_log",
        "type": "function",
        "function": {"name": "Shell", "arguments": f'{{"command": "{what}"}}'},
    }
    return [
        {"role": "user", "content": "The service is slow since this morning: look at its log."},
        {"role": "assistant", "content": "Reading the log.", "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "call_log",
            "content": log_text(mb) if shape == "log" else minified_text(mb),
        },
        {"role": "assistant", "content": "Requests to /api/v1/invoices/search take 900 ms."},
        {"role": "user", "content": "Add an index for that query."},
        {"role": "assistant", "content": "Added the index; the search takes 12 ms now."},
    ]


def ensure_huge(mb: float, shape: str = "minified", out: Path = OUT_DIR) -> Path:
    path = out / f"huge_{shape}_{mb:g}mb" / "context.jsonl"
    if not path.exists():
        write_kimi(path, huge_messages(mb, shape))
    return path


def bench_huge(
    path: Path, repeats: int, code: Path | None = None, tui: bool = True
) -> dict[str, Any]:
    from benchmarks.commands_bench import measure

    cwd = code or ROOT
    env = {**os.environ, "PYTHONPATH": str(cwd)}

    def run(*extra: str) -> tuple[float, float]:
        got = [
            measure([sys.executable, "-m", "kimi_compact_tui", "plan", str(path), *extra], env, cwd)
            for _ in range(repeats)
        ]
        return statistics.median(c for c, _ in got), statistics.median(r for _, r in got)

    plan_cpu, plan_rss = run()
    json_cpu, json_rss = run("--json")
    small = generate.ensure(10)["kimi"]
    base_rss = min(
        measure([sys.executable, "-m", "kimi_compact_tui", "plan", str(small)], env, cwd)[1]
        for _ in range(repeats)
    )
    size = path.stat().st_size
    out: dict[str, Any] = {
        "code": str(cwd),
        "file_mb": size / 1e6,
        "plan_cpu": plan_cpu,
        "plan_json_cpu": json_cpu,
        "ratio": plan_cpu / json_cpu,
        "plan_peak_per_file": plan_rss / size,
        "json_peak_per_file": json_rss / size,
        # growth over the same command on a 10-message session, as commands_bench reports it
        "plan_growth_per_file": (plan_rss - base_rss) / size,
        "json_growth_per_file": (json_rss - base_rss) / size,
    }
    if tui:  # in a child running that checkout's own TUI, and again on a 10-message session
        import json
        import subprocess

        def tui_child(session: Path) -> dict[str, Any] | None:
            script = (
                "import json, resource; from benchmarks.tui_bench import bench_tui; "
                f"r = bench_tui(__import__('pathlib').Path({str(session)!r}), {repeats}); "
                "r['peak_mb'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024; "
                "print(json.dumps(r))"
            )
            done = subprocess.run(
                [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True
            )
            lines = done.stdout.strip().splitlines()
            return json.loads(lines[-1]) if done.returncode == 0 and lines else None

        out["tui"] = tui_child(path)
        base = tui_child(small)
        if out["tui"] and base:
            grown = (out["tui"]["peak_mb"] - base["peak_mb"]) * 2**20
            out["tui"]["growth_per_file"] = grown / size
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=30.0)
    parser.add_argument("--shape", choices=("minified", "log"), default="minified")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--code", type=Path, action="append", default=[])
    parser.add_argument("--skip-tui", action="store_true")
    args = parser.parse_args(argv)
    path = ensure_huge(args.mb, args.shape)
    for code in [*args.code, None]:
        r = bench_huge(path, args.repeats, code, tui=not args.skip_tui)
        print(
            f"{r['code']}: {r['file_mb']:.1f} MB file; plan {r['plan_cpu']:.2f} s CPU, "
            f"plan --json {r['plan_json_cpu']:.2f} s ({r['ratio']:.2f}x); peak RSS plan "
            f"{r['plan_peak_per_file']:.2f}x the file, plan --json {r['json_peak_per_file']:.2f}x; "
            f"growth over a 10-message session: plan {r['plan_growth_per_file']:.2f}x, "
            f"plan --json {r['json_growth_per_file']:.2f}x"
        )
        tui = r.get("tui")
        if tui:
            print(
                f"  TUI: list ready {tui['ready']:.2f} s (wall), end {tui['to_end']:.2f} s; "
                f"peak RSS {tui['peak_mb'] * 2**20 / 1e6 / r['file_mb']:.2f}x the file, "
                f"growth over a 10-message session {tui.get('growth_per_file', float('nan')):.2f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

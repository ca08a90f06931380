"""The in-process steps of ``benchmarks.run``: the clock, the floors (plain
``json.loads``), load, plan and the per-message tokens, the core table and
peak memory."""

from __future__ import annotations

import gc
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.compaction.prompts import resolve_prompt
from kimi_compact_tui.compaction.request import build_request
from kimi_compact_tui.compaction.tokens import message_tokens
from kimi_compact_tui.config import AppConfig, _get_compaction_config
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import build_compacted_session

ROOT = Path(__file__).resolve().parents[1]

# ----------------------------------------------------------------------------- timing helpers


# The clock of the in-process steps: wall time (default), or this process's
# CPU time (``--clock cpu``), which a busy neighbour on a shared machine
# disturbs far less. The TUI and stream figures are always wall time.
SUMMARY = "## Summary\n" + "The user and the assistant refactored the parser. " * 40

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
        "request": lambda: build_request(session.messages, plan, prompt, cfg).body,  # built
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


def memory_child(path: str, what: str) -> None:
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

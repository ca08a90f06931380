"""``list``'s context meter over many sessions (issue 33 item 2).

``list`` shows each session's context fill. The meter is read from the session's
end (``formats/meter.py``: each agent's ``peek``: the last reply's usage is its
last such record), not by reading the session in full; a session whose end cannot
decide it (no reply since its last compaction) is read in full, and ``list`` does
that for the newest ``FULL_READS`` only. This measures, on generated Claude Code
and kimi-cli sessions (CPU seconds of this process, median of the repeats):

- the picker's discovery of them (what ``list`` cost before the meter);
- the meters read from the sessions' ends (what ``list`` adds now);
- the meters read in full (what it would add if every session were loaded).

Run::

    .venv/bin/python -m benchmarks.list_bench              # 200 sessions x 2,000 messages
    .venv/bin/python -m benchmarks.list_bench 100 5000
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
import tempfile
import time
import uuid as uuidlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

WORK = "/home/dev/project"


def claude_session(path: Path, n: int, seed: int) -> None:
    """A Claude Code transcript of ``n`` messages (user prompts and replies with usage)."""
    sid = path.stem
    lines = []
    parent = None
    for i in range(n):
        uid = str(uuidlib.UUID(int=seed * 1_000_000 + i + 1))
        stamp = f"2026-03-01T12:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
        rec: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "userType": "external",
                               "cwd": WORK, "sessionId": sid, "version": "2.1.197",
                               "uuid": uid, "timestamp": stamp}  # fmt: skip
        if i % 2 == 0:
            rec.update(
                type="user", message={"role": "user", "content": f"step {i}: edit file_{i}.py"}
            )
        else:
            usage = {"input_tokens": 1000 + i * 40, "output_tokens": 30,
                     "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}  # fmt: skip
            rec.update(type="assistant", message={
                "id": f"msg_{i}", "type": "message", "role": "assistant", "model": "claude-x",
                "content": [{"type": "text", "text": f"Done with step {i}. " * 8}],
                "stop_reason": "end_turn", "usage": usage})  # fmt: skip
        lines.append(json.dumps(rec))
        parent = uid
    path.write_text("\n".join(lines) + "\n")


def kimi_session(folder: Path, n: int) -> None:
    folder.mkdir(parents=True)
    records: list[dict[str, Any]] = [{"role": "_system_prompt", "content": "system"}]
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        records += [
            {"role": "_checkpoint", "id": i},
            {"role": role, "content": f"message {i} " * 10},
        ]
    records.append({"role": "_usage", "token_count": 40 * n})
    (folder / "context.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    turn = {"type": "TurnBegin", "payload": {"user_input": [{"type": "text", "text": "t"}]}}
    (folder / "wire.jsonl").write_text(json.dumps({"timestamp": 1.0, "message": turn}) + "\n")


def make_home(root: Path, sessions: int, messages: int) -> Path:
    home = root / "home"
    project = home / ".claude" / "projects" / "-home-dev-project"
    project.mkdir(parents=True)
    share = home / ".kimi"
    kimi = share / "sessions" / hashlib.md5(WORK.encode()).hexdigest()
    entry = {"path": WORK, "kaos": "local", "last_session_id": None}
    kimi.mkdir(parents=True)
    (share / "kimi.json").write_text(json.dumps({"work_dirs": [entry]}))
    for i in range(sessions):
        if i % 2 == 0:
            claude_session(project / f"{uuidlib.UUID(int=i + 1)}.jsonl", messages, i + 1)
        else:
            kimi_session(kimi / f"s{i:05d}", messages)
    return home


def cpu(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        c0 = time.process_time()
        result = fn()
        times.append(time.process_time() - c0)
    return statistics.median(times), result


def bench_list(sessions: int = 200, messages: int = 2000, repeats: int = 3) -> dict[str, Any]:
    from kimi_compact_tui.formats import registry
    from kimi_compact_tui.formats.meter import meter_of

    with tempfile.TemporaryDirectory(prefix="kct-list-") as tmp:
        home = make_home(Path(tmp), sessions, messages)
        env = {"HOME": str(home)}
        discover, found = cpu(lambda: registry.discover_all(env, home), repeats)
        assert len(found) == sessions, len(found)

        def meters() -> list[Any]:
            return [meter_of(info, env)[0] for info in found]

        def full_reads() -> list[Any]:
            from kimi_compact_tui.formats.loader import load

            out = []
            for info in found:
                session = load(info.ref, hashed=False).session
                out.append(session.format.context_usage(session, env))
            return out

        peeked, cheap = cpu(meters, repeats)
        loaded, full = cpu(full_reads, max(1, repeats - 2))
        assert cheap == full, "the meter read from the end differs from the full reading"
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*.jsonl"))
    return {
        "sessions": sessions,
        "messages": messages,
        "megabytes": size / 1e6,
        "discover_cpu": discover,
        "meters_from_end_cpu": peeked,
        "meters_full_read_cpu": loaded,
    }


def main(argv: list[str]) -> int:
    sessions = int(argv[0]) if argv else 200
    messages = int(argv[1]) if len(argv) > 1 else 2000
    r = bench_list(sessions, messages)
    print(
        f"list: {r['sessions']:,} sessions of {r['messages']:,} messages ({r['megabytes']:.0f} MB; "
        f"half Claude Code, half kimi-cli): discovery {r['discover_cpu']:.2f} s CPU; meters "
        f"read from the sessions' ends {r['meters_from_end_cpu']:.3f} s CPU; read in full "
        f"{r['meters_full_read_cpu']:.2f} s CPU"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""kimi-cli's share folder (``$KIMI_SHARE_DIR``, default ``~/.kimi``) as kimi-cli lays
it out: session folders under ``sessions/<md5 of the work folder>/<session id>/``
and ``kimi.json`` (for discovery and the picker). Bare ``context.jsonl`` files:
``plain.write_kimi``."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def kimi_line(record: dict) -> str:
    if record["role"].startswith("_"):
        return json.dumps(record)  # special records: json.dumps defaults
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def share_session(
    share: Path,
    work: str,
    session_id: str,
    messages: list[dict] | None = None,
    *,
    wire_title: str | None = None,
    custom_title: str | None = None,
    raw: bytes | None = None,
    mtime: float | None = None,
) -> Path:
    """A kimi-cli session in the share folder ``share`` (``~/.kimi``):
    ``sessions/<md5 of work>/<session_id>/context.jsonl`` (each message after a
    checkpoint, with a usage record; or ``raw`` bytes), and when given a
    ``wire.jsonl`` whose first turn is ``wire_title``, a ``state.json`` with
    ``custom_title``, the file's mtime. Returns the session folder."""
    folder = share / "sessions" / hashlib.md5(work.encode()).hexdigest() / session_id
    folder.mkdir(parents=True)
    if raw is None:
        records = [{"role": "_system_prompt", "content": "You are Kimi."}]
        for i, message in enumerate(messages or []):
            records += [{"role": "_checkpoint", "id": i}, message]
            records.append({"role": "_usage", "token_count": 100 + i})
        raw = "".join(kimi_line(r) + "\n" for r in records).encode("utf-8")
    (folder / "context.jsonl").write_bytes(raw)
    if wire_title is not None:
        turn = {
            "type": "TurnBegin",
            "payload": {"user_input": [{"type": "text", "text": wire_title}]},
        }
        lines = [{"timestamp": 1.0, "message": {"type": "Other", "payload": {}}}]
        lines.append({"timestamp": 2.0, "message": turn})
        (folder / "wire.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    if custom_title is not None:
        (folder / "state.json").write_text(json.dumps({"version": 1, "custom_title": custom_title}))
    if mtime is not None:
        os.utime(folder / "context.jsonl", (mtime, mtime))
    return folder


def write_kimi_json(share: Path, *works: str) -> None:
    """kimi-cli's ``kimi.json`` listing the work folders."""
    share.mkdir(parents=True, exist_ok=True)
    entries = [{"path": w, "kaos": "local", "last_session_id": None} for w in works]
    (share / "kimi.json").write_text(json.dumps({"work_dirs": entries}))

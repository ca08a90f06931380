"""Copies kept beside a session before it changes: its restore points.

- "rotate" policy (kimi-cli's ``/compact``): ``<stem>_N<suffix>``, N one past
  the highest existing one, starting at 1 — kimi-cli's own numbering, so its
  rotations and ours share one sequence.
- "backup" and "append" policies: ``<name>.bak-YYYYmmddTHHMMSSZ`` (``-1``,
  ``-2``, ... when the name is taken).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from kimi_compact_tui.store.durable import write_new_file

BACKUP_MARK = ".bak-"
_TS_FORMAT = "%Y%m%dT%H%M%SZ"
_BACKUP_RE = re.compile(r"^(\d{8}T\d{6}Z)(?:-(\d+))?$")


def _rotation_pattern(path: Path) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(path.stem)}_(\d+){re.escape(path.suffix)}$")


def _listdir(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def rotations(path: Path) -> list[tuple[int, Path]]:
    """``(N, path)`` of each rotation of ``path``, highest N first."""
    pattern = _rotation_pattern(path)
    out = []
    for name in _listdir(path.parent):
        m = pattern.match(name)
        if m:
            out.append((int(m.group(1)), path.parent / name))
    out.sort(reverse=True)
    return out


def rotation_names(path: Path) -> Iterator[str]:
    existing = rotations(path)
    n = (existing[0][0] if existing else 0) + 1
    while True:
        yield f"{path.stem}_{n}{path.suffix}"
        n += 1


def next_rotation(path: Path) -> Path:
    """Where a "rotate" write would keep the current ``path``."""
    return path.parent / next(rotation_names(path))


def backups(path: Path) -> list[tuple[tuple[str, int], Path]]:
    prefix = path.name + BACKUP_MARK
    out = []
    for name in _listdir(path.parent):
        if name.startswith(prefix):
            m = _BACKUP_RE.match(name[len(prefix) :])
            if m:
                out.append(((m.group(1), int(m.group(2) or 0)), path.parent / name))
    out.sort(reverse=True)
    return out


def backup_names(path: Path, now: datetime) -> Iterator[str]:
    stamp = now.astimezone(UTC).strftime(_TS_FORMAT)
    base = f"{path.name}{BACKUP_MARK}{stamp}"
    yield base
    k = 1
    while True:
        yield f"{base}-{k}"
        k += 1


def keep_copy(
    path: Path, policy: str, data: bytes, mode: int, mtime_ns: int, now: datetime
) -> Path:
    """Keep ``data`` (the current bytes of ``path``) as its next restore point."""
    names = rotation_names(path) if policy == "rotate" else backup_names(path, now)
    return write_new_file(path, names, data, mode=mode, mtime_ns=mtime_ns)


def sha256_file(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def drop_copy(target: Path, old_sha: str, copy: Path | None) -> None:
    """Remove a copy this call made, but only while the target still holds
    the old bytes (then the copy is redundant)."""
    if copy is None:
        return
    if sha256_file(target) == old_sha:
        with contextlib.suppress(OSError):
            os.unlink(copy)


def keep_description(path: Path | None, policy: str) -> str:
    """One line saying what copy of the current file a write keeps."""
    if path is None:
        return "the session has no file: nothing can be written"
    if policy == "rotate":
        rotated = next_rotation(path)
        return f"{path.name} → {rotated.name} (rotation, next free N), then a new {path.name}"
    then = "the compaction is appended" if policy == "append" else f"{path.name} is replaced"
    return f"a timestamped backup beside it: {path.name}{BACKUP_MARK}<UTC time>, then {then}"

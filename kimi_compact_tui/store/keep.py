"""Copies kept before a session changes: its restore points.

- "rotate" policy: the format's own rotation names
  (``SessionFormat.rotation_name``), N one past the highest existing one,
  starting at 1 — the agent's own numbering, so its rotations and ours share
  one sequence.
- "backup" and "append" policies: ``<name>.bak-YYYYmmddTHHMMSSZ`` (``-1``,
  ``-2``, ... when the name is taken), in the format's restore folder (beside
  the file unless the agent would take such files for sessions of its own).
  The version a restore replaces is kept as ``<name>.replaced-YYYYmmddTHHMMSSZ``
  (:data:`REPLACED_MARK`), so it does not read as an older backup.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from kimi_compact_tui.formats.base import SessionFormat
from kimi_compact_tui.store.durable import write_new_file

BACKUP_MARK = ".bak-"  # the version before a write
REPLACED_MARK = ".replaced-"  # the version a restore replaced
MARKS = (BACKUP_MARK, REPLACED_MARK)
_TS_FORMAT = "%Y%m%dT%H%M%SZ"
_BACKUP_RE = re.compile(r"^(\d{8}T\d{6}Z)(?:-(\d+))?$")


def _listdir(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def rotations(path: Path, fmt: SessionFormat) -> list[tuple[int, Path]]:
    """``(N, path)`` of each rotation of ``path``, highest N first (none unless
    the format rotates)."""
    if fmt.write_policy != "rotate":
        return []
    out = []
    for name in _listdir(path.parent):
        n = fmt.rotation_number(path, name)
        if n is not None:
            out.append((n, path.parent / name))
    out.sort(reverse=True)
    return out


def rotation_names(path: Path, fmt: SessionFormat) -> Iterator[str]:
    existing = rotations(path, fmt)
    n = (existing[0][0] if existing else 0) + 1
    while True:
        yield fmt.rotation_name(path, n)
        n += 1


def next_rotation(path: Path, fmt: SessionFormat) -> Path:
    """Where a "rotate" write would keep the current ``path``."""
    return path.parent / next(rotation_names(path, fmt))


def backup_folder(path: Path, fmt: SessionFormat) -> Path:
    return fmt.restore_folder(path)


def backup_place(path: Path, fmt: SessionFormat) -> str:
    """Where the backups of ``path`` go, for people: "beside it" or "in <folder>"."""
    folder = backup_folder(path, fmt)
    return "beside it" if folder == path.parent else f"in {folder}"


def backup_pattern(path: Path, fmt: SessionFormat) -> str:
    """The name of a new backup of ``path`` (and its folder, when not beside it)."""
    place = backup_place(path, fmt)
    return f"{path.name}{BACKUP_MARK}<UTC time>" + ("" if place == "beside it" else f" {place}")


def backups(path: Path, fmt: SessionFormat) -> list[tuple[tuple[str, int], Path]]:
    folder = backup_folder(path, fmt)
    out = []
    for name in _listdir(folder):
        for mark in MARKS:
            prefix = path.name + mark
            if name.startswith(prefix):
                m = _BACKUP_RE.match(name[len(prefix) :])
                if m:
                    out.append(((m.group(1), int(m.group(2) or 0)), folder / name))
    out.sort(reverse=True)
    return out


def backup_names(path: Path, now: datetime, mark: str = BACKUP_MARK) -> Iterator[str]:
    stamp = now.astimezone(UTC).strftime(_TS_FORMAT)
    base = f"{path.name}{mark}{stamp}"
    yield base
    k = 1
    while True:
        yield f"{base}-{k}"
        k += 1


def keep_copy(
    path: Path,
    fmt: SessionFormat,
    data: bytes,
    mode: int,
    mtime_ns: int,
    now: datetime,
    *,
    replaced: bool = False,
) -> Path:
    """Keep ``data`` (the current bytes of ``path``) as its next restore point
    (``replaced``: the version a restore replaces, named as such)."""
    if fmt.write_policy == "rotate":
        made = write_new_file(path.parent, rotation_names(path, fmt), data, mode, mtime_ns)
    else:
        folder = backup_folder(path, fmt)
        folder.mkdir(parents=True, exist_ok=True)
        mark = REPLACED_MARK if replaced else BACKUP_MARK
        made = write_new_file(folder, backup_names(path, now, mark), data, mode, mtime_ns)
    assert made is not None  # the names never run out
    return made


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


def keep_description(path: Path | None, fmt: SessionFormat) -> str:
    """One line saying what copy of the current file a write keeps."""
    if path is None:
        return "the session has no file: nothing can be written"
    if fmt.write_policy == "rotate":
        rotated = next_rotation(path, fmt)
        return f"{path.name} → {rotated.name} (rotation, next free N), then a new {path.name}"
    if fmt.write_policy == "append":
        then = "the compaction is appended (undo cuts it off again)"
    else:
        then = f"{path.name} is replaced"
    where = backup_place(path, fmt)
    return f"a timestamped backup {where}: {path.name}{BACKUP_MARK}<UTC time>, then {then}"

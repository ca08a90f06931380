"""Copies kept beside a session before it changes: its restore points.

- "rotate" policy (kimi-cli's ``/compact``): ``<stem>_N<suffix>``, N one past
  the highest existing one, starting at 1 — kimi-cli's own numbering, so its
  rotations and ours share one sequence.
- "backup" and "append" policies: ``<name>.bak-YYYYmmddTHHMMSSZ`` (``-1``,
  ``-2``, ... when the name is taken), in the session's restore folder: the
  folder its format names (``restore_folder(path)``; Gemini CLI deletes stray
  files beside its sessions), else beside it. The audit log goes there too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import registry
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


def _hook_of(path: Path) -> object:
    """The format's ``restore_folder`` for the file at ``path``, or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(registry.HEAD_BYTES)
        return getattr(registry.detect(path, head), "restore_folder", None)
    except (OSError, SessionFormatError):
        pass
    # The file is gone or unreadable: a format's folder that holds copies of it.
    for fmt in registry.FORMATS:
        hook = getattr(fmt, "restore_folder", None)
        if hook is not None and any(
            n.startswith(path.name + ".") for n in _listdir(Path(hook(path)))
        ):
            return hook
    return None


def restore_folder(path: Path) -> Path:
    """Where the restore points (backups) and the audit log of ``path`` are kept."""
    hook = _hook_of(Path(path))
    return Path(hook(Path(path))) if callable(hook) else Path(path).parent


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
    folder = restore_folder(path)
    out = []
    for name in _listdir(folder):
        if name.startswith(prefix):
            m = _BACKUP_RE.match(name[len(prefix) :])
            if m:
                out.append(((m.group(1), int(m.group(2) or 0)), folder / name))
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
    if policy == "rotate":
        return write_new_file(path, rotation_names(path), data, mode=mode, mtime_ns=mtime_ns)
    folder = restore_folder(path)
    if folder != path.parent:
        folder.mkdir(mode=0o700, exist_ok=True)
    names = backup_names(path, now)
    return write_new_file(path, names, data, mode=mode, mtime_ns=mtime_ns, directory=folder)


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
    folder = restore_folder(path)
    where = "beside it" if folder == path.parent else f"in {folder}"
    return f"a timestamped backup {where}: {path.name}{BACKUP_MARK}<UTC time>, then {then}"

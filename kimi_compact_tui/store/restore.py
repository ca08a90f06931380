"""Undo and restore: never a surprise.

- **Undo** (``restore`` with no point; the TUI's ``u``) puts back only what
  this tool itself wrote, as its audit log records it: the state before the
  last compaction written here. A copy nobody recorded (for example the
  agent's own rotation) is never the default; it is restored only when
  picked by name.
- A compaction that was already undone is not undone "again" (which would
  re-apply it): the undo says so, and another version must be picked.
- When the live file changed since the write (the agent appended turns),
  the undo refuses; with ``force`` the current file is first kept as a
  restore point, so those turns are never lost.
- Before any restore the current file is kept as a restore point, unless a
  restore point with the very same bytes already exists (no pile of copies).
- "append" writes are undone by cutting the journal back to its length
  before our records, only while it still ends with exactly those records.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats.loader import parse_bytes
from kimi_compact_tui.store import audit
from kimi_compact_tui.store.durable import atomic_write_bytes, os_error_line, truncate_durable
from kimi_compact_tui.store.fingerprint import read_fingerprinted
from kimi_compact_tui.store.keep import (
    backup_pattern,
    drop_copy,
    keep_copy,
    next_rotation,
    sha256_file,
)
from kimi_compact_tui.store.points import (
    RestorePoint,
    Where,
    pick,
    records_of,
    restore_points,
    target_of,
)
from kimi_compact_tui.store.write import now_utc
from kimi_compact_tui.wording import count, number


@dataclass
class RestoreResult:
    path: Path
    restored_from: Path
    replaced_backup: Path | None  # where the replaced version is kept (None: nothing kept)
    changed: bool
    messages_before: int | None
    messages_after: int | None
    audit_path: Path | None = None
    audit_error: str | None = None
    truncated_to: int | None = None  # an "append" write undone by cutting the journal
    warnings: list[str] = field(default_factory=list)  # the format's, after the restore

    def describe(self) -> str:
        if not self.changed:
            return (
                f"{self.path} already holds the content of {self.restored_from.name}; "
                "nothing was changed"
            )
        counts = ""
        if self.messages_before is not None and self.messages_after is not None:
            counts = f" ({count(self.messages_before, 'message')} → {number(self.messages_after)})"
        if self.truncated_to is not None:
            how = f"Undid the compaction appended to {self.path}{counts}: cut back to "
            line = how + f"{self.truncated_to} bytes, as before it"
        else:
            kept = (
                f"the version it replaced is kept as {self.replaced_backup}"
                if self.replaced_backup is not None
                else "there was no current file to keep"
            )
            line = f"Restored {self.path} from {self.restored_from.name}{counts}; {kept}"
        if self.audit_error:
            line += f"\nwarning: {self.audit_error}"
        for warning in self.warnings:
            line += f"\nwarning: {warning}"
        return line


@dataclass
class UndoPlan:
    """What an undo would do; ``describe`` is what the confirm dialog says."""

    target: Path
    record: dict[str, Any]
    source: Path  # the restore point that becomes live (for "append": the same bytes)
    truncate_to: int | None  # "append" undone by cutting the journal back
    changed_since: str | None  # why the live file is not what we wrote, if it is not

    def describe(self) -> str:
        if self.truncate_to is not None:
            return (
                f"{self.target} is cut back to {self.truncate_to} bytes, as it was before the "
                f"compaction written at {self.record.get('time')}"
            )
        return (
            f"{self.source.name} becomes the live {self.target.name} again (the state before "
            f"the compaction written at {self.record.get('time')}); the current "
            f"{self.target.name} is kept as a restore point"
        )


def undo_plan(where: Where) -> UndoPlan:
    """The undo of the last compaction this tool wrote, or an ApplyError saying
    why there is nothing to undo."""
    where = target_of(where)
    target = where.path
    records = records_of(where)
    if not records:
        if not restore_points(where):
            raise ApplyError(
                f"{target}: nothing of ours to undo: kimi-compact-tui has written no compaction "
                f"here, and there are no restore points (no rotation, and no backup "
                f"{backup_pattern(target, where.format)})"
            )
        raise ApplyError(
            f"{target}: nothing of ours to undo: kimi-compact-tui wrote no compaction here; a "
            "restore point it did not make can be picked by name (restore --list, or r in the TUI)"
        )
    last = records[-1]
    if last["action"] == "restore":
        raise ApplyError(
            f"{target}: nothing of ours to undo: the last compaction written here was already "
            f"undone (a restore at {last.get('time')}; undoing that would re-apply it); pick a "
            "version by name to go back to it (restore --list, or r in the TUI)"
        )
    after = last.get("after") or {}
    current = sha256_file(target)
    changed = None
    if current is not None and current != after.get("sha256"):  # a missing file loses nothing
        changed = (
            f"{target} changed since this tool wrote it at {last.get('time')} "
            "(the agent may have added turns)"
        )
    appended = last.get("appended")
    truncate_to = appended.get("offset") if isinstance(appended, dict) and not changed else None
    return UndoPlan(target, last, Path(str(last.get("backup"))), truncate_to, changed)


def restore(
    where: Where,
    point: RestorePoint | str | Path | None = None,
    *,
    force: bool = False,
    now: datetime | None = None,
) -> RestoreResult:
    """Undo the last compaction written here (``point`` None), or put back the
    restore point ``point``. See the module docstring for the rules."""
    where = target_of(where)
    target, fmt = where.path, where.format
    undo = undo_plan(where) if point is None else None
    if undo is not None and undo.changed_since and not force:
        raise ApplyError(
            f"{undo.changed_since}; restoring would drop those changes, so nothing was "
            "changed — force it to keep the current file as a restore point first"
        )
    points = restore_points(where)
    source = undo.source if undo is not None else pick(target, points, point).path
    when = now_utc(now)
    try:
        data, src_fp, src_mode = read_fingerprinted(source)
    except OSError as exc:
        raise ApplyError(os_error_line(source, exc, "read the restore point")) from None
    try:
        messages_after = len(parse_bytes(data, target, fmt).messages)
    except SessionFormatError as exc:
        raise ApplyError(f"{source}: not restored: it is not a valid session ({exc})") from None
    try:
        current_bytes, current, mode = read_fingerprinted(target)
    except FileNotFoundError:
        current_bytes, current, mode = None, None, src_mode
    except OSError as exc:
        raise ApplyError(os_error_line(target, exc, "read the session")) from None
    if current_bytes == data:
        return RestoreResult(target, source, None, False, messages_after, messages_after)
    messages_before = None
    if current_bytes is not None:
        with contextlib.suppress(SessionFormatError):
            messages_before = len(parse_bytes(current_bytes, target, fmt).messages)

    kept: Path | None = None
    made: Path | None = None
    truncated = None
    try:
        if undo is not None and undo.truncate_to is not None and current_bytes is not None:
            if not current_bytes.startswith(data) or len(data) != undo.truncate_to:
                raise ApplyError(
                    f"{target}: not restored: the journal no longer starts with the bytes "
                    "it had before the compaction; nothing was changed"
                )
            truncate_durable(target, undo.truncate_to)
            truncated = undo.truncate_to
        else:
            if current_bytes is not None and current is not None:
                kept = None if force else _same_bytes(points, current.size, current.sha256)
                if kept is None:
                    made = keep_copy(
                        target, fmt, current_bytes, mode, current.mtime_ns, when, replaced=True
                    )
                    kept = made
            atomic_write_bytes(target, data, mode=mode)
    except OSError as exc:
        if made is not None and current is not None:
            drop_copy(target, current.sha256, made)
        raise ApplyError(os_error_line(target, exc, "restore the session")) from None

    record = {
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "action": "restore",
        "tool": audit.tool_name(),
        "source": str(target),
        "restored_from": str(source),
        "undo": undo is not None,
        "force": force,
        "backup": str(made) if made else None,
        "before": (
            {"size": current.size, "sha256": current.sha256, "messages": messages_before}
            if current is not None
            else None
        ),
        "after": {"size": src_fp.size, "sha256": src_fp.sha256, "messages": messages_after},
    }
    log, audit_error = audit.append_audit(target, fmt, record, mode)
    warnings = fmt.after_restore(target, current_bytes, data)
    return RestoreResult(
        target,
        source,
        kept,
        True,
        messages_before,
        messages_after,
        None if audit_error else log,
        audit_error,
        truncated,
        warnings,
    )


def keeps_current_as(where: Where) -> str:
    """Where a restore would keep the current file: a new rotation or backup,
    or the restore point that already holds the very same bytes."""
    where = target_of(where)
    target, fmt = where.path, where.format
    try:
        size = target.stat().st_size
    except OSError:
        return "(no current file to keep)"
    same = _same_bytes(restore_points(where), size, sha256_file(target) or "")
    if same is not None:
        return f"{same.name} (it already holds the same bytes)"
    if fmt.write_policy == "rotate":
        return next_rotation(target, fmt).name
    return backup_pattern(target, fmt)


def _same_bytes(points: list[RestorePoint], size: int, sha: str) -> Path | None:
    """An existing restore point holding exactly these bytes, if any."""
    for p in points:
        if p.size == size and sha256_file(p.path) == sha:
            return p.path
    return None

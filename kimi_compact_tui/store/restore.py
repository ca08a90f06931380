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
- How the session is read, kept, put back or cut back is its format's write
  strategy's (``formats/strategies.py``): a journal's append is undone by
  cutting it back to its length before our records, only while it still ends
  with exactly those records; a database session's rows are replaced by the
  backup's, and no other session's rows are touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats.base import Current
from kimi_compact_tui.formats.durable import os_error_line, sha256_file
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.store import audit
from kimi_compact_tui.store.points import (
    RestorePoint,
    Target,
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
    path: SessionRef  # the session restored (a file's path, or DB#KEY, as text)
    restored_from: Path
    replaced_backup: Path | None  # where the replaced version is kept (None: nothing kept)
    changed: bool
    messages_before: int | None
    messages_after: int | None
    audit_path: Path | None = None
    audit_error: str | None = None
    truncated_to: int | None = None  # an append undone by cutting the journal back
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

    ref: SessionRef  # the session (its file, and its key in a database)
    record: dict[str, Any]
    source: Path  # the restore point that becomes live (for an append: the same bytes)
    truncate_to: int | None  # an append undone in place: the length to cut back to
    changed_since: str | None  # why the live file is not what we wrote, if it is not

    @property
    def target(self) -> Path:
        """The file holding the session."""
        return self.ref.path

    def describe(self) -> str:
        name = self.ref.name
        if self.truncate_to is not None:
            return (
                f"{self.target} is cut back to {self.truncate_to} bytes, as it was before the "
                f"compaction written at {self.record.get('time')}"
            )
        return (
            f"{self.source.name} becomes the live {name} again (the state before "
            f"the compaction written at {self.record.get('time')}); the current "
            f"{name} is kept as a restore point"
        )


def _current(where: Target) -> Current | None:
    """The session's content now (None: there is none)."""
    try:
        return where.format.storage.current(where.ref)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ApplyError(os_error_line(where.path, exc, "read the session")) from None


def undo_plan(where: Where) -> UndoPlan:
    """The undo of the last compaction this tool wrote, or an ApplyError saying
    why there is nothing to undo."""
    where = target_of(where)
    target, strategy = where.ref, where.format.storage
    records = records_of(where)
    if not records:
        if not restore_points(where):
            raise ApplyError(
                f"{target}: nothing of ours to undo: kimi-compact-tui has written no compaction "
                f"here, and there are no restore points (no rotation, and no backup "
                f"{strategy.next_point(target)})"
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
    current = _current(where)
    changed = None
    # a missing session loses nothing
    if current is not None and current.fingerprint.sha256 != after.get("sha256"):
        changed = f"{target} {strategy.changed_since(last, current)}"
    truncate_to = None if changed else strategy.undo_in_place(last)
    source = Path(str(last.get("backup")))  # made absolute by records_of
    return UndoPlan(target, last, source, truncate_to, changed)


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
    target, fmt = where.ref, where.format
    strategy = fmt.storage
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
        data = strategy.read_point(source)
        src_mode = source.stat().st_mode & 0o7777
    except OSError as exc:
        raise ApplyError(os_error_line(source, exc, "read the restore point")) from None
    src_sha = hashlib.sha256(data).hexdigest()
    try:
        messages_after = strategy.count_messages(target, data)
    except SessionFormatError as exc:
        raise ApplyError(f"{source}: not restored: it is not a valid session ({exc})") from None
    current = _current(where)
    if current is not None and current.data == data:
        return RestoreResult(target, source, None, False, messages_after, messages_after)
    messages_before = None
    if current is not None:
        with contextlib.suppress(SessionFormatError):
            messages_before = strategy.count_messages(target, current.data)

    kept: Path | None = None
    made: Path | None = None
    truncated = None
    try:
        if undo is not None and undo.truncate_to is not None and current is not None:
            if len(data) != undo.truncate_to:
                raise ApplyError(
                    f"{target}: not restored: the backup is not the journal as it was before "
                    "the compaction; nothing was changed"
                )
            strategy.cut(target, current, data)
            truncated = undo.truncate_to
        else:
            if current is not None:
                fp = current.fingerprint
                kept = None if force else _same_content(points, fp.size, fp.sha256)
                if kept is None:
                    made = strategy.keep(target, current, when, replaced=True)
                    kept = made
            strategy.put_back(target, data, current)
            if current is None and strategy.byte_based:
                with contextlib.suppress(OSError):
                    os.chmod(target.path, src_mode)
    except OSError as exc:
        if made is not None and current is not None:
            _drop_kept(where, current, made)
        raise ApplyError(os_error_line(target.path, exc, "restore the session")) from None
    except ApplyError:
        if made is not None and current is not None:
            _drop_kept(where, current, made)
        raise

    record: dict[str, Any] = {
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "action": "restore",
        "tool": audit.tool_name(),
        "source": str(target.path),
        "restored_from": str(source),
        "undo": undo is not None,
        "force": force,
        "backup": str(made) if made else None,
        "before": (
            {
                "size": current.fingerprint.size,
                "sha256": current.fingerprint.sha256,
                "messages": messages_before,
            }
            if current is not None
            else None
        ),
        "after": {"size": len(data), "sha256": src_sha, "messages": messages_after},
    }
    if target.key is not None:
        record["key"] = target.key
    mode = current.mode if current is not None else src_mode
    log, audit_error = audit.append_audit(target, fmt, record, mode)
    warnings = fmt.after_restore(target.path, current.data if current else None, data)
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


def _drop_kept(where: Target, old: Current, made: Path) -> None:
    """Remove the copy a failed restore made, while the session still holds
    the old content (then the copy is redundant)."""
    with contextlib.suppress(ApplyError):
        now = _current(where)
        if now is not None and now.fingerprint.sha256 == old.fingerprint.sha256:
            with contextlib.suppress(OSError):
                os.unlink(made)


def keeps_current_as(where: Where) -> str:
    """Where a restore would keep the current session: a new restore point, or
    the restore point that already holds the very same content."""
    where = target_of(where)
    current = _current(where)
    if current is None:
        return "(no current file to keep)"
    fp = current.fingerprint
    same = _same_content(restore_points(where), fp.size, fp.sha256)
    if same is not None:
        return f"{same.name} (it already holds the same bytes)"
    return where.format.storage.next_point(where.ref)


def _same_content(points: list[RestorePoint], size: int, sha: str) -> Path | None:
    """An existing restore point holding exactly this content, if any."""
    for p in points:
        if p.size == size and sha256_file(p.path) == sha:
            return p.path
    return None

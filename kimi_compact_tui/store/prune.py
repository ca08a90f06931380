"""Prune the restore points this tool made (``restore SESSION --prune``).

Every write keeps the version it replaces (a backup, a ``.replaced-`` copy,
or a rotation under the agent's own name), and they pile up beside the
agent's files. Pruning removes the oldest of them, by these rules:

- only what the audit log records as made by this tool: a restore point whose
  name is a ``backup`` of one of its records (a write, or the version a
  restore replaced). A file the log does not name (the agent's own rotation,
  a copy made by hand) is never touched, and is listed as such;
- only while the file still holds what was recorded (its size and sha256 are
  the record's ``before``: the version it kept); a file that was since
  replaced is left alone and said;
- the copy the next undo puts back (the last write's backup) is always kept,
  whatever ``keep`` says, and so are the ``keep`` newest of ours;
- each file is checked again just before it is removed; a ``prune`` record
  names what was removed in the audit log (undo and restore read only the
  ``apply`` and ``restore`` records, so it changes neither).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats.durable import sha256_file
from kimi_compact_tui.store import audit
from kimi_compact_tui.store.points import (
    RestorePoint,
    Target,
    Where,
    records_of,
    restore_points,
    target_of,
)
from kimi_compact_tui.store.restore import undo_plan
from kimi_compact_tui.store.write import now_utc

DEFAULT_KEEP = 1


@dataclass
class PrunePlan:
    """What a prune would do: the points it removes and those it leaves, each
    with why."""

    target: Target
    keep: int
    remove: list[RestorePoint] = field(default_factory=list)
    kept: list[tuple[RestorePoint, str]] = field(default_factory=list)
    others: list[RestorePoint] = field(default_factory=list)  # not made by this tool

    @property
    def freed(self) -> int:
        """The bytes the removal frees."""
        return sum(p.size for p in self.remove)

    def lines(self) -> list[str]:
        out = [f"remove   {p.path.name}  {p.size:,} bytes  ({p.origin})" for p in self.remove]
        out += [f"keep     {p.path.name}  ({why})" for p, why in self.kept]
        out += [f"untouched {p.path.name}  ({p.origin})" for p in self.others]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "session": str(self.target.ref),
            "keep": self.keep,
            "remove": [p.to_json() for p in self.remove],
            "kept": [dict(p.to_json(), why=why) for p, why in self.kept],
            "untouched": [p.to_json() for p in self.others],
            "freed_bytes": self.freed,
        }


def _recorded(target: Target) -> dict[str, dict[str, Any]]:
    """Each backup the audit log names, with the fingerprint it was recorded with."""
    out: dict[str, dict[str, Any]] = {}
    for rec in records_of(target):
        backup, before = rec.get("backup"), rec.get("before")
        if isinstance(backup, str) and isinstance(before, dict):
            out[backup] = before
    return out


def _holds(point: Path, before: dict[str, Any]) -> bool:
    """The file still holds the version the record kept in it."""
    try:
        if point.stat().st_size != before.get("size"):
            return False
        return sha256_file(point) == before.get("sha256")
    except OSError:
        return False


def prune_plan(where: Where, keep: int = DEFAULT_KEEP) -> PrunePlan:
    """What pruning the restore points of ``where`` would remove (nothing is
    changed). ``keep``: how many of this tool's newest points stay."""
    if keep < 0:
        raise ApplyError(f"--keep {keep}: must be 0 or more")
    target = target_of(where)
    plan = PrunePlan(target, keep)
    recorded = _recorded(target)
    try:
        undo_source: Path | None = undo_plan(target).source
    except ApplyError:
        undo_source = None
    ours = 0
    for point in restore_points(target):  # newest first
        before = recorded.get(str(point.path))
        if not point.ours or before is None:
            plan.others.append(point)
        elif point.path == undo_source:
            plan.kept.append((point, "the copy the next undo puts back"))
            ours += 1
        elif not _holds(point.path, before):
            plan.kept.append((point, "changed since this tool made it: left alone"))
        elif ours < keep:
            plan.kept.append((point, f"one of the {keep} newest kept"))
            ours += 1
        else:
            plan.remove.append(point)
    return plan


def prune(plan: PrunePlan) -> list[Path]:
    """Remove what ``plan`` says, each file checked again just before; the
    files removed. Appends a ``prune`` record to the audit log."""
    target = plan.target
    recorded = _recorded(target)
    removed: list[Path] = []
    for point in plan.remove:
        before = recorded.get(str(point.path))
        if before is None or not _holds(point.path, before):
            continue  # changed since the plan was made: left alone
        try:
            os.unlink(point.path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise ApplyError(
                f"{point.path}: cannot remove ({exc.strerror or exc}); "
                f"removed before it: {', '.join(p.name for p in removed) or 'none'}"
            ) from None
        removed.append(point.path)
    if removed:
        record: dict[str, Any] = {
            "time": now_utc(None).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "action": "prune",
            "tool": audit.tool_name(),
            "source": str(target.path),
            "removed": [str(p) for p in removed],
        }
        if target.ref.key is not None:
            record["key"] = target.ref.key
        audit.append_audit(target.ref, target.format, record, 0o600)
    return removed

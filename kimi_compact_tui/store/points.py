"""Restore points: which session a restore acts on (:class:`Target`,
:func:`locate`), and the copies kept of it (the format's strategy lists them:
rotations, backups, a database session's exported rows), each labelled with
where it came from (this tool's audit log, or the agent)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.base import Session, SessionFormat
from kimi_compact_tui.formats.durable import os_error_line
from kimi_compact_tui.formats.storage import Located, SessionRef
from kimi_compact_tui.store import audit


@dataclass(frozen=True)
class Target(Located):
    """The session a restore acts on (where it lives, and its key inside) and
    its format (whose strategy says how a write was kept and is undone)."""

    ref: SessionRef
    format: SessionFormat

    @classmethod
    def of(cls, session: Session) -> Target:
        if not session.saved:
            raise ApplyError("the session has no file")
        return cls(session.ref, session.format)


@dataclass(frozen=True)
class RestorePoint:
    path: Path
    kind: str  # "rotation" | "backup"
    size: int
    mtime_ns: int
    origin: str  # where it came from, for people
    ours: bool  # recorded in this tool's audit log

    def describe(self) -> str:
        when = datetime.fromtimestamp(self.mtime_ns / 1e9, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"{self.path.name}  {self.size} bytes  modified {when}  {self.origin}"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "kind": self.kind,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "origin": self.origin,
            "ours": self.ours,
        }


def locate(where: str | Path | SessionRef) -> Target:
    """The session ``where`` names (what :func:`formats.registry.resolve` takes,
    or the reference it made; the file possibly gone) and its format: read from
    the file, else from the audit log of the compaction written there."""
    try:
        ref = registry.resolve(where)  # a reference is kept as it is, a folder's resolved
    except SessionFormatError as exc:
        named = where.path if isinstance(where, SessionRef) else Path(str(where)).expanduser()
        ref = _gone(named, exc)
    if ref.key is not None or ref.path.exists():
        try:
            with open(ref.path, "rb") as fh:
                head = fh.read(registry.HEAD_BYTES)
            return Target(ref, registry.detect(ref.path, head))
        except SessionFormatError as exc:
            raise ApplyError(str(exc)) from None
        except OSError as exc:
            raise ApplyError(os_error_line(ref.path, exc, "read the session")) from None
    logged = audit.logged_format(ref.path, registry.FORMATS)
    if logged is not None:
        return Target(ref, logged)
    raise ApplyError(
        f"{ref.path}: no such session file, and no record of a compaction written there "
        "(nothing to restore)"
    )


def _gone(p: Path, why: SessionFormatError) -> SessionRef:
    """A session file that is gone, named by its path or its folder: what its
    audit log names (it is what brings the session back)."""
    if p.is_dir():
        logs = sorted(p.glob("*" + audit.AUDIT_SUFFIX))
        if len(logs) != 1:
            raise ApplyError(str(why)) from None
        return SessionRef(logs[0].with_name(logs[0].name[: -len(audit.AUDIT_SUFFIX)]))
    if isinstance(why, registry.SessionNameError) or os.path.lexists(p):
        raise ApplyError(str(why)) from None
    if not p.parent.is_dir():
        raise ApplyError(f"{p.parent}: no such folder")
    return SessionRef(p)


Where = Target | SessionRef | str | Path


def target_of(where: Where) -> Target:
    """A :class:`Target` as given, or located once from a path (the CLI's entry)."""
    return where if isinstance(where, Target) else locate(where)


def records_of(where: Target) -> list[dict[str, Any]]:
    """The session's writes and restores, as its audit log records them, with
    the restore point each names made absolute (a log written before paths were
    recorded absolute holds them as they were typed)."""
    out = []
    for rec in audit.read_audit(where.ref, where.format):
        if rec.get("action") not in ("apply", "restore"):
            continue
        backup = rec.get("backup")
        if isinstance(backup, str):
            rec = {**rec, "backup": str(audit.recorded_path(backup, rec, where.ref))}
        out.append(rec)
    return out


def restore_points(where: Where) -> list[RestorePoint]:
    """The restore points of a session, newest first, each labelled with where
    it came from."""
    where = target_of(where)
    fmt = where.format
    origins: dict[str, str] = {}
    for rec in records_of(where):
        backup = rec.get("backup")
        if isinstance(backup, str):
            what = "before the compaction written" if rec["action"] == "apply" else "replaced"
            origins[backup] = f"made by kimi-compact-tui: the version {what} at {rec.get('time')}"
    found = fmt.storage.restore_points(where.ref)
    agent = fmt.agent or "the agent"
    points = []
    for kind, p in found:
        try:
            st = p.stat()
        except OSError:
            continue
        origin = origins.get(str(p))
        label = origin or (
            f"{agent}'s own rotation (not in kimi-compact-tui's audit log)"
            if kind == "rotation"
            else "not made by kimi-compact-tui (not in its audit log)"
        )
        points.append(RestorePoint(p, kind, st.st_size, st.st_mtime_ns, label, origin is not None))
    return points


def pick(target: object, points: list[RestorePoint], point: Any) -> RestorePoint:
    if isinstance(point, RestorePoint):
        return point
    wanted = Path(str(point)).expanduser()
    for p in points:
        if wanted.parent == Path(".") and p.path.name == wanted.name:
            return p
        if p.path.resolve() == wanted.resolve():
            return p
    names = ", ".join(p.path.name for p in points) or "none"
    raise ApplyError(f"{target}: {point} is not a restore point of this session (have: {names})")


def pick_point(where: Where, point: str | Path) -> RestorePoint:
    """The restore point ``point`` names (a file name from the list, or a path),
    or an ApplyError naming it and the points there are."""
    where = target_of(where)
    return pick(where.ref, restore_points(where), point)

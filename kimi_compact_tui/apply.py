"""Write a compacted session back safely, and undo it.

Nothing here may lose anyone's work. The rules, in the order they run:

1. **Conflict check.** :func:`fingerprint` is taken when the session is loaded
   (size, ``mtime_ns`` and sha256 of the bytes). Before anything is written the
   file is read again; if any of the three differs (kimi-cli appended a turn,
   an editor saved it, ...) :class:`~kimi_compact_tui.errors.ApplyError` is
   raised naming the file and nothing is written. The size and mtime are
   checked once more right before the final replace (the remaining window is
   a few system calls long; there is no lock kimi-cli would honour).
   :func:`load_fingerprinted` loads and fingerprints from the same bytes.
2. **Backup first.** kimi-cli sessions (``format == "kimi"``) get what
   kimi-cli's own ``/compact`` leaves behind: the previous ``context.jsonl``
   as ``context_N.jsonl`` (N = the highest existing N + 1, starting at 1, as
   kimi-cli numbers its rotations), and the new ``context.jsonl``. kimi-cli
   *renames* the file; we *copy* it instead, so that a whole
   ``context.jsonl`` exists at every instant: the old bytes go to a temporary
   file in the same folder, which is flushed, fsynced, given the original
   mode and mtime, and then hard-linked to the free ``context_N.jsonl`` name
   (a link never overwrites, so a rotation made meanwhile by kimi-cli is
   never clobbered; where hard links are unsupported a rename after an
   existence check is used). Other formats get a copy named
   ``<name>.bak-YYYYmmddTHHMMSSZ`` (``-1``, ``-2``, ... when taken), made the
   same way. The end state is byte-identical to kimi-cli's.
3. **Atomic replace.** The new bytes go through
   :func:`kimi_compact_tui.fsutil.atomic_write_bytes` (temporary file in the
   same folder, flush, fsync, ``os.replace``, folder fsync), keeping the
   file's mode. A crash at any moment leaves the old file or the new file,
   whole, and the backup is complete before the replace can happen.
4. **Failure.** Any ``OSError`` (read-only folder, full disk, ...) becomes
   one ``ApplyError`` line naming the file; the backup made by this call is
   removed again when the session file still holds the old bytes, and no
   temporary file is left.
5. **Audit.** Each apply and restore appends one JSON line to
   ``<session file name>.compact-audit.jsonl`` beside the session (for
   kimi-cli: ``context.jsonl.compact-audit.jsonl`` in the session folder,
   which kimi-cli ignores). Fields: ``time``, ``action``, ``source``,
   ``format``, ``backup``, ``before``/``after`` (size, sha256, messages),
   ``indices`` (0-based half-open ``[start, stop)`` ranges of the
   leading system messages, the compacted messages and the kept tail, in the
   source session), ``plan``, ``prompt`` (source, path, sha256,
   upstream_exact), ``provider`` (kind/model/URL with any user:password
   removed), ``model``, ``usage`` (numbers only) and ``summary_sha256``. No
   key is ever passed here, and no text of the session or summary is logged.
   A failure to write the audit line does not undo the apply; it is reported
   in ``ApplyResult.audit_error``.

Undo: :func:`restore_points` lists the rotations/backups beside a session,
newest first; :func:`restore` writes one back (default: the newest, which is
the state before the last apply) with the same rules — the version being
replaced is first kept as a new rotation/backup, so ``restore`` run twice
redoes the apply.

Front ends: the TUI calls :func:`apply_compaction` directly. The
``compact --in-place [--yes]`` command calls::

    apply_from_cli(args, session, loaded_fingerprint, plan, preparation,
                   stream_result, compacted=None, *, summary=None,
                   stdin=None, out=None) -> ApplyResult | None

``args.yes`` skips the question. Without ``--yes`` it asks on the terminal
(``stdin.isatty()``; the question and the outcome go to ``out``, default
stderr) and refuses (``UserError``) when there is no terminal. It writes only
when ``stream_result.status == "complete"`` with a non-empty summary; the
summary written is ``summary`` (the user's edit) or ``stream_result.summary``
— never generated again. ``compacted`` defaults to
``build_compacted_session(session, plan, summary, output_tokens=usage
completion_tokens)``. It returns ``None`` when the user answers no.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from kimi_compact_tui.errors import ApplyError, SessionFormatError, UserError
from kimi_compact_tui.formats import dump_session
from kimi_compact_tui.fsutil import atomic_write_bytes, fsync_dir
from kimi_compact_tui.model import Session

AUDIT_SUFFIX = ".compact-audit.jsonl"
BACKUP_MARK = ".bak-"
_TS_FORMAT = "%Y%m%dT%H%M%SZ"

#: Test seam: called with a step name at each step of a write (crash tests).
_step_hook: Callable[[str], None] | None = None


def _step(name: str) -> None:
    if _step_hook is not None:
        _step_hook(name)


# ----------------------------------------------------------------------------- fingerprints


@dataclass(frozen=True)
class Fingerprint:
    """What a session file looked like when it was loaded."""

    size: int
    mtime_ns: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"size": self.size, "mtime_ns": self.mtime_ns, "sha256": self.sha256}


def _read_fingerprinted(path: Path) -> tuple[bytes, Fingerprint, int]:
    """The bytes of ``path``, their fingerprint and the file mode, read from
    one open file (so the three agree)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        data = fh.read()
    fp = Fingerprint(len(data), st.st_mtime_ns, hashlib.sha256(data).hexdigest())
    return data, fp, st.st_mode & 0o7777


def fingerprint(path: str | Path) -> Fingerprint:
    """Size, mtime and sha256 of the session file at ``path`` (take it when
    loading the session)."""
    p = Path(path)
    if p.is_dir():
        p = p / "context.jsonl"
    try:
        return _read_fingerprinted(p)[1]
    except OSError as exc:
        raise ApplyError(f"{p}: cannot read ({exc.strerror or exc})") from None


def load_fingerprinted(path: str | Path, fmt: str | None = None) -> tuple[Session, Fingerprint]:
    """Load a session and take its fingerprint from the same bytes (no window
    in which the file could change between the two)."""
    from kimi_compact_tui.formats import parse_session_bytes, resolve_session_path

    p = resolve_session_path(path)
    try:
        data, fp, _mode = _read_fingerprinted(p)
    except OSError as exc:
        raise SessionFormatError(f"{p}: cannot read ({exc.strerror or exc})") from None
    return parse_session_bytes(data, p, fmt), fp


def _conflict_message(path: Path, loaded: Fingerprint, now: Fingerprint) -> str:
    if now.size != loaded.size:
        what = f"its size went from {loaded.size} to {now.size} bytes"
    elif now.sha256 != loaded.sha256:
        what = "its content changed"
    else:
        what = "its modification time changed"
    return (
        f"{path}: changed on disk since it was loaded ({what}; kimi-cli or another "
        "program wrote to it); nothing was written — reload the session and compact again"
    )


# ----------------------------------------------------------------------------- names


def _rotation_pattern(path: Path) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(path.stem)}_(\d+){re.escape(path.suffix)}$")


def _rotations(path: Path) -> list[tuple[int, Path]]:
    pattern = _rotation_pattern(path)
    out = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    for name in names:
        m = pattern.match(name)
        if m:
            out.append((int(m.group(1)), path.parent / name))
    out.sort(reverse=True)
    return out


def next_rotation(path: Path) -> Path:
    """Where a write would keep the current ``path`` (kimi-cli's rotation):
    ``<stem>_N<suffix>``, N one past the highest existing one (1 when none)."""
    return path.parent / next(_rotation_names(path))


def _rotation_names(path: Path) -> Iterator[str]:
    existing = _rotations(path)
    n = (existing[0][0] if existing else 0) + 1
    while True:
        yield f"{path.stem}_{n}{path.suffix}"
        n += 1


_BACKUP_RE = re.compile(r"^(\d{8}T\d{6}Z)(?:-(\d+))?$")


def _backups(path: Path) -> list[tuple[tuple[str, int], Path]]:
    prefix = path.name + BACKUP_MARK
    out = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    for name in names:
        if name.startswith(prefix):
            m = _BACKUP_RE.match(name[len(prefix) :])
            if m:
                out.append(((m.group(1), int(m.group(2) or 0)), path.parent / name))
    out.sort(reverse=True)
    return out


def _backup_names(path: Path, now: datetime) -> Iterator[str]:
    stamp = now.astimezone(UTC).strftime(_TS_FORMAT)
    base = f"{path.name}{BACKUP_MARK}{stamp}"
    yield base
    k = 1
    while True:
        yield f"{base}-{k}"
        k += 1


def audit_path(path: str | Path) -> Path:
    """The audit log of the session file at ``path``."""
    p = Path(path)
    return p.with_name(p.name + AUDIT_SUFFIX)


# ----------------------------------------------------------------------------- writing


def _write_new_file(
    path: Path, names: Iterable[str], data: bytes, *, mode: int, mtime_ns: int | None
) -> Path:
    """Write ``data`` to a new file beside ``path`` under the first free name
    of ``names``, never overwriting anything. The file appears whole or not
    at all (temporary file, fsync, then link)."""
    directory = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    dest: Path | None = None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        _step("backup-temp-written")
        for name in names:
            candidate = directory / name
            try:
                os.link(tmp, candidate)
            except FileExistsError:
                continue
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                    raise
                if os.path.lexists(candidate):
                    continue
                os.rename(tmp, candidate)
            dest = candidate
            break
        _step("backup-linked")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if dest is not None:  # a copy we made; the original is untouched
            with contextlib.suppress(OSError):
                os.unlink(dest)
        raise
    fsync_dir(directory)
    return dest


def _keep_copy(path: Path, fmt: str, data: bytes, mode: int, mtime_ns: int, now: datetime) -> Path:
    names = _rotation_names(path) if fmt == "kimi" else _backup_names(path, now)
    return _write_new_file(path, names, data, mode=mode, mtime_ns=mtime_ns)


def _sha256_file(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def _undo_backup(target: Path, old_sha: str, backup: Path | None) -> None:
    """Remove the backup this call made, but only while the target still
    holds the old bytes (then the backup is a redundant copy)."""
    if backup is None:
        return
    if _sha256_file(target) == old_sha:
        with contextlib.suppress(OSError):
            os.unlink(backup)


def _os_error_line(path: Path, exc: OSError, doing: str) -> str:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOSPC:
        reason = "no space left on the device"
    elif exc.errno == errno.EROFS:
        reason = "the file system is read-only"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        reason = "permission denied (is the folder read-only?)"
    elif exc.errno == errno.EDQUOT:
        reason = "disk quota exceeded"
    return f"{path}: cannot {doing}: {reason}; nothing was changed"


def _now(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    return now if now.tzinfo else now.replace(tzinfo=UTC)


# ----------------------------------------------------------------------------- audit

_SECRETISH = re.compile(r"(key|secret|authori[sz]ation|password|bearer)", re.I)
_URL_USERINFO = re.compile(r"(\w+://)[^/@\s]*@")


def _scrub_text(text: str) -> str:
    return _URL_USERINFO.sub(r"\1", text)


def _numbers_only(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return value
    if isinstance(value, dict):
        return {
            str(k): _numbers_only(v)
            for k, v in value.items()
            if not _SECRETISH.search(str(k))
            and (isinstance(v, int | float | dict) or v is None)
            and not isinstance(v, str)
        }
    return None


def _provider_text(provider: Any) -> str | None:
    if provider is None:
        return None
    describe = getattr(provider, "describe", None)
    text = describe() if callable(describe) else str(provider)
    return _scrub_text(str(text))


def _append_audit(path: Path, record: dict[str, Any], mode: int) -> tuple[Path, str | None]:
    log = audit_path(path)
    line = (json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8")
    try:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, (mode & 0o666) | 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        return log, f"{log}: audit record not written ({exc.strerror or exc})"
    return log, None


def read_audit(path: str | Path) -> list[dict[str, Any]]:
    """The audit records of the session file at ``path`` (unreadable lines
    are skipped)."""
    log = audit_path(path)
    try:
        text = log.read_text(encoding="utf-8")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                out.append(value)
    return out


# ----------------------------------------------------------------------------- apply


@dataclass
class ApplyResult:
    path: Path  # the session file written
    backup_path: Path  # the rotated context_N.jsonl or the .bak- copy
    format: str
    messages_before: int
    messages_after: int
    compacted: int  # messages replaced by the summary
    kept: int  # messages kept verbatim (leading system + tail)
    before: Fingerprint
    after_sha256: str
    after_size: int
    audit_path: Path | None = None
    audit_error: str | None = None
    written: list[Path] = field(default_factory=list)

    def describe(self) -> str:
        line = (
            f"Wrote {self.path} ({self.messages_before} → {self.messages_after} messages: "
            f"{self.compacted} compacted into the summary, {self.kept} kept); "
            f"the previous version is {self.backup_path}"
        )
        if self.audit_error:
            line += f"\nwarning: {self.audit_error}"
        return line


def apply_compaction(
    source_session: Session,
    compacted_session: Session,
    *,
    loaded_fingerprint: Fingerprint,
    summary: str,
    plan: Any,
    prompt: Any,
    provider: Any,
    model: str | None,
    usage: dict[str, Any] | None,
    now: datetime | None = None,
) -> ApplyResult:
    """Write ``compacted_session`` over ``source_session.path`` safely (see the
    module docstring). ``plan`` is the ``CompactionPlan`` used, ``prompt`` the
    ``PromptSource`` (or None), ``provider`` a name or a ``ProviderConfig``."""
    path = source_session.path
    if path is None:
        raise ApplyError("the session has no file to write to")
    path = Path(path)
    fmt = source_session.format
    if compacted_session.format != fmt:
        raise ApplyError(
            f"{path}: the compacted session is {compacted_session.format}, the file is {fmt}"
        )
    if getattr(plan, "noop", None):
        raise ApplyError(f"{path}: nothing to write: {plan.noop}")
    if not summary or not summary.strip():
        raise ApplyError(f"{path}: nothing written: the summary is empty")
    leading = getattr(plan, "leading", 0)
    if not (
        len(compacted_session.messages) > leading
        and compacted_session.messages[leading].text().endswith(summary)
    ):
        raise ApplyError(
            f"{path}: nothing written: the compacted session does not hold the reviewed summary"
        )
    when = _now(now)
    new_bytes = dump_session(compacted_session)

    try:
        old_bytes, current, mode = _read_fingerprinted(path)
    except OSError as exc:
        raise ApplyError(_os_error_line(path, exc, "read the session")) from None
    if current != loaded_fingerprint:
        raise ApplyError(_conflict_message(path, loaded_fingerprint, current))
    _step("checked")

    backup: Path | None = None
    try:
        backup = _keep_copy(path, fmt, old_bytes, mode, current.mtime_ns, when)
        _step("backup-done")
        st = os.stat(path)
        if st.st_size != current.size or st.st_mtime_ns != current.mtime_ns:
            _undo_backup(path, current.sha256, backup)
            backup = None
            raise ApplyError(
                _conflict_message(
                    path, current, Fingerprint(st.st_size, st.st_mtime_ns, "(changed)")
                )
            )
        atomic_write_bytes(path, new_bytes, mode=mode)
        _step("replaced")
    except OSError as exc:
        _undo_backup(path, current.sha256, backup)
        raise ApplyError(_os_error_line(path, exc, "write the compacted session")) from None

    after_sha = hashlib.sha256(new_bytes).hexdigest()
    n = len(source_session.messages)
    boundary = getattr(plan, "boundary", leading)
    record = {
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "action": "apply",
        "tool": _tool_name(),
        "source": str(path),
        "format": fmt,
        "backup": str(backup),
        "before": {"size": current.size, "sha256": current.sha256, "messages": n},
        "after": {
            "size": len(new_bytes),
            "sha256": after_sha,
            "messages": len(compacted_session.messages),
        },
        "indices": {
            "base": 0,
            "ranges": "half-open [start, stop) in the source session",
            "leading_system": [0, leading],
            "compacted": [leading, boundary],
            "kept": [boundary, n],
        },
        "plan": {
            "mode": getattr(plan, "mode", None),
            "up_to": getattr(plan, "up_to", None),
            "max_preserved_messages": getattr(plan, "max_preserved_messages", None),
        },
        "prompt": _prompt_json(prompt),
        "provider": _provider_text(provider),
        "model": _scrub_text(model) if model else None,
        "usage": _numbers_only(usage) if isinstance(usage, dict) else None,
        "summary_sha256": hashlib.sha256(summary.encode("utf-8", "surrogatepass")).hexdigest(),
        "summary_chars": len(summary),
    }
    log, audit_error = _append_audit(path, record, mode)
    _step("audited")
    return ApplyResult(
        path=path,
        backup_path=backup,  # type: ignore[arg-type]
        format=fmt,
        messages_before=n,
        messages_after=len(compacted_session.messages),
        compacted=boundary - leading,
        kept=leading + (n - boundary),
        before=current,
        after_sha256=after_sha,
        after_size=len(new_bytes),
        audit_path=None if audit_error else log,
        audit_error=audit_error,
        written=[backup, path] + ([] if audit_error else [log]),  # type: ignore[list-item]
    )


def _prompt_json(prompt: Any) -> dict[str, Any] | None:
    if prompt is None:
        return None
    to_json = getattr(prompt, "to_json", None)
    if callable(to_json):
        data = to_json()
        return {k: data.get(k) for k in ("source", "path", "sha256", "upstream_exact")}
    return {"source": str(prompt)}


def _tool_name() -> str:
    from kimi_compact_tui import __version__

    return f"kimi-compact-tui {__version__}"


# ----------------------------------------------------------------------------- restore


@dataclass(frozen=True)
class RestorePoint:
    path: Path
    kind: str  # "rotation" (context_N.jsonl) | "backup" (<name>.bak-<time>)
    size: int
    mtime_ns: int
    origin: str  # what the audit log says made it

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
        }


@dataclass
class RestoreResult:
    path: Path
    restored_from: Path
    replaced_backup: Path | None  # where the replaced version was kept (None: no change)
    changed: bool
    messages_before: int | None
    messages_after: int | None
    audit_path: Path | None = None
    audit_error: str | None = None

    def describe(self) -> str:
        if not self.changed:
            return (
                f"{self.path} already holds the content of {self.restored_from.name}; "
                "nothing was changed"
            )
        counts = ""
        if self.messages_before is not None and self.messages_after is not None:
            counts = f" ({self.messages_before} → {self.messages_after} messages)"
        kept = (
            f"the version it replaced is kept as {self.replaced_backup}"
            if self.replaced_backup is not None
            else "there was no current file to keep"
        )
        line = f"Restored {self.path} from {self.restored_from.name}{counts}; {kept}"
        if self.audit_error:
            line += f"\nwarning: {self.audit_error}"
        return line


def _target(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if p.is_dir():
        return p / "context.jsonl"
    return p


def _is_kimi_target(target: Path) -> bool:
    if target.name == "context.jsonl":
        return True
    if target.suffix.lower() == ".jsonl" and _rotations(target):
        return True
    with contextlib.suppress(OSError):
        with open(target, "rb") as fh:
            head = fh.read(65536).decode("utf-8", "replace")
        from kimi_compact_tui.formats.kimi import looks_like_kimi

        return looks_like_kimi(head)
    return False


def _origins(target: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for rec in read_audit(target):
        backup = rec.get("backup")
        if not isinstance(backup, str):
            continue
        if rec.get("action") == "apply":
            out[backup] = f"before the compaction applied at {rec.get('time')}"
        elif rec.get("action") == "restore":
            out[backup] = f"the version replaced by a restore at {rec.get('time')}"
    return out


def restore_points(path: str | Path) -> list[RestorePoint]:
    """The restore points of a session (file or kimi-cli folder), newest
    first: rotations ``context_N.jsonl`` (highest N first) for kimi-cli
    sessions, ``<name>.bak-<time>`` copies otherwise."""
    target = _target(path)
    if not target.parent.is_dir():
        raise ApplyError(f"{target.parent}: no such folder")
    origins = _origins(target)
    found: list[tuple[str, Path]] = []
    kimi = _is_kimi_target(target)
    if kimi:
        found.extend(("rotation", p) for _, p in _rotations(target))
    found.extend(("backup", p) for _, p in _backups(target))
    points = []
    for kind, p in found:
        try:
            st = p.stat()
        except OSError:
            continue
        origin = origins.get(str(p)) or (
            "kimi-cli's own rotation (not in the audit log)"
            if kind == "rotation"
            else "not in the audit log"
        )
        points.append(RestorePoint(p, kind, st.st_size, st.st_mtime_ns, origin))
    return points


def _choose_point(target: Path, points: list[RestorePoint], point: Any) -> RestorePoint:
    if not points:
        raise ApplyError(
            f"{target}: no restore points (no rotated {target.stem}_N{target.suffix} "
            f"or {target.name}{BACKUP_MARK}* file beside it)"
        )
    if point is None:
        return points[0]
    if isinstance(point, RestorePoint):
        return point
    wanted = Path(str(point)).expanduser()
    for p in points:
        if wanted.parent == Path(".") and p.path.name == wanted.name:
            return p
        if p.path.resolve() == wanted.resolve():
            return p
    names = ", ".join(p.path.name for p in points)
    raise ApplyError(f"{target}: {point} is not a restore point of this session (have: {names})")


def _count_messages(data: bytes, path: Path, fmt: str | None) -> int:
    from kimi_compact_tui.formats import parse_session_bytes

    return len(parse_session_bytes(data, path, fmt).messages)


def restore(
    path: str | Path, point: RestorePoint | str | Path | None = None, *, now: datetime | None = None
) -> RestoreResult:
    """Put back a restore point (default: the newest, i.e. the state before
    the last apply). The current file is first kept as a new rotation/backup;
    the restore point itself stays where it is."""
    target = _target(path)
    points = restore_points(target)
    chosen = _choose_point(target, points, point)
    when = _now(now)
    try:
        data, src_fp, src_mode = _read_fingerprinted(chosen.path)
    except OSError as exc:
        raise ApplyError(_os_error_line(chosen.path, exc, "read the restore point")) from None
    fmt = "kimi" if _is_kimi_target(target) else None
    try:
        messages_after = _count_messages(data, target, fmt)
    except SessionFormatError as exc:
        raise ApplyError(
            f"{chosen.path}: not restored: it is not a valid session ({exc})"
        ) from None

    current_bytes: bytes | None = None
    try:
        current_bytes, current, mode = _read_fingerprinted(target)
    except FileNotFoundError:
        current, mode = None, src_mode
    except OSError as exc:
        raise ApplyError(_os_error_line(target, exc, "read the session")) from None

    if current_bytes is not None and current_bytes == data:
        return RestoreResult(target, chosen.path, None, False, messages_after, messages_after)
    messages_before = None
    if current_bytes is not None:
        with contextlib.suppress(UserError):
            messages_before = _count_messages(current_bytes, target, fmt)

    kept: Path | None = None
    try:
        if current_bytes is not None and current is not None:
            kept = _keep_copy(target, fmt or "", current_bytes, mode, current.mtime_ns, when)
            st = os.stat(target)
            if st.st_size != current.size or st.st_mtime_ns != current.mtime_ns:
                _undo_backup(target, current.sha256, kept)
                kept = None
                raise ApplyError(
                    f"{target}: changed on disk while restoring; nothing was changed — try again"
                )
        atomic_write_bytes(target, data, mode=mode)
    except OSError as exc:
        if current is not None:
            _undo_backup(target, current.sha256, kept)
        raise ApplyError(_os_error_line(target, exc, "restore the session")) from None

    record = {
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "action": "restore",
        "tool": _tool_name(),
        "source": str(target),
        "restored_from": str(chosen.path),
        "backup": str(kept) if kept else None,
        "before": (
            {"size": current.size, "sha256": current.sha256, "messages": messages_before}
            if current is not None
            else None
        ),
        "after": {"size": src_fp.size, "sha256": src_fp.sha256, "messages": messages_after},
    }
    log, audit_error = _append_audit(target, record, mode)
    return RestoreResult(
        target,
        chosen.path,
        kept,
        True,
        messages_before,
        messages_after,
        None if audit_error else log,
        audit_error,
    )


# ----------------------------------------------------------------------------- CLI glue


def output_tokens(usage: dict[str, Any] | None) -> int | None:
    """The summary's output tokens from a provider usage record, if reported."""
    if not isinstance(usage, dict):
        return None
    for key in ("completion_tokens", "output_tokens", "eval_count"):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def apply_from_cli(
    args: Any,
    session: Session,
    loaded_fingerprint: Fingerprint,
    plan: Any,
    preparation: Any,
    stream_result: Any,
    compacted: Session | None = None,
    *,
    summary: str | None = None,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
) -> ApplyResult | None:
    """``compact --in-place``: confirm (unless ``args.yes``), then apply. See
    the module docstring."""
    stdin = stdin if stdin is not None else sys.stdin
    out = out if out is not None else sys.stderr
    path = session.path
    status = getattr(stream_result, "status", None)
    if status != "complete":
        why = getattr(stream_result, "error", None)
        raise ApplyError(
            f"{path}: not written: the summary is {status}"
            + (f" ({why})" if why else "")
            + "; only a complete summary is written"
        )
    text = summary if summary is not None else stream_result.summary
    if not text or not text.strip():
        raise ApplyError(f"{path}: not written: the summary is empty")
    if compacted is None:
        from kimi_compact_tui.compaction import build_compacted_session

        compacted = build_compacted_session(
            session, plan, text, output_tokens=output_tokens(stream_result.usage)
        )
    if not getattr(args, "yes", False):
        isatty = getattr(stdin, "isatty", None)
        if not (callable(isatty) and isatty()):
            raise UserError(
                f"{path}: not written: --in-place asks for confirmation on a terminal "
                "and there is none; pass --yes to write without asking"
            )
        backup_kind = (
            "rotated to the next context_N.jsonl"
            if session.format == "kimi"
            else "copied to a timestamped .bak- file"
        )
        out.write(
            f"Write the compacted session over {path}?\n"
            f"  {len(session.messages)} → {len(compacted.messages)} messages; "
            f"the current file is {backup_kind} first.\n"
            "Write it? [y/N] "
        )
        out.flush()
        answer = stdin.readline()
        if answer.strip().lower() not in ("y", "yes"):
            out.write("Not written.\n")
            return None
    prompt = getattr(preparation, "prompt", None)
    model = getattr(stream_result, "model", None) or getattr(preparation, "compaction_model", None)
    result = apply_compaction(
        session,
        compacted,
        loaded_fingerprint=loaded_fingerprint,
        summary=text,
        plan=plan,
        prompt=prompt,
        provider=getattr(stream_result, "provider", None),
        model=model,
        usage=getattr(stream_result, "usage", None),
    )
    out.write(result.describe() + "\n")
    return result

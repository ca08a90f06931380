"""The write strategies: how a session is written back, kept and undone.

A format declares one (``storage = Rotate()``); the store drives it through
:class:`formats.base.WriteStrategy` and never asks which it is.

- :class:`Rotate` (kimi-cli): the current file is kept under the format's next
  rotation name (``SessionFormat.rotation_name``, the agent's own numbering,
  so its rotations and ours share one sequence); the new file replaces it
  atomically; undo puts a rotation back.
- :class:`BackupReplace` (the OpenAI files): the current file is copied to a
  timestamped backup, ``<name>.bak-YYYYmmddTHHMMSSZ`` (``-1``, ``-2``, ... when
  taken) in the format's restore folder, then replaced atomically.
- :class:`AppendTruncate` (the journals: kimi-code, Claude Code, Codex, Gemini
  CLI): a backup is kept too, then the format's records are appended and
  fsynced; earlier bytes never change; undo cuts the journal back to its
  length before our records, only while it still ends with exactly them.
- :class:`Transactional` (databases; ``formats/sqlite.py`` for SQLite): the
  session's own rows are exported to a backup, and the write is one
  transaction that re-checks, inside it, that the rows are as loaded. Undo and
  restore put that session's rows back, never a whole database.

The file strategies share the order of a write (:meth:`FileStrategy.write`):
the conflict check, the copy, a second look at the file's size and mtime, the
write; any ``OSError`` becomes one ``ApplyError`` line naming the file, and the
copy made is removed again while the file still holds the old bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from abc import abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats.base import (
    Current,
    FileFormat,
    Session,
    SessionFormat,
    WriteStrategy,
    Written,
)
from kimi_compact_tui.formats.durable import (
    append_durable,
    atomic_write_bytes,
    os_error_line,
    sha256_file,
    step,
    truncate_durable,
    write_new_file,
)
from kimi_compact_tui.formats.lines import Lines
from kimi_compact_tui.formats.storage import (
    Fingerprint,
    SessionRef,
    check_bytes,
    conflict_message,
)
from kimi_compact_tui.fsutil import gc_paused

BACKUP_MARK = ".bak-"  # the version before a write
REPLACED_MARK = ".replaced-"  # the version a restore replaced (not an older backup)
MARKS = (BACKUP_MARK, REPLACED_MARK)
_TS_FORMAT = "%Y%m%dT%H%M%SZ"
_BACKUP_RE = re.compile(r"^(\d{8}T\d{6}Z)(?:-(\d+))?$")


def fingerprint_of(data: bytes, mtime_ns: int = 0) -> Fingerprint:
    return Fingerprint(len(data), mtime_ns, hashlib.sha256(data).hexdigest())


def read_fingerprinted(path: Path) -> tuple[bytes, Fingerprint, int]:
    """The bytes of ``path``, their fingerprint and the file mode, read from
    one open file (so the three agree)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        data = fh.read()
    return data, fingerprint_of(data, st.st_mtime_ns), st.st_mode & 0o7777


def parse_file_bytes(fmt: FileFormat, data: bytes, path: Path) -> Session:
    """Parse the bytes of a session file with ``fmt`` (streamed formats get
    them as lines), after :func:`check_bytes`."""
    check_bytes(data, path)
    # Parsing allocates one container per message and part and frees none of
    # them: the cyclic GC would rescan an ever larger heap for nothing.
    with gc_paused():
        if fmt.streams_lines:
            return fmt.parse_lines(Lines(path, data=data), path)
        return fmt.parse(data, path)


# --- restore points kept as timestamped backups ------------------------------------------
def _listdir(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def backup_place(fmt: SessionFormat, ref: SessionRef) -> str:
    """Where the backups of ``ref`` go, for people: "beside it" or "in <folder>"."""
    folder = fmt.restore_folder(ref.path)
    return "beside it" if folder == ref.path.parent else f"in {folder}"


def backup_pattern(fmt: SessionFormat, ref: SessionRef) -> str:
    """The name of a new backup of ``ref`` (and its folder, when not beside it)."""
    place = backup_place(fmt, ref)
    return f"{ref.name}{BACKUP_MARK}<UTC time>" + ("" if place == "beside it" else f" {place}")


def backups(fmt: SessionFormat, ref: SessionRef) -> list[Path]:
    """The timestamped copies of ``ref`` in the format's restore folder (the
    versions before a write, and those a restore replaced), newest first."""
    folder = fmt.restore_folder(ref.path)
    found = []
    for name in _listdir(folder):
        for mark in MARKS:
            prefix = ref.name + mark
            if name.startswith(prefix):
                m = _BACKUP_RE.match(name[len(prefix) :])
                if m:
                    found.append(((m.group(1), int(m.group(2) or 0)), folder / name))
    found.sort(reverse=True)
    return [p for _, p in found]


def backup_names(name: str, now: datetime, mark: str = BACKUP_MARK) -> Iterator[str]:
    stamp = now.astimezone(UTC).strftime(_TS_FORMAT)
    base = f"{name}{mark}{stamp}"
    yield base
    k = 1
    while True:
        yield f"{base}-{k}"
        k += 1


def drop_copy(target: Path, old_sha: str, copy: Path | None) -> None:
    """Remove a copy this write made, but only while the target still holds
    the old bytes (then the copy is redundant)."""
    if copy is None:
        return
    if sha256_file(target) == old_sha:
        with contextlib.suppress(OSError):
            os.unlink(copy)


class BackedUp(WriteStrategy):
    """Restore points kept as timestamped backups in the format's restore folder."""

    def restore_points(self, ref: SessionRef) -> list[tuple[str, Path]]:
        return [("backup", p) for p in backups(self.format, ref)]

    def keep(
        self,
        ref: SessionRef,
        current: Current,
        now: datetime,
        *,
        replaced: bool = False,
    ) -> Path:
        """Keep ``current`` as the next restore point, in the folder and under
        the names :meth:`point_names` gives (``replaced``: the version a restore
        replaces)."""
        folder, names = self.point_names(ref, now, replaced)
        folder.mkdir(parents=True, exist_ok=True)
        fp = current.fingerprint
        # A database session's content has no file time: the copy gets its own.
        mtime = fp.mtime_ns if self.byte_based else None
        made = write_new_file(folder, names, current.data, current.mode, mtime)
        assert made is not None  # the names never run out
        return made

    def point_names(
        self, ref: SessionRef, now: datetime, replaced: bool
    ) -> tuple[Path, Iterator[str]]:
        """Where a new restore point goes, and its names to try in turn: a
        timestamped copy in the format's restore folder (``.replaced-`` for the
        version a restore replaces, so it does not read as an older backup)."""
        mark = REPLACED_MARK if replaced else BACKUP_MARK
        return self.format.restore_folder(ref.path), backup_names(ref.name, now, mark)

    def next_point(self, ref: SessionRef) -> str:
        return backup_pattern(self.format, ref)


# --- the file strategies ------------------------------------------------------------------
class FileStrategy(BackedUp):
    """A session that is one file of bytes: read, fingerprinted and copied whole."""

    format: FileFormat

    def current(self, ref: SessionRef) -> Current:
        data, fp, mode = read_fingerprinted(ref.path)
        return Current(data, fp, mode)

    def conflict(self, ref: SessionRef, loaded: Fingerprint, now: Current) -> str:
        """The refusal when the file is not what was loaded."""
        return conflict_message(ref.path, loaded, now.fingerprint)

    @abstractmethod
    def put(self, ref: SessionRef, current: Current, data: bytes) -> Fingerprint:
        """Write the format's ``data`` over ``current``; the new content's
        fingerprint (mtime 0: not read back)."""

    def undo_record(self, current: Current, data: bytes) -> dict[str, Any] | None:
        """What the audit record holds for this strategy's undo (default: nothing)."""
        return None

    def write(self, old: Session, new: Session, loaded: Fingerprint, now: datetime) -> Written:
        ref = old.ref
        path = ref.path
        try:
            current = self.current(ref)
        except OSError as exc:
            raise ApplyError(os_error_line(path, exc, "read the session")) from None
        if current.fingerprint != loaded:
            raise ApplyError(self.conflict(ref, loaded, current))
        step("checked")
        # Built after the check: kept lines are read back from the (unchanged) file.
        op = self.format.write_op(old, new)
        before = current.fingerprint
        backup: Path | None = None
        try:
            backup = self.keep(ref, current, now)
            step("backup-done")
            st = os.stat(path)
            if st.st_size != before.size or st.st_mtime_ns != before.mtime_ns:
                drop_copy(path, before.sha256, backup)
                backup = None
                changed = Fingerprint(st.st_size, st.st_mtime_ns, "(changed)")
                raise ApplyError(conflict_message(path, before, changed))
            after = self.put(ref, current, op.data)
            step("replaced")
        except FileExistsError:
            drop_copy(path, before.sha256, backup)
            raise ApplyError(conflict_message(path, before, Fingerprint(-1, 0, "(grew)"))) from None
        except OSError as exc:
            drop_copy(path, before.sha256, backup)
            raise ApplyError(os_error_line(path, exc, "write the compacted session")) from None
        return Written(backup, before, after, self.undo_record(current, op.data))

    def put_back(self, ref: SessionRef, data: bytes, current: Current | None) -> None:
        mode = current.mode if current is not None else 0o600
        atomic_write_bytes(ref.path, data, mode=mode)

    def count_messages(self, ref: SessionRef, data: bytes) -> int:
        return len(parse_file_bytes(self.format, data, ref.path).messages)

    def then(self, ref: SessionRef) -> str:
        return f"{ref.path.name} is replaced"

    def keep_description(self, ref: SessionRef) -> str:
        where = backup_place(self.format, ref)
        return (
            f"a timestamped backup {where}: {ref.name}{BACKUP_MARK}<UTC time>, "
            f"then {self.then(ref)}"
        )


class BackupReplace(FileStrategy):
    """A timestamped backup, then an atomic replace keeping the file's mode."""

    name = "backup"
    keeps = "copied to a timestamped .bak- file"

    def put(self, ref: SessionRef, current: Current, data: bytes) -> Fingerprint:
        atomic_write_bytes(ref.path, data, mode=current.mode)
        return fingerprint_of(data)


class Rotate(BackupReplace):
    """The current file is kept as the format's next rotation (what the
    agent's own compaction leaves behind), then replaced atomically."""

    name = "rotate"
    keeps = "kept as the next rotation"

    def rotations(self, ref: SessionRef) -> list[tuple[int, Path]]:
        """``(N, path)`` of each rotation of the file, highest N first."""
        path = ref.path
        out = []
        for name in _listdir(path.parent):
            n = self.format.rotation_number(path, name)
            if n is not None:
                out.append((n, path.parent / name))
        out.sort(reverse=True)
        return out

    def rotation_names(self, ref: SessionRef) -> Iterator[str]:
        existing = self.rotations(ref)
        n = (existing[0][0] if existing else 0) + 1
        while True:
            yield self.format.rotation_name(ref.path, n)
            n += 1

    def next_point(self, ref: SessionRef) -> str:
        return next(self.rotation_names(ref))

    def point_names(
        self, ref: SessionRef, now: datetime, replaced: bool
    ) -> tuple[Path, Iterator[str]]:
        """The agent's own next rotation, beside the file (a replaced version
        too: it is the agent's numbering, which it reads back)."""
        return ref.path.parent, self.rotation_names(ref)

    def restore_points(self, ref: SessionRef) -> list[tuple[str, Path]]:
        found = [("rotation", p) for _, p in self.rotations(ref)]
        return found + super().restore_points(ref)

    def keep_description(self, ref: SessionRef) -> str:
        name = ref.path.name
        rotated = self.next_point(ref)
        return f"{name} → {rotated} (rotation, next free N), then a new {name}"


class AppendTruncate(FileStrategy):
    """A journal: a backup is kept, then our records are appended; undo cuts
    the journal back to its length before them while it still ends with them."""

    name = "append"
    keeps = "copied to a timestamped .bak- file, then the compaction is appended"
    verb = "appended to"

    def conflict(self, ref: SessionRef, loaded: Fingerprint, now: Current) -> str:
        """Why appending is refused: the journal grew (the agent is writing to
        it), shrank, or its earlier bytes changed."""
        data, agent = now.data, self.format.agent or "the agent"
        head = f"{ref.path}: nothing was written: the journal"
        if len(data) > loaded.size and fingerprint_of(data[: loaded.size]).sha256 == loaded.sha256:
            return (
                f"{head} grew by {len(data) - loaded.size:,} bytes since it was loaded: {agent} "
                "is writing to this session (close it, reload, and review again)"
            )
        if len(data) < loaded.size:
            return (
                f"{head} shrank from {loaded.size:,} to {len(data):,} bytes since it was loaded "
                f"({agent} repaired or rewrote it); reload and review again"
            )
        if now.fingerprint.sha256 != loaded.sha256:
            return (
                f"{head}'s earlier bytes changed since it was loaded ({agent} rewrote it); "
                "reload and review again"
            )
        return conflict_message(ref.path, loaded, now.fingerprint)

    def put(self, ref: SessionRef, current: Current, data: bytes) -> Fingerprint:
        append_durable(ref.path, data, current.fingerprint.size)
        return fingerprint_of(current.data + data)

    def undo_record(self, current: Current, data: bytes) -> dict[str, Any] | None:
        digest = hashlib.sha256(data).hexdigest()
        return {
            "appended": {"offset": current.fingerprint.size, "size": len(data), "sha256": digest}
        }

    def then(self, ref: SessionRef) -> str:
        return "the compaction is appended (undo cuts it off again)"

    def undo_in_place(self, record: dict[str, Any]) -> int | None:
        appended = record.get("appended")
        offset = appended.get("offset") if isinstance(appended, dict) else None
        return offset if isinstance(offset, int) else None

    def changed_since(self, record: dict[str, Any], current: Current) -> str:
        """Why the journal is no longer what our write left (the undo's refusal)."""
        appended = record.get("appended")
        if not isinstance(appended, dict):
            return super().changed_since(record, current)
        offset, size = int(appended.get("offset", 0)), int(appended.get("size", 0))
        end, data = offset + size, current.data
        ours = fingerprint_of(data[offset:end]).sha256 == appended.get("sha256")
        when = f"changed since this tool wrote it at {record.get('time')}"
        if len(data) > end and ours:
            agent = self.format.agent or "the agent"
            return (
                f"{when}: {len(data) - end} bytes were appended after our compaction records "
                f"({agent} resumed the session)"
            )
        if len(data) < end:
            return f"{when}: the journal is shorter than our compaction left it (it was rewritten)"
        return (
            f"{when}: the journal no longer holds our compaction records at byte {offset} "
            "(it was rewritten)"
        )

    def cut(self, ref: SessionRef, current: Current, data: bytes) -> None:
        if not current.data.startswith(data):
            raise ApplyError(
                f"{ref.path}: not restored: the journal no longer starts with the bytes "
                "it had before the compaction; nothing was changed"
            )
        truncate_durable(ref.path, len(data))


# --- databases ----------------------------------------------------------------------------
class Transactional(BackedUp):
    """A session kept as rows in a database that holds many sessions.

    The content of a session (what is fingerprinted, backed up and put back)
    is its own rows (:meth:`read_rows`), exported to bytes by
    :meth:`export_rows`. A write is one transaction (:meth:`transaction`, which
    takes the write lock at once) that reads the session's rows once: exported,
    they must be exactly as loaded, then they are kept as a backup file, then
    the format's rows are written (:meth:`write_rows`, given the rows read,
    returns the content after). Undo and restore replace that session's rows with a
    backup's (:meth:`replace_rows`), inside a transaction that re-checks them,
    so other sessions' rows, and rows written meanwhile, are never touched.
    Subclasses supply the database (``formats/sqlite.py``) and the schema."""

    name = "transaction"
    keeps = "its own rows exported to a timestamped .bak- file"
    byte_based = False
    #: The database's errors, made into one ``ApplyError`` line.
    errors: ClassVar[tuple[type[Exception], ...]] = ()

    @abstractmethod
    def transaction(self, ref: SessionRef, write: bool = True) -> AbstractContextManager[Any]:
        """A transaction on the database holding ``ref`` (``write``: taking the
        write lock at once); committed on a normal exit, rolled back otherwise."""

    @abstractmethod
    def read_rows(self, tx: Any, ref: SessionRef) -> Any:
        """The session's own rows, read in ``tx``."""

    @abstractmethod
    def export_rows(self, rows: Any) -> bytes:
        """Rows :meth:`read_rows` read, as bytes: the same bytes for the same rows."""

    def export(self, tx: Any, ref: SessionRef) -> bytes:
        """The session's own rows, read in ``tx``, as bytes."""
        return self.export_rows(self.read_rows(tx, ref))

    @abstractmethod
    def replace_rows(self, tx: Any, ref: SessionRef, data: bytes) -> None:
        """Make the session's rows exactly the exported ``data``."""

    @abstractmethod
    def write_rows(self, tx: Any, rows: Any, session: Session, compacted: Session) -> bytes:
        """Write the compaction's rows for ``compacted`` over ``session``, whose
        rows (as :meth:`read_rows` read them in this transaction) are ``rows``;
        returns the session's content after the write, exported (not read again)."""

    def _failed(self, ref: SessionRef, exc: Exception, doing: str) -> ApplyError:
        return ApplyError(f"{ref}: cannot {doing} ({exc}); nothing was changed")

    def current(self, ref: SessionRef) -> Current:
        try:
            with self.transaction(ref, write=False) as tx:
                data = self.export(tx, ref)
        except self.errors as exc:
            raise OSError(f"{ref}: {exc}") from None
        return Current(data, fingerprint_of(data), 0o600)

    def write(self, old: Session, new: Session, loaded: Fingerprint, now: datetime) -> Written:
        ref = old.ref
        backup: Path | None = None
        try:
            with self.transaction(ref) as tx:
                rows = self.read_rows(tx, ref)  # the one read of the session's rows
                data = self.export_rows(rows)
                before = fingerprint_of(data)
                if before != loaded:
                    raise ApplyError(conflict_message(ref, loaded, before))
                step("checked")
                backup = self.keep(ref, Current(data, before, 0o600), now)
                step("backup-done")
                after = fingerprint_of(self.write_rows(tx, rows, old, new))
            step("replaced")
        except BaseException as exc:
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.unlink(backup)
            if isinstance(exc, self.errors):
                raise self._failed(ref, exc, "write the compacted session") from None
            if isinstance(exc, OSError):
                raise ApplyError(os_error_line(ref.path, exc, "keep a backup")) from None
            raise
        assert backup is not None
        return Written(backup, before, after)

    def put_back(self, ref: SessionRef, data: bytes, current: Current | None) -> None:
        try:
            with self.transaction(ref) as tx:
                now = fingerprint_of(self.export(tx, ref))
                if current is not None and now != current.fingerprint:
                    raise ApplyError(conflict_message(ref, current.fingerprint, now))
                self.replace_rows(tx, ref, data)
        except self.errors as exc:
            raise self._failed(ref, exc, "restore the session") from None

    def keep_description(self, ref: SessionRef) -> str:
        where = backup_place(self.format, ref)
        return (
            f"the session's own rows exported to a timestamped backup {where}: "
            f"{ref.name}{BACKUP_MARK}<UTC time>, then the compaction is written in one "
            "transaction (other sessions in the database are not touched)"
        )

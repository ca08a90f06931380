"""Small file-system helpers shared by the formats and the safe apply (and the
reading of a JSONL file's objects, shared by the formats and the gate)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to a temporary file beside ``path``, flush and fsync it,
    then atomically replace ``path``. The file mode of an existing target is
    kept (or ``mode`` is applied). On any error the target is left untouched and
    the temporary file is removed."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if mode is None and path.exists():
        mode = path.stat().st_mode & 0o7777
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    fsync_dir(directory)


def fsync_dir(directory: Path) -> None:
    """Make a rename durable (best effort where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_utf8(path: Path, what: str, error: type[Exception]) -> str:
    """Read a UTF-8 text file; every failure becomes ``error`` with one line
    naming the file (and the line, for bad UTF-8)."""
    return decode_utf8(read_bytes(path, what, error), path, error)


def read_bytes(path: Path, what: str, error: type[Exception]) -> bytes:
    """Read a file; every failure becomes ``error`` with one line naming it."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise error(f"{path}: {what} not found") from None
    except IsADirectoryError:
        raise error(f"{path}: {what} is a folder") from None
    except PermissionError:
        raise error(f"{path}: {what}: permission denied") from None
    except OSError as exc:
        raise error(f"{path}: cannot read {what} ({exc.strerror or exc})") from None


def decode_utf8(data: bytes, path: Path, error: type[Exception]) -> str:
    """Decode UTF-8; bad bytes become ``error`` naming the file and line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{path}:{line}: not valid UTF-8 (byte {exc.start}: {exc.reason})") from None


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small objects
    that form no cycles (parsing a session, diff rows): otherwise each
    generation-2 pass rescans every message already loaded, for nothing."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def json_object(line: bytes) -> dict[str, Any] | None:
    """The JSON object one JSONL line holds; None for a blank line, a line that is
    not JSON (or nests too deep to read) and a JSON value that is not an object."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def json_lines(
    data: bytes, marks: tuple[bytes, ...] = ()
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """``(start, end, object)`` of each line of ``data`` (split on ``\\n``) that holds a
    JSON object, in file order; with ``marks``, only the lines holding one of them."""
    pos = 0
    for line in data.split(b"\n"):
        start = pos
        pos += len(line) + 1
        if marks and not any(m in line for m in marks):
            continue
        record = json_object(line)
        if record is not None:
            yield start, min(pos, len(data)), record

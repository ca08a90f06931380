"""Durable file operations: nothing is ever half-written.

- :func:`write_new_file`: a new file beside a path under the first free name,
  whole or not at all (temporary file, fsync, hard link, which never
  overwrites; a rename after an existence check where links are unsupported).
- :func:`kimi_compact_tui.fsutil.atomic_write_bytes`: replace a file (temporary
  file in the same folder, fsync, ``os.replace``, folder fsync).
- :func:`append_durable` / :func:`truncate_durable`: grow or shrink a journal
  in place, fsynced.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from kimi_compact_tui.fsutil import atomic_write_bytes, fsync_dir

__all__ = [
    "append_durable",
    "atomic_write_bytes",
    "os_error_line",
    "sha256_file",
    "step",
    "truncate_durable",
    "write_new_file",
]

#: Test seam: called with a step name at each step of a write (crash tests).
_step_hook: Callable[[str], None] | None = None


def step(name: str) -> None:
    if _step_hook is not None:
        _step_hook(name)


def write_new_file(
    directory: Path, names: Iterable[str], data: bytes, mode: int, mtime_ns: int | None
) -> Path | None:
    """Write ``data`` to a new file in ``directory`` under the first free name
    of ``names``, never overwriting anything; None when every name is taken."""
    fd, tmp = tempfile.mkstemp(prefix=".restore-point.", suffix=".tmp", dir=directory)
    dest: Path | None = None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        step("backup-temp-written")
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
        step("backup-linked")
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


def append_durable(path: Path, data: bytes, expected_size: int) -> None:
    """Append ``data`` to ``path`` (which must still be ``expected_size``
    bytes long) and fsync. On failure the file is cut back to its old length."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        if os.fstat(fd).st_size != expected_size:
            raise FileExistsError(errno.EEXIST, "the file grew meanwhile")
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, expected_size)
                os.fsync(fd)
            raise
    finally:
        os.close(fd)
    step("appended")


def truncate_durable(path: Path, size: int) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def os_error_line(path: Path, exc: OSError, doing: str) -> str:
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


def sha256_file(path: Path) -> str | None:
    """The sha256 of the file at ``path``, read in chunks (None: unreadable)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()

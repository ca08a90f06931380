"""Line-based session files, read without holding a copy of the whole file.

:class:`Lines` yields ``(line number, offset, raw bytes)`` either from bytes
already in memory or straight from an open file, in chunks, hashing what it
reads (the conflict fingerprint comes from the very bytes parsed). Each line
is decoded on its own, so no whole-file string is ever built (CPython widens
a whole-file string to 2 or 4 bytes per character as soon as one CJK
character or emoji appears in it).

A message keeps its source line for the byte-for-byte round trip: as the
bytes themselves when they came from memory, or as a :class:`RawRef` (file,
offset, length, CRC) when they came from a file, read back on demand and
checked against the CRC. Holding references instead of the lines keeps the
memory of a loaded session near that of its parsed objects alone.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from kimi_compact_tui.errors import SessionFormatError

CHUNK = 1 << 20
_new = object.__new__


class RawRef:
    """A source line that stays in its file: read back on demand. Offset,
    length and CRC are packed into one integer (one object per line, not three)."""

    __slots__ = ("path", "_packed")

    def __init__(self, path: Path, offset: int, length: int, crc: int) -> None:
        self.path = path
        self._packed = (offset << 64) | (length << 32) | crc

    @property
    def offset(self) -> int:
        return self._packed >> 64

    @property
    def length(self) -> int:
        return (self._packed >> 32) & 0xFFFFFFFF

    @property
    def crc(self) -> int:
        return self._packed & 0xFFFFFFFF

    def read(self) -> bytes:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read(self.length)
        except OSError as exc:
            raise SessionFormatError(
                f"{self.path}: cannot read the session's source line back ({exc.strerror or exc})"
            ) from None
        if len(data) != self.length or zlib.crc32(data) != self.crc:
            raise SessionFormatError(
                f"{self.path}: changed on disk since it was loaded (the line at byte "
                f"{self.offset} is not what was read); reload the session"
            )
        return data

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RawRef):
            return self._packed & 0xFFFFFFFFFFFFFFFF == other._packed & 0xFFFFFFFFFFFFFFFF
        if isinstance(other, bytes):
            return self.length == len(other) and self.crc == zlib.crc32(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RawRef({self.path.name}@{self.offset}+{self.length})"


class Lines:
    """The lines of a session file, from bytes or streamed from a file.

    After iteration: ``trailing_newline``; for a file also ``size`` and
    ``sha256`` of everything read. Empty files, NUL bytes and a byte-order
    mark are refused with a line naming the place, as no session holds them."""

    def __init__(
        self,
        path: Path,
        data: bytes | None = None,
        fh: BinaryIO | None = None,
        *,
        hashed: bool = True,
    ):
        self.path = path
        self.hashed = hashed
        self.data = data
        self.fh = fh
        self.trailing_newline = True
        self.size = 0
        self._sha = hashlib.sha256()
        self._any = False

    @property
    def sha256(self) -> str:
        return self._sha.hexdigest()

    def keep(self, raw: bytes, offset: int) -> bytes | RawRef:
        """What a message keeps of its source line (a :class:`RawRef` made
        without a call to ``__init__``: once per message, on the load's hot path)."""
        if self.fh is None:
            return raw
        ref = _new(RawRef)
        ref.path = self.path
        ref._packed = (offset << 64) | (len(raw) << 32) | zlib.crc32(raw)
        return ref

    def _chunks(self) -> Iterator[bytes]:
        if self.data is not None:
            yield self.data
            return
        assert self.fh is not None
        read = self.fh.read
        while True:
            chunk = read(CHUNK)
            if not chunk:
                return
            yield chunk

    def __iter__(self) -> Iterator[tuple[int, int, bytes]]:
        for lineno, offset, batch in self.batches():
            for line in batch:
                yield lineno, offset, line
                lineno += 1
                offset += len(line) + 1

    def batches(self) -> Iterator[tuple[int, int, list[bytes]]]:
        """The lines in batches (a chunk's worth): ``(number of the first,
        its offset, the lines)``; each next line's number is one more, its
        offset the line's length plus one more (for a hot loop: no generator
        step per line)."""
        # A line longer than a chunk is not gathered chunk by chunk: its start
        # and a running CRC are noted, and once its end is found it is read back
        # from the file in one piece (and checked against the CRC of the bytes
        # hashed). Only the line itself is alive while the caller decodes it: a
        # 30 MB line costs about its own size here, not three times it.
        lineno, offset = 0, 0
        spans_from: int | None = None  # a line going on past a chunk: its file offset
        spans_crc = 0
        pieces: list[bytes] = []  # the same, from bytes in memory (one chunk: never)
        carried_nul = False  # the line going on holds a NUL byte
        for chunk in self._chunks():
            if self.fh is not None and self.hashed:
                self._sha.update(chunk)
            base = self.size  # the file offset of the chunk
            self.size += len(chunk)
            nul = carried_nul or b"\x00" in chunk
            parts = chunk.split(b"\n")  # in C: the chunk's lines, and the start of the next
            del chunk
            rest = parts.pop()
            if parts:
                if spans_from is not None:  # the end of a line begun in earlier chunks
                    end = base + len(parts[0])
                    parts[0] = self._read_back(spans_from, end, parts[0], spans_crc)
                    spans_from = None
                elif pieces:
                    pieces.append(parts[0])
                    parts[0] = b"".join(pieces)
                    pieces.clear()
                first, first_offset = lineno + 1, offset
                if nul or lineno == 0 or not self._any:
                    for line in parts:
                        lineno += 1
                        self._check(line, lineno, offset)
                        offset += len(line) + 1
                else:  # the common case: nothing left to check on these lines
                    lineno += len(parts)
                    offset += sum(map(len, parts)) + len(parts)
                yield first, first_offset, parts
                parts = []
                carried_nul = False
            if rest:
                carried_nul = carried_nul or b"\x00" in rest
                if self.fh is None:
                    pieces.append(rest)
                else:
                    if spans_from is None:
                        spans_from, spans_crc = self.size - len(rest), 0
                    spans_crc = zlib.crc32(rest, spans_crc)
            del rest
        if spans_from is not None:
            pending = self._read_back(spans_from, self.size, b"", spans_crc)
        else:
            pending = b"".join(pieces)
            pieces.clear()
        self.trailing_newline = not pending
        if pending:
            lineno += 1
            self._check(pending, lineno, offset)
            yield lineno, offset, [pending]
        if not self._any:
            raise SessionFormatError(f"{self.path}: file is empty")

    def _read_back(self, start: int, end: int, tail: bytes, crc: int) -> bytes:
        """The line from file offset ``start`` to ``end`` (its last piece,
        ``tail``, is in the current chunk; ``crc`` is that of the pieces before
        it), read back in one piece; the file position is left where it was."""
        fh = self.fh
        assert fh is not None
        here = fh.tell()
        fh.seek(start)
        line = fh.read(end - start)
        fh.seek(here)
        if len(line) != end - start or zlib.crc32(line) != zlib.crc32(tail, crc):
            raise SessionFormatError(
                f"{self.path}: changed on disk while it was read (the line at byte {start}); "
                "read it again"
            )
        return line

    def _check(self, line: bytes, lineno: int, offset: int) -> None:
        if lineno == 1 and line.startswith(codecs.BOM_UTF8):
            raise SessionFormatError(
                f"{self.path}:1: starts with a byte-order mark; save it as UTF-8"
            )
        if b"\x00" in line:
            raise SessionFormatError(f"{self.path}:{lineno}: contains a NUL byte (binary file?)")
        if not self._any and line.strip():
            self._any = True


def open_lines(path: Path) -> tuple[Lines, BinaryIO, os.stat_result]:
    """Open ``path`` for streaming; the caller closes the file."""
    fh = open(path, "rb")  # noqa: SIM115 - closed by the caller
    return Lines(path, fh=fh), fh, os.fstat(fh.fileno())


def decode_line(raw: bytes, path: Path, lineno: int, offset: int) -> str:
    """One line as text; bad UTF-8 names the line and the byte offset in the file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionFormatError(
            f"{path}:{lineno}: not valid UTF-8 (byte {offset + exc.start}: {exc.reason})"
        ) from None


def raw_bytes(raw: bytes | str | RawRef) -> bytes:
    """A kept source line as bytes (read back from its file for a RawRef;
    lines built in memory may hold a str)."""
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, RawRef):
        return raw.read()
    return raw.encode("utf-8")

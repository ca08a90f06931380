"""Line-based session files read as bytes: each line is kept as the exact
bytes read (for a byte-identical round trip) and decoded on its own, so no
decoded copy of the whole file is ever held (CPython widens a whole-file
string to 2 or 4 bytes per character as soon as one CJK character or emoji
appears in it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kimi_compact_tui.errors import SessionFormatError


def split_lines(data: bytes) -> tuple[list[bytes], bool]:
    """The lines of ``data`` (without their ``\\n``) and whether it ends with one."""
    lines = data.split(b"\n")
    trailing = data.endswith(b"\n")
    if trailing:
        lines.pop()
    return lines, trailing


def decoded_lines(lines: list[bytes], path: Path) -> Iterator[tuple[int, bytes, str]]:
    """``(line number, raw bytes, text)`` for each line; bad UTF-8 is a
    :class:`SessionFormatError` naming the line and the byte offset in the file."""
    offset = 0
    for lineno, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SessionFormatError(
                f"{path}:{lineno}: not valid UTF-8 (byte {offset + exc.start}: {exc.reason})"
            ) from None
        yield lineno, raw, text
        offset += len(raw) + 1


def raw_bytes(raw: bytes | str) -> bytes:
    """A kept source line as bytes (lines built in memory may hold a str)."""
    return raw if isinstance(raw, bytes) else raw.encode("utf-8")

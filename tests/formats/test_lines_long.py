"""Lines longer than a read chunk (issue 32 item 2: one 30 MB message): they
come out whole and exact, with their offsets, the file's hash and size, and a
file changed while it was read is refused, never read half old, half new."""

from __future__ import annotations

import hashlib
import random

import pytest

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import lines as lines_module
from kimi_compact_tui.formats.lines import Lines, open_lines


def expected(data: bytes) -> list[tuple[int, int, bytes]]:
    out, offset = [], 0
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    for i, part in enumerate(parts, 1):
        out.append((i, offset, part))
        offset += len(part) + 1
    return out


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
def test_long_lines_come_out_whole(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(lines_module, "CHUNK", chunk)
    rng = random.Random(chunk)
    lines = [
        bytes(rng.choice(b'abcdef {}:,"') for _ in range(rng.choice((0, 1, 5, 50, 300))))
        for _ in range(40)
    ]
    lines[0] = b'{"role":"user"}'  # something to make the file non-empty
    lines[-1] = b"x" * 70  # the last line is not empty: "no trailing newline" means it
    for trailing in (b"\n", b""):
        data = b"\n".join(lines) + trailing
        path = tmp_path / f"s{len(trailing)}.jsonl"
        path.write_bytes(data)
        found, fh, _ = open_lines(path)
        with fh:
            got = list(found)
        assert got == expected(data)
        assert found.trailing_newline is bool(trailing)
        assert found.size == len(data)
        assert found.sha256 == hashlib.sha256(data).hexdigest()
        assert list(Lines(path, data=data)) == expected(data)  # the same from memory


def test_a_file_changed_while_a_long_line_is_read_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(lines_module, "CHUNK", 1 << 14)  # past the file object's own buffer
    path = tmp_path / "context.jsonl"
    path.write_bytes(b"ab\n" + b"x" * 100_000 + b"\nend\n")
    found, fh, _ = open_lines(path)
    with fh:
        it = iter(found)
        assert next(it) == (1, 0, b"ab")  # the first chunk is read: the long line begins
        with open(path, "r+b") as other:  # a byte of it already read and hashed changes
            other.seek(10)
            other.write(b"Y")
        with pytest.raises(SessionFormatError, match="changed on disk while it was read"):
            next(it)


@pytest.mark.parametrize(
    "data", [b"", b"\n", b"\n\n  \n", b" " * 5000], ids=["empty", "newline", "blank", "spaces"]
)
def test_a_file_of_nothing_is_refused(tmp_path, monkeypatch, data):
    monkeypatch.setattr(lines_module, "CHUNK", 64)
    path = tmp_path / "context.jsonl"
    path.write_bytes(data)
    found, fh, _ = open_lines(path)
    with fh, pytest.raises(SessionFormatError, match="file is empty"):
        list(found)


def test_a_nul_byte_past_the_first_chunk_names_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(lines_module, "CHUNK", 16)
    path = tmp_path / "context.jsonl"
    path.write_bytes(b'{"role":"user"}\n' * 20 + b'{"role":"u\x00ser"}\n' + b"{}\n")
    found, fh, _ = open_lines(path)
    with fh, pytest.raises(SessionFormatError, match=r":21: contains a NUL byte"):
        list(found)

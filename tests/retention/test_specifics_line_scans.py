"""The extractor's scans read line to line (or with a cheaper lead) and still
find exactly what the patterns they stand for find."""

from __future__ import annotations

import random

from kimi_compact_tui.specifics.patterns import EXC_RE, exception_lines

PIECES = (
    "\n", "\n\n", " ", "\t", "E ", "E\n", "E", ":", ": ", "ValueError", "Error", "ERROR",
    "error", "fatal", "panic", "pkg.mod.KeyError", "Warning", "InvalidArg", "x", "msg",
    "Traceback (most recent call last):", "  File \"a.py\", line 3", "é", "错误", "\r",
)  # fmt: skip


def test_exception_lines_are_what_the_line_pattern_finds():
    rng = random.Random(31)
    for _ in range(20_000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 14)))
        want = [m.groups() for m in EXC_RE.finditer(text)]
        assert exception_lines(text) == want, repr(text)


def test_exception_lines_at_the_start_and_after_newlines():
    text = "ValueError: bad\nnot one: ValueError\nE   KeyError: 'k'\n\nfatal\npanic: boom"
    assert exception_lines(text) == [
        ("ValueError", "bad"),
        ("KeyError", "'k'"),
        ("fatal", None),
        ("panic", "boom"),
    ]

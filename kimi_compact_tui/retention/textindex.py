"""Where a needle occurs in a long text, found from an index of the text's
tokens instead of a scan of the whole text per needle.

A text whose separators are spaces and line breaks (a normalised summary, a
command's flat form) is indexed once: each token (a maximal run of other
characters) → its offsets. A needle with a token between two separators of
its own (an *interior* token) can only occur where that token stands whole in
the text, so only the offsets of its rarest interior token are checked. A
needle without one (one or two words) is searched the plain way. The answers
are exactly those of ``str.find``; only the cost differs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_TOKEN_RE = re.compile(r"[^ \n]+")
#: A shorter text is scanned: indexing it costs more than the scans it saves.
INDEX_MIN_CHARS = 4096
#: A needle whose rarest interior token stands more often than this is scanned.
SCAN_OVER = 1000
_SPLIT_RE = re.compile(r"[ \n]")


class TokenIndex:
    """The offsets of every token of ``text``, built on first use."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._where: dict[str, list[int]] | None = None
        self._contains: dict[str, bool] = {}

    @property
    def where(self) -> dict[str, list[int]]:
        if self._where is None:
            where: dict[str, list[int]] = {}
            for m in _TOKEN_RE.finditer(self.text):
                where.setdefault(m.group(0), []).append(m.start())
            self._where = where
        return self._where

    def _anchor(self, needle: str) -> tuple[str, int] | None:
        """The needle's rarest interior token and its offset in the needle,
        or None when it has no interior token."""
        bounds = [m.start() for m in _SPLIT_RE.finditer(needle)]
        if len(bounds) < 2:
            return None
        where = self.where
        best: tuple[str, int] | None = None
        best_count = -1
        for a, b in zip(bounds, bounds[1:], strict=False):
            if b - a < 2:
                continue  # two separators in a row: no token between them
            token = needle[a + 1 : b]
            count = len(where.get(token, ()))
            if best is None or count < best_count:
                best, best_count = (token, a + 1), count
                if not count:
                    break
        return best

    def find_all(self, needle: str) -> Iterator[int]:
        """Every offset of ``needle`` in the text, ascending (as repeated
        ``str.find`` from one past the last would give them)."""
        text = self.text
        if not needle:
            return iter(range(len(text) + 1))
        anchor = self._anchor(needle) if len(text) >= INDEX_MIN_CHARS else None
        if anchor is None:
            return _scan(text, needle)
        token, offset = anchor
        if len(self.where.get(token, ())) > SCAN_OVER:
            return _scan(text, needle)
        found = (
            p - offset
            for p in self.where.get(token, ())
            if p >= offset and text.startswith(needle, p - offset)
        )
        return iter(sorted(found))

    def contains(self, needle: str) -> bool:
        """``needle in text``, remembered per needle."""
        got = self._contains.get(needle)
        if got is None:
            if len(self.text) < INDEX_MIN_CHARS:
                got = needle in self.text
            else:
                got = next(self.find_all(needle), -1) >= 0
            self._contains[needle] = got
        return got


def _scan(text: str, needle: str) -> Iterator[int]:
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)

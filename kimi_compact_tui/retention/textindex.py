"""Where a needle occurs in a long text, found from an index of the text's
tokens instead of a scan of the whole text per needle.

A text whose separators are spaces and line breaks (a normalised summary, a
command's flat form) is indexed once: each token (a maximal run of other
characters) → its offsets. A needle with a token between two separators of
its own (an *interior* token) can only occur where that token stands whole in
the text, so only the offsets of its rarest interior token are checked. When even that token
stands too often (a small vocabulary), two interior tokens in a row can only
occur where the text has them as consecutive tokens, so the offsets of the
rarest such pair are checked (the pairs are indexed on first need). A needle
without an interior token (one or two words) is searched the plain way. The
answers are exactly those of ``str.find``; only the cost differs.
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
        self._pairs: dict[tuple[str, str], list[int]] | None = None
        self._contains: dict[str, bool] = {}

    @property
    def where(self) -> dict[str, list[int]]:
        if self._where is None:
            where: dict[str, list[int]] = {}
            get = where.get
            for token, at in _tokens(self.text):
                got = get(token)
                if got is None:
                    where[token] = [at]
                else:
                    got.append(at)
            self._where = where
        return self._where

    @property
    def pairs(self) -> dict[tuple[str, str], list[int]]:
        """(a token, the next token) -> the offsets of the first."""
        if self._pairs is None:
            pairs: dict[tuple[str, str], list[int]] = {}
            last, last_at = "", -1
            for token, at in _tokens(self.text):
                if last_at >= 0:
                    pairs.setdefault((last, token), []).append(last_at)
                last, last_at = token, at
            self._pairs = pairs
        return self._pairs

    def _pair_anchor(self, needle: str) -> tuple[list[int], int] | None:
        """The offsets of the needle's rarest pair of consecutive interior
        tokens in the text, and the first one's offset in the needle; None
        when it has no such pair."""
        inner = _interior(needle)
        if len(inner) < 2:
            return None
        pairs = self.pairs
        best: tuple[list[int], int] | None = None
        for (a, at), (b, _) in zip(inner, inner[1:], strict=False):
            found = pairs.get((a, b), [])
            if best is None or len(found) < len(best[0]):
                best = (found, at)
                if not found:
                    break
        return best

    def _anchor(self, needle: str) -> tuple[str, int] | None:
        """The needle's rarest interior token and its offset in the needle,
        or None when it has no interior token."""
        pieces = _SPLIT_RE.split(needle)
        if len(pieces) < 3:
            return None
        get = self.where.get
        best: tuple[str, int] | None = None
        best_count = -1
        at = len(pieces[0]) + 1
        for token in pieces[1:-1]:
            if token:  # two separators in a row: no token between them
                count = len(get(token, ()))
                if best is None or count < best_count:
                    best, best_count = (token, at), count
                    if not count:
                        break
            at += len(token) + 1
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
        offsets = self.where.get(token, [])
        if len(offsets) > SCAN_OVER:
            pair = self._pair_anchor(needle)
            if pair is None or len(pair[0]) > SCAN_OVER:
                return _scan(text, needle)
            offsets, offset = pair
        # the offsets are ascending, so the answers are: each checked when asked for
        return (p - offset for p in offsets if p >= offset and text.startswith(needle, p - offset))

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


def _interior(needle: str) -> list[tuple[str, int]]:
    """The needle's interior tokens (each between two separators of its own)
    and their offsets."""
    pieces = _SPLIT_RE.split(needle)
    out: list[tuple[str, int]] = []
    at = len(pieces[0]) + 1
    for token in pieces[1:-1]:
        if token:
            out.append((token, at))
        at += len(token) + 1
    return out


def _tokens(text: str) -> Iterator[tuple[str, int]]:
    """Each token of ``text`` and its offset, in order (what ``_TOKEN_RE``
    finds: the pieces between spaces and line breaks that are not empty),
    split by ``str.split`` rather than matched one by one."""
    at = 0
    for line in text.split("\n"):
        for token in line.split(" "):
            if token:
                yield token, at
            at += len(token) + 1


def _scan(text: str, needle: str) -> Iterator[int]:
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


#: The characters of a path-like name: a letter or digit (``str.isalnum``), ``_``, ``-``, ``.``, ``/``.
_NAME_RUN_RE = re.compile(r"[\w\-./]+")
#: A run with more separators than this is scanned, not indexed (its names would be many).
RUN_MAX_SEPARATORS = 48


class BoundedIndex:
    """Where a path-like name stands on its own in a text, as
    :func:`kimi_compact_tui.retention.matching._bounded` reads it with
    ``before`` ``".-"`` (a ``/`` may come right before it) or ``".-/"`` (none
    may) and ``after`` ``"-"``: not inside a longer name, a ``.`` or ``/``
    allowed right after it. Such a name lies within one run of name
    characters, starts at the run's start (or after one of its ``/``) and ends
    at the run's end (or before one of its ``.`` or ``/``), so every such piece
    of every run is kept in a set, built once."""

    def __init__(self, text: str) -> None:
        after_slash: set[str] = set()  # pieces that start at a run's start or after a "/"
        at_start: set[str] = set()  # pieces that start at a run's start
        odd: set[str] = set()  # runs with too many separators
        plain: set[str] = set()  # runs without a "." or "/": each is its only piece
        runs = _NAME_RUN_RE.findall(text)
        for run in dict.fromkeys(runs):  # each distinct run once: the pieces are sets
            if "." not in run and "/" not in run:
                plain.add(run)
                continue
            cuts = [i for i, ch in enumerate(run) if ch in "./"]
            if len(cuts) > RUN_MAX_SEPARATORS:
                odd.add(run)
                continue
            ends = [*cuts, len(run)]
            starts = [0] + [i + 1 for i in cuts if run[i] == "/" and i + 1 < len(run)]
            for e in ends:
                if e:
                    at_start.add(run[:e])
            for s in starts:
                for e in ends:
                    if e > s:
                        after_slash.add(run[s:e])
        self.after_slash = after_slash | plain
        self.at_start = at_start | plain
        self.odd = " ".join(run for run in runs if run in odd) if odd else ""

    @staticmethod
    def handles(needle: str, before: str, after: str) -> bool:
        """Does the index answer for this needle and these bounds?"""
        return (
            after == "-" and before in (".-", ".-/") and _NAME_RUN_RE.fullmatch(needle) is not None
        )

    def bounded(self, needle: str, before: str) -> bool | None:
        """True/False when the index holds the answer; None when the runs it
        did not index must be scanned (:attr:`odd`)."""
        pieces = self.at_start if "/" in before else self.after_slash
        if needle in pieces:
            return True
        return False if not self.odd else None

"""Retention speed, round 3 (issue 31): what the report leaves out or reorders
gives the same answers.

- ``extract(..., reads=READS)``, as the report calls it, leaves out the
  collectors whose items the report never reads (the decisions, the findings)
  and yields every kind it reads exactly as the full extraction does;
- in a window, the paraphrase rule is tried before the character alignment:
  the window keeps the request exactly when it did with the alignment first.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

from rapidfuzz import fuzz

from benchmarks.generate import generate_messages, write_kimi
from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.model import Message
from kimi_compact_tui.retention.matching import Haystack
from kimi_compact_tui.retention.passage import (
    ALIGN_MAX_CHARS,
    ALIGNED,
    Passages,
    Request,
    _negated_before,
    _negation_kept,
    _numbers_kept,
    _paraphrase,
    _window_keeps,
)
from kimi_compact_tui.retention.report import READS
from kimi_compact_tui.retention.textindex import _TOKEN_RE, INDEX_MIN_CHARS, TokenIndex, _tokens
from kimi_compact_tui.specifics import Vocabulary, extract, kinds
from kimi_compact_tui.specifics.items import Specifics

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "sample_sessions").iterdir())


def _items(specifics: Specifics, kind: str) -> list[tuple[object, ...]]:
    return [
        (i.key, i.text, i.status, tuple(i.messages), i.weight, tuple(i.extra))
        for i in specifics.of(kind)
    ]


def _same_read(messages: list[Message], indices: list[int], vocabulary: Vocabulary) -> Specifics:
    full = extract(messages, indices, vocabulary)
    part = extract(messages, indices, vocabulary, reads=READS)
    for kind in (*READS, kinds.OPEN_TASKS):
        assert _items(part, kind) == _items(full, kind), kind
    assert (part.root, part.plan_message) == (full.root, full.plan_message)
    assert part.of(kinds.DECISIONS) == [] and part.findings == []
    return full


def test_reads_yields_what_the_report_reads_on_the_samples() -> None:
    skipped = 0
    for path in SAMPLES:
        session = load_session(path)
        plan = make_plan(session.messages)
        full = _same_read(session.messages, list(plan.compact_indices), session.format.vocabulary())
        skipped += len(full.of(kinds.DECISIONS)) + len(full.findings)
    assert skipped  # the samples have decisions or findings to leave out


def test_reads_yields_what_the_report_reads_on_a_generated_range(tmp_path: Path) -> None:
    path = tmp_path / "generated.jsonl"
    write_kimi(path, generate_messages(600))
    session = load_session(path)
    plan = make_plan(session.messages)
    full = _same_read(session.messages, list(plan.compact_indices), session.format.vocabulary())
    assert full.findings


def _alignment_first(
    request: Request,
    hay: Passages,
    window: list[tuple[int, int]],
    weights: list[float],
    need: float,
    aligned: list[tuple[int, int]],
) -> bool:
    """The window check as it was: rule 2 (the alignment), then rule 3."""
    seq = hay.sequence
    start = seq[window[0][0]].start
    end = seq[window[-1][0]].start + len(seq[window[-1][0]].key)
    lo, hi = hay.part_span(start)
    r_lo, r_hi = max(lo, start - len(request.norm)), min(hi, end + len(request.norm))
    if len(request.norm) <= ALIGN_MAX_CHARS and not any(
        a <= start and end <= b for a, b in aligned
    ):
        aligned.append((r_lo, r_hi))
        region = hay.joined[r_lo:r_hi]
        found = fuzz.partial_ratio_alignment(request.norm, region, score_cutoff=ALIGNED)
        if found is not None:
            exact = region[found.dest_start : found.dest_end]
            if (
                _numbers_kept(request, exact)
                and _negation_kept(request, exact)
                and (request.negated or not _negated_before(region, found.dest_start))
            ):
                return True
    return _paraphrase(request, hay, window, weights, need, start, end, lo, hi)


WORDS = (
    "parser cache token stream summary index region backup folder module never "
    "not 42 v2.1 run tests fix the retry loop"
).split()


def test_paraphrase_first_answers_as_alignment_first() -> None:
    rng = random.Random(31)
    both = {True: 0, False: 0}
    for _ in range(400):
        words = [rng.choice(WORDS) for _ in range(rng.randrange(3, 12))]
        request = Request.of(" ".join(words) + ".")
        if not request.keys:
            continue
        text = list(words)
        for _ in range(rng.randrange(0, 4)):  # edits: a word dropped, swapped or added
            at = rng.randrange(len(text))
            op = rng.randrange(3)
            if op == 0 and len(text) > 1:
                del text[at]
            elif op == 1:
                text[at] = rng.choice(WORDS)
            else:
                text.insert(at, rng.choice(WORDS))
        filler = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 8)))
        hay = Passages([f"{filler}. {' '.join(text)}. {filler}"])
        weights = request.weights
        need = 0.7 * sum(weights)
        term_of = {k: n for n, k in enumerate(request.keys) if k in hay.where}
        hits = sorted((i, n) for k, n in term_of.items() for i in hay.where[k])
        for a in range(0, len(hits), 3):
            window = hits[a : a + rng.randrange(1, len(hits) + 1)]
            if not window:
                continue
            new, old = _window_keeps(request, hay, window, weights, need, []), _alignment_first(
                request, hay, window, weights, need, []
            )
            assert new == old, (request.text, hay.joined, window)
            both[new] += 1
    assert both[True] > 50 and both[False] > 50


def test_word_character_is_isalnum_or_underscore() -> None:
    """``\\w`` (what :attr:`Haystack.word_runs` splits on) is exactly the test
    :meth:`Haystack.word_starts` makes around a word, on every code point."""
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000)
    by_regex = set(re.findall(r"\w", every))
    by_test = {ch for ch in every if ch.isalnum() or ch == "_"}
    assert by_regex == by_test


def _plain_word_starts(flat: str, word: str) -> list[int]:
    got = []
    at = flat.find(word)
    while at >= 0:
        stop = at + len(word)
        before = flat[at - 1] if at else " "
        after = flat[stop] if stop < len(flat) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            got.append(at)
        at = flat.find(word, at + 1)
    return got


def test_word_starts_from_the_runs_as_by_scanning() -> None:
    rng = random.Random(7)
    pieces = ["pytest", "tests", "test_parse", "py", "é", "x2", "٣", "ß", "git", "_", "-q"]
    glue = [" ", "/", ".", "-", "_", "", ":", "(", "'", "\u00a0", "é"]
    text = "".join(rng.choice(pieces) + rng.choice(glue) for _ in range(4000))
    hay = Haystack(text)
    assert len(hay.flat) >= INDEX_MIN_CHARS
    words = {*pieces, "test", "parse", "pytest/tests", "a", "x2é", "tests/test_parse.py"}
    for word in sorted(words):
        assert hay.word_starts(word) == _plain_word_starts(hay.flat, word), word
    assert hay.word_runs  # the runs answered the word-only ones


def test_tokens_split_as_the_token_pattern_finds_them() -> None:
    rng = random.Random(5)
    alphabet = ["a", "bc", " ", "  ", "\n", "\n\n", "\t", "é", "-", "\r", "\u00a0", "日"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        want = [(m.group(0), m.start()) for m in _TOKEN_RE.finditer(text)]
        assert list(_tokens(text)) == want, repr(text)
    text = "".join(rng.choice(alphabet) for _ in range(6000))
    index = TokenIndex(text)
    for token, offsets in index.where.items():
        assert offsets == [m.start() for m in _TOKEN_RE.finditer(text) if m.group(0) == token]
    found = [(m.group(0), m.start()) for m in _TOKEN_RE.finditer(text)]
    pairs: dict[tuple[str, str], list[int]] = {}
    for (first, at), (second, _) in zip(found, found[1:], strict=False):
        pairs.setdefault((first, second), []).append(at)
    assert index.pairs == pairs
    for needle in ["a bc", "bc a bc", "é\na", "a  bc", "日 a"]:
        assert list(index.find_all(needle)) == [
            m.start() for m in re.finditer(f"(?={re.escape(needle)})", text)
        ]


def _anchor_by_offsets(index: TokenIndex, needle: str) -> tuple[str, int] | None:
    """The rarest interior token as it was found before round 3 (separator offsets)."""
    bounds = [m.start() for m in re.finditer(r"[ \n]", needle)]
    best: tuple[str, int] | None = None
    best_count = -1
    for a, b in zip(bounds, bounds[1:], strict=False):
        if b - a < 2:
            continue
        count = len(index.where.get(needle[a + 1 : b], ()))
        if best is None or count < best_count:
            best, best_count = (needle[a + 1 : b], a + 1), count
            if not count:
                break
    return best


def _pair_by_offsets(index: TokenIndex, needle: str) -> tuple[list[int], int] | None:
    bounds = [m.start() for m in re.finditer(r"[ \n]", needle)]
    inner = [(a + 1, b) for a, b in zip(bounds, bounds[1:], strict=False) if b - a >= 2]
    if len(inner) < 2:
        return None
    best: tuple[list[int], int] | None = None
    for (a, b), (c, d) in zip(inner, inner[1:], strict=False):
        found = index.pairs.get((needle[a:b], needle[c:d]), [])
        if best is None or len(found) < len(best[0]):
            best = (found, a)
            if not found:
                break
    return best


def test_anchors_split_as_by_separator_offsets() -> None:
    rng = random.Random(11)
    alphabet = ["a", "bc", "d", " ", "  ", "\n", "é", "x y"]
    text = "".join(rng.choice(alphabet) for _ in range(8000))
    index = TokenIndex(text)
    for _ in range(2000):
        needle = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 14)))
        assert index._anchor(needle) == _anchor_by_offsets(index, needle), repr(needle)
        assert index._pair_anchor(needle) == _pair_by_offsets(index, needle), repr(needle)

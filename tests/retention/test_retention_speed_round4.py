"""Round 4 of issue 31's retention speed work: each fast path of request
matching is checked against the plain way it replaced, on random inputs, so a
later change cannot make them disagree (the verdicts must not move)."""

from __future__ import annotations

import unicodedata
from bisect import bisect_right

from hypothesis import given, settings
from hypothesis import strategies as st

from kimi_compact_tui.retention.passage import (
    CLAUSE_RE,
    COVERAGE,
    SHORT_TERMS,
    Passages,
    Request,
    _may_reach,
    terms,
)

# words (weight 1), words sharing a five-letter stem or a typo away (several
# text terms for one request term), numbers and paths (3), CJK characters (0.5),
# negations, clause cuts inside and between terms, Japanese inflection
PIECES = [
    "verify",
    "verification",
    "verifed",
    "cache",
    "token",
    "stream",
    "parser",
    "backup",
    "and",
    "but",
    "then",
    "stand-and-deliver",
    "and-deliver",
    "but-first",
    "don't",
    "not",
    "never",
    "42",
    "3.5",
    "src/a.py",
    "缓存",
    "测试",
    "不",
    "没",
    "的",
    "しない",
    "ません",
    "触らない",
    ",",
    ".",
    ";",
    ":",
    "!",
    "?",
    " - ",
    "—",
    "\n",
    "。",
    "，",
]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map(" ".join)
glued = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def plain_parsed(text: str) -> tuple[list[list[str]], bool]:
    """The content terms by clause and the negation, read from :func:`terms`
    with a search per term (the way before round 4)."""
    low = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    cuts = [m.start() for m in CLAUSE_RE.finditer(low)]
    by_clause: dict[int, list[str]] = {}
    negated = False
    for t in terms(low):
        if t.negation:
            negated = True
        else:
            by_clause.setdefault(bisect_right(cuts, t.start), []).append(t.key)
    return [by_clause[n] for n in sorted(by_clause)], negated


@settings(max_examples=400, deadline=None)
@given(st.one_of(texts, glued))
def test_the_clauses_are_those_of_the_plain_reading(text: str) -> None:
    assert Request(text)._parsed == plain_parsed(text)


def plain_best(request: Request, hay: Passages, term_of: dict[str, int]) -> float:
    """The most weight of the request's terms in any ``ends + 1`` consecutive
    sentences, counted sentence by sentence."""
    by_sentence: dict[int, set[int]] = {}
    for other, n in term_of.items():
        for i in hay.where[other]:
            by_sentence.setdefault(hay.sentence[i], set()).add(n)
    best = 0.0
    for s in by_sentence:
        got: set[int] = set()
        for j in range(s, s + request.ends + 1):
            got |= by_sentence.get(j, set())
        best = max(best, sum(request.weights[n] for n in got))
    return best


SENTENCE_WORDS = [p for p in PIECES if p not in (",", ";", ":", " - ", "—", "，")]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(SENTENCE_WORDS), min_size=1, max_size=8).map(" ".join),
        min_size=1,
        max_size=30,
    ),
    texts,
)
def test_the_sentence_precheck_is_the_plain_count(sentences: list[str], text: str) -> None:
    """The carry-save sum of the terms' sentence masks (and the spread masks
    kept per term) says what a count sentence by sentence says, for every
    weight a term can have and several text terms standing for one."""
    hay = Passages([". ".join(sentences) + "."])
    if not hay.sequence:
        return
    request = Request.of(text)
    if not request.keys:
        return
    term_of: dict[str, int] = {}
    for n, key in enumerate(request.keys):
        for other in hay.same(key):
            term_of.setdefault(other, n)
    if not term_of:
        return
    total = sum(request.weights)
    coverage = total - 1e-9 if len(request.keys) <= SHORT_TERMS else COVERAGE * total
    best = plain_best(request, hay, term_of)
    for need in (coverage, 0.5, 1.0, best, best + 0.5):
        # twice: the second answer comes from the kept spread masks
        for _ in range(2):
            got = _may_reach(request, hay, term_of, request.weights, need)
            assert got == (best >= need or need <= 0), (sentences, text, need)

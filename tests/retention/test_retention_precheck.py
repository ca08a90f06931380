"""The sentence pre-check of request matching (issue 31's speed work) is an
upper bound: it says "cannot be kept" only when no run of sentences holds
enough of the request's terms, checked against a plain count."""

from __future__ import annotations

import random

from kimi_compact_tui.retention.passage import (
    COVERAGE,
    Passages,
    Request,
    _may_reach,
    _spread,
    kept,
)

WORDS = "parser cache token stream summary index region backup folder module".split()


def sentences_text(rng: random.Random, n: int) -> str:
    return " ".join(
        " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 6))) + "." for _ in range(n)
    )


def plain_best(request: Request, hay: Passages, term_of: dict[str, int]) -> float:
    """The most weight of the request's terms in any ``ends + 1`` consecutive sentences."""
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


def test_the_precheck_agrees_with_a_plain_count() -> None:
    rng = random.Random(7)
    checked = rejected = 0
    for _ in range(300):
        hay = Passages([sentences_text(rng, rng.randrange(1, 40))])
        words = [rng.choice(WORDS) for _ in range(rng.randrange(2, 9))]
        text = " ".join(words[: len(words) // 2]) + ". " + " ".join(words[len(words) // 2 :])
        request = Request.of(text)
        term_of = {k: n for n, k in enumerate(request.keys) if k in hay.where}
        if not term_of:
            continue
        total = sum(request.weights)
        for need in (total - 1e-9, COVERAGE * total, 1.0):
            reach = _may_reach(request, hay, term_of, request.weights, need)
            assert reach == (plain_best(request, hay, term_of) >= need), (text, need)
            checked += 1
            rejected += not reach
    assert checked > 300 and rejected > 20  # both answers were exercised


def test_a_request_in_one_sentence_is_still_kept() -> None:
    hay = Passages(["backup folder first. then rotate the cache token stream index nightly."])
    assert kept(Request.of("rotate the cache token stream index nightly"), hay)
    assert not kept(Request.of("rotate the parser module region summary"), hay)


def test_the_spread_is_the_or_of_the_shifts() -> None:
    rng = random.Random(3)
    for _ in range(400):
        mask = rng.getrandbits(rng.randrange(1, 300))
        width = rng.randrange(1, 40)
        plain = 0
        for j in range(width):
            plain |= mask >> j
        assert _spread(mask, width) == plain

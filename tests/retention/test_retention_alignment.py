"""The alignment of a request's terms against a long text (issue 31's speed
work, round 2) is rapidfuzz's own, on the text's term string: the narrow form
(one byte a term, every term the request lacks folded into one character) and
the answer kept per term string give the same start and end as aligning the
full term string, ties included, for the first search and for the second (the
first one's span hidden)."""

from __future__ import annotations

import random

from rapidfuzz import fuzz

from kimi_compact_tui.retention.passage import (
    ABSENT,
    ALIGN_CUTOFF,
    NARROW,
    NARROW_MIN,
    PART_BREAK,
    Passages,
    Request,
    _align,
    kept,
    terms,
)

# A small vocabulary, as in the generated sessions: many windows score alike.
COMMON = (
    "parser cache token stream summary index region backup folder module socket queue "
    "payload record schema header buffer rotate checkpoint session entry message".split()
)


def rare_word(rng: random.Random) -> str:
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(7))


def long_text(rng: random.Random, rare: list[str]) -> str:
    out = []
    for _ in range(900):
        words = [rng.choice(COMMON) for _ in range(rng.randrange(3, 12))]
        if rng.random() < 0.5:
            words.insert(rng.randrange(len(words)), rng.choice(rare))
        out.append(" ".join(words) + ".")
    return " ".join(out)


def code(hay: Passages, word: str) -> str:
    return hay.code_of[terms(word)[0].key]


def plain(hay: Passages, wanted: str, hidden: tuple[int, int]) -> tuple[int, int] | None:
    """rapidfuzz on the full term string, the hidden span as the matcher hid it before."""
    codes = hay.codes
    start, end = hidden
    if end > start:
        codes = codes[:start] + ABSENT * (end - start) + codes[end:]
    best = fuzz.partial_ratio_alignment(wanted, codes, score_cutoff=ALIGN_CUTOFF)
    return None if best is None else (best.dest_start, best.dest_end)


def test_the_narrow_alignment_is_rapidfuzz_on_the_full_term_string() -> None:
    rng = random.Random(31)
    rare = [rare_word(rng) for _ in range(400)]
    hay = Passages([long_text(rng, rare)])
    rare = [w for w in rare if terms(w)[0].key in hay.code_of]
    assert len(hay.codes) >= NARROW_MIN
    assert len(hay.code_of) > NARROW  # some terms have no narrow character
    table, narrow = hay.narrow
    rare = [w for w in rare if code(hay, w) not in table]  # no narrow character
    assert rare
    assert len(narrow) == len(hay.codes) and max(narrow) <= "\xff"
    narrowed = wide = found = second = 0
    for _ in range(160):
        size = rng.randrange(2, 30)
        keys = [rng.choice(COMMON) for _ in range(size)]
        if rng.random() < 0.3:
            keys[rng.randrange(size)] = rng.choice(rare)
        chars = [code(hay, k) for k in dict.fromkeys(keys)]
        if rng.random() < 0.3:
            chars.insert(rng.randrange(len(chars)), ABSENT)
        wanted = "".join(chars)
        if all(ch in table or ch == ABSENT for ch in wanted):
            narrowed += 1
        else:
            wide += 1
        first = _align(hay, wanted, (0, 0))
        assert first == plain(hay, wanted, (0, 0)), wanted
        if first is None:
            continue
        found += 1
        after = _align(hay, wanted, first)
        assert after == plain(hay, wanted, first), wanted
        second += after is not None
        assert hay.alignments[(wanted, *first)] == after  # answered once
    assert narrowed > 50 and wide > 10 and found > 50 and second > 20


def test_a_part_break_never_matches_in_the_narrow_form() -> None:
    rng = random.Random(5)
    parts = [long_text(rng, ["zzyzx"])[:30000] for _ in range(4)]
    hay = Passages(parts)
    assert PART_BREAK in hay.codes and len(hay.codes) >= NARROW_MIN
    for _ in range(40):
        wanted = "".join(code(hay, k) for k in rng.sample(COMMON, 6))
        assert _align(hay, wanted, (0, 0)) == plain(hay, wanted, (0, 0))


def test_requests_against_a_long_text_keep_their_verdicts() -> None:
    """kept() through the narrow alignment agrees with a request written into
    the text (kept) and a request of shuffled terms (lost)."""
    rng = random.Random(8)
    body = long_text(rng, [rare_word(rng) for _ in range(50)])
    request = "Please rotate the checkpoint backup before the session header is written"
    hay = Passages([body[: len(body) // 2] + " " + request.lower() + ". " + body[len(body) // 2 :]])
    assert len(hay.codes) >= NARROW_MIN
    assert kept(Request.of("rotate the checkpoint backup before the sesion header is writen"), hay)
    lost = "header written rotate before session checkpoint backup"
    assert not kept(Request.of(lost), hay)

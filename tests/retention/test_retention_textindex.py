"""The token index answers exactly as ``str.find`` does (issue 31's speed work:
the retention verdicts must not change)."""

from __future__ import annotations

import random

from kimi_compact_tui.retention.textindex import INDEX_MIN_CHARS, TokenIndex

WORDS = "run the tests fix it parser cache a b tests/test_x.py -k pass, fail. 完成".split()


def scanned(text: str, needle: str) -> list[int]:
    out, at = [], text.find(needle)
    while at >= 0:
        out.append(at)
        at = text.find(needle, at + 1)
    return out


def random_text(rng: random.Random, words: int) -> str:
    seps = [" ", " ", " ", "\n", "  ", " \n"]
    return "".join(rng.choice(WORDS) + rng.choice(seps) for _ in range(words))


def test_find_all_and_contains_match_str_find_on_long_texts() -> None:
    rng = random.Random(31)
    text = random_text(rng, 3000)
    assert len(text) >= INDEX_MIN_CHARS  # the index is used, not the scan
    index = TokenIndex(text)
    needles = [
        text[a : a + n]
        for a, n in ((rng.randrange(len(text)), rng.randrange(1, 40)) for _ in range(400))
    ]
    needles += [random_text(rng, rng.randrange(1, 6)).strip() for _ in range(400)]
    needles += [
        "",
        " ",
        "\n",
        "tests fix",
        "the the the",
        "parser cache a b",
        "nowhere at all here",
    ]
    for needle in needles:
        assert list(index.find_all(needle)) == scanned(text, needle), repr(needle)
        assert index.contains(needle) == (needle in text), repr(needle)


def test_a_needle_made_of_one_interior_token_is_found_only_where_it_stands_whole() -> None:
    text = ("xrun the tests nowx " * 400) + "a run the tests now b"
    index = TokenIndex(text)
    assert list(index.find_all("run the tests now")) == scanned(text, "run the tests now")
    assert list(index.find_all(" the ")) == scanned(text, " the ")
    assert index.contains("run the testsx") is False


def test_short_texts_are_scanned_with_the_same_answers() -> None:
    text = "run the tests\nthen fix the parser"
    index = TokenIndex(text)
    for needle in ("the", "run the tests", "tests\nthen fix", "fix the parser!", ""):
        assert list(index.find_all(needle)) == scanned(text, needle)
        assert index.contains(needle) == (needle in text)


def test_the_bounded_index_answers_as_the_scan_does() -> None:
    from kimi_compact_tui.retention.matching import Haystack, _bounded, _bounded_in
    from kimi_compact_tui.retention.textindex import RUN_MAX_SEPARATORS

    rng = random.Random(5)
    parts = ["src", "app", "a", "b.py", "main.py", "x-y", "tests", "_z", "v1.2", "é", "."]
    joins = ["/", "/", ".", "-", " ", "\n", "(", "`", ", ", ""]

    def piece(n: int) -> str:
        return "".join(rng.choice(parts) + rng.choice(joins) for _ in range(n))

    odd = "/".join(["d"] * (RUN_MAX_SEPARATORS + 5)) + "/deep.py"
    for text in (piece(400), piece(400) + " " + odd + " " + piece(50)):
        hay = Haystack(text)
        needles = [piece(rng.randrange(1, 4)).strip(" \n(`,") for _ in range(600)]
        needles += ["deep.py", "d/deep.py", "src/main.py", "main.py", "b.py", ""]
        for needle in needles:
            for before in (".-", ".-/"):
                want = _bounded(hay.lower, needle, before, "-")
                assert _bounded_in(hay, needle, before, "-") == want, (needle, before)


def test_misstatement_from_the_probe_lines_answers_as_the_line_by_line_pass() -> None:
    """The lookup of a misstatement on the lines that hold its probe (issue 31's
    speed work) reads the same headings as the pass over every line."""
    from kimi_compact_tui.retention.matching import (
        Haystack,
        _check,
        _mentions,
        _misstatement_scan,
        _probe,
        _read,
    )
    from kimi_compact_tui.specifics import Item, kinds

    items = [
        Item(kinds.OPEN_TASKS, "run focused verification", "Run focused verification", [4],
             weight=8, status="pending"),
        Item(kinds.COMMANDS, "ruff check src", "ruff check src", [6], weight=6, status="exit 1"),
        Item(kinds.EDITED_FILES, "src/x.ts", "src/x.ts", [3], weight=7, status="rejected"),
    ]  # fmt: skip
    lines = [
        "## Completed",
        "## Open",
        "<completed_tasks>",
        "</completed_tasks>",
        "Done:",
        "- Run focused verification",
        "- Run focused verification: done",
        "- Run focused verification (still open)",
        "## Run focused verification",
        "- ran ruff check src: passed",
        "- ruff check src failed with exit 1",
        "ruff check src:",
        "- edited src/x.ts",
        "- src/x.ts was not written (rejected)",
        "src/x.ts:",
        "- something else entirely",
        "- Run focused verification",
        "- ruff check src",
        "- src/x.ts",
        "",
    ]
    rng = random.Random(11)
    compared = 0
    texts = [
        "## Completed\n## Run focused verification\n- Run focused verification",
        "Done:\nruff check src:\n- ruff check src",
        "## Completed\nsrc/x.ts:\n</completed_tasks>\n- src/x.ts",
    ]
    texts += ["\n".join(rng.choice(lines) for _ in range(rng.randrange(1, 14))) for _ in range(600)]
    for text in texts:
        hay = Haystack(text)
        for item in items:
            check = _check(item)
            assert check is not None
            want = _misstatement_scan(item, hay, check[0], check[1], _probe(item), _mentions)
            assert _read(item, hay, check, _probe(item), _mentions) == want, (text, item.text)
            compared += want is not None
    assert compared > 50  # misstatements were found, not only None


def test_frequent_tokens_are_looked_up_by_pairs_with_the_same_answers() -> None:
    """Every token stands more than SCAN_OVER times: a needle of two or more
    interior tokens in a row is found from the pair index, exactly as str.find."""
    from kimi_compact_tui.retention.textindex import SCAN_OVER

    rng = random.Random(9)
    words = "run the tests fix it parser cache".split()
    seps = [" ", " ", " ", "\n", "  "]
    text = "".join(rng.choice(words) + rng.choice(seps) for _ in range(30_000))
    index = TokenIndex(text)
    assert min(len(v) for v in index.where.values()) > SCAN_OVER
    needles = [
        text[a : a + n]
        for a, n in ((rng.randrange(len(text)), rng.randrange(8, 60)) for _ in range(300))
    ]
    needles += ["".join(rng.choice(words) + rng.choice(seps) for _ in range(6)) for _ in range(200)]
    needles += ["xrun the tests fix", "run the tests fixx", "the tests\n\nfix it"]
    for needle in needles:
        assert list(index.find_all(needle)) == scanned(text, needle), repr(needle)
    assert index._pairs is not None  # the pairs were used

"""A command's words in order (issue 31's speed work, round 2): following
only the first word's starts that have the rarest other word within reach
gives the same answer as following every start."""

from __future__ import annotations

import random
from bisect import bisect_left

from kimi_compact_tui.retention.matching import COMMAND_WINDOW, Haystack, match_command
from kimi_compact_tui.specifics import Item, kinds
from kimi_compact_tui.specifics.patterns import command_key

WORDS = "pytest -k -x tests/test_a.py tests/test_b.py make build run cargo test npm ci".split()
FILLER = "the ran and then it failed passed ok again later".split()


def every_start(key: str, hay: Haystack) -> bool:
    """The rule followed from every start of the first word (the scan replaced)."""
    words = [w for w in key.split() if not w.startswith("-")]
    if key in hay.flat or not words:
        return key in hay.flat
    window = max(80, COMMAND_WINDOW * len(key))
    for at in hay.word_starts(words[0]):
        pos, end = at + len(words[0]), at + len(words[0]) + window
        for word in words[1:]:
            starts = hay.word_starts(word)
            n = bisect_left(starts, pos)
            if n == len(starts) or starts[n] + len(word) > end:
                break
            pos = starts[n] + len(word)
        else:
            return True
    return False


def test_commands_in_order_match_the_scan_of_every_start() -> None:
    rng = random.Random(12)
    checked = kept = 0
    for _ in range(60):
        parts = []
        for _ in range(rng.randrange(200, 2500)):
            pool = WORDS if rng.random() < 0.3 else FILLER
            parts.append(rng.choice(pool))
        hay = Haystack(" ".join(parts))
        for _ in range(30):
            key = command_key(" ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 5))))
            item = Item(kinds.COMMANDS, key, key, [0])
            got = match_command(item, hay)
            assert got == every_start(key, hay), key
            checked += 1
            kept += got
    assert checked == 1800 and 200 < kept < 1600


def test_the_last_word_may_end_exactly_at_the_window() -> None:
    key = "make build"
    window = max(80, COMMAND_WINDOW * len(key))
    many = " make" * 40  # many starts of the first word, one of the second
    for gap, expected in ((0, True), (1, False)):
        # "build" ends ``window + gap`` characters after "make" ends
        text = "make " + "x" * (window + gap - len(" build") - 1) + " build" + many
        hay = Haystack(text)
        item = Item(kinds.COMMANDS, key, key, [0])
        assert match_command(item, hay) is expected
        assert every_start(key, hay) is expected

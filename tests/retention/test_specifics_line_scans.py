"""The extractor's scans read line to line (or with a cheaper lead) and still
find exactly what the patterns they stand for find."""

from __future__ import annotations

import random

from kimi_compact_tui.specifics.patterns import EXC_RE, exception_lines

PIECES = (
    "\n", "\n\n", " ", "\t", "E ", "E\n", "E", ":", ": ", "ValueError", "Error", "ERROR",
    "error", "fatal", "panic", "pkg.mod.KeyError", "Warning", "InvalidArg", "x", "msg",
    "Traceback (most recent call last):", "  File \"a.py\", line 3", "é", "错误", "\r",
    "   12\t", "_", "_Error", "1", "(", "É", "Ｅ",
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


def test_every_special_file_name_holds_one_of_the_hints():
    """A name added without a hint would never be looked for."""
    from kimi_compact_tui.specifics.patterns import SPECIAL_HINTS, SPECIAL_NAMES, paths_in

    for name in SPECIAL_NAMES:
        assert any(h in name for h in SPECIAL_HINTS), name
        assert paths_in(f"edit the {name} now") == [name]


def test_a_turns_finding_is_its_last_message_with_prose():
    """Only the latest of a turn's messages with prose is read for its finding:
    one that is only code leaves the one before it the finding."""
    from kimi_compact_tui.model import Message
    from kimi_compact_tui.specifics import extract

    messages = [
        Message.make("user", "Why is it slow?"),
        Message.make("assistant", "The cache  is   cold."),
        Message.make("assistant", "```\nprint(1)\n```"),
        Message.make("user", "ok, fix it"),
        Message.make("assistant", "First try."),
        Message.make("assistant", "Fixed: warmed the cache."),
    ]
    found = extract(messages, range(len(messages)))
    assert found.findings == [(1, "The cache is cold."), (5, "Fixed: warmed the cache.")]


def test_a_collector_sees_only_the_roles_it_reads():
    from kimi_compact_tui.model import Message
    from kimi_compact_tui.specifics.declare import PLAIN
    from kimi_compact_tui.specifics.walk import Collector, Seen, Walk, walk

    class Users(Collector):
        reads_tool_results = False
        roles = frozenset(("user",))

        def __init__(self) -> None:
            self.seen: list[int] = []

        def see(self, m: Seen, w: Walk) -> None:
            self.seen.append(m.index)

    class Every(Users):
        roles = None

    messages = [
        Message.make("system", "Be brief."),
        Message.make("user", "Hi"),
        Message.make("assistant", "Hello"),
        Message.make("user", "Bye"),
    ]
    users, every = Users(), Every()
    walk(messages, range(4), PLAIN, [users, every], lambda _: False)
    assert users.seen == [1, 3]
    assert every.seen == [0, 1, 2, 3]


def test_the_units_spelled_as_a_tree_find_what_the_list_of_units_finds():
    """NUMBER_RE's units as a tree of shared starts, against the pattern with
    every unit listed longest first (as it was), on random pieces of figures."""
    import re

    from kimi_compact_tui.specifics.patterns import NUMBER_RE, UNITS, numbers_in

    every = "|".join(sorted((re.escape(u) for u in UNITS), key=len, reverse=True))
    listed = re.compile(
        r"([0-9](?<![\w.\-/:,][0-9])[0-9]*+(?:,[0-9]{3}(?![0-9]))*+)"
        r"(?:(\.[0-9]+\.[0-9]+(?:[-+][\w.]+)?)(?![\w.]*\w)"
        rf"|(\.[0-9]++)?+[ \t]?(?=[a-z%µ\u4e00-\u9fff])({every})(?![\w/]))"
    )
    pieces = [
        *UNITS, *(u[:-1] for u in UNITS), *(u + "x" for u in UNITS),
        "1", "12", "2.5", "1,000", "10,00", " ", "\t", "  ", "v", ".", ",", "-", "/", "_",
        "a", "1.2.3", "+b", "\n", "(", ":", "é", "分", "9",
    ]  # fmt: skip
    rng = random.Random(3)
    for _ in range(60_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 10)))
        want = [(m.span(), m.groups()) for m in listed.finditer(text)]
        assert [(m.span(), m.groups()) for m in NUMBER_RE.finditer(text)] == want, repr(text)
    assert [k for k, _ in numbers_in("took 1.5 ms, 3 min and 200,000 tokens; 2 mins")] == [
        "1.5ms",
        "3min",
        "200000tokens",
        "2min",
    ]

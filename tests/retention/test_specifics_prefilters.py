"""The extractor's shortcuts (substring hints before a pattern's scan, tool results
handed only to the collectors that read them) give what the full scans give."""

from __future__ import annotations

import re

import pytest

from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics import extract
from kimi_compact_tui.specifics.collect import (
    DECISION_HINTS,
    DECISION_RE,
    RULE_HINTS,
    RULE_RE,
    has_word,
)
from kimi_compact_tui.specifics.declare import PLAIN
from kimi_compact_tui.specifics.walk import Collector, Seen, Walk, walk


def alternatives(pattern: re.Pattern[str]) -> list[str]:
    """The literal phrases a word pattern's alternation lists (``-?`` both ways)."""
    source = pattern.pattern.replace("(?:", "").replace(")\\b", "")
    out = []
    for alt in source.split("|"):
        if "-?" in alt:
            out += [alt.replace("-?", "-"), alt.replace("-?", "")]
        else:
            out.append(alt)
    return out


@pytest.mark.parametrize(
    ("pattern", "hints"), [(RULE_RE, RULE_HINTS), (DECISION_RE, DECISION_HINTS)]
)
def test_every_phrase_of_a_pattern_holds_one_of_its_hints(pattern, hints):
    """A phrase added to the pattern without a hint would be skipped unread."""
    phrases = alternatives(pattern)
    assert len(phrases) >= 10
    for phrase in phrases:
        assert pattern.fullmatch(phrase), phrase  # the phrases are read right
        assert any(h in phrase for h in hints), phrase
        text = f"so {phrase} it"
        assert has_word(pattern, text, hints) is has_word(pattern, text) is True


def test_a_hint_without_the_pattern_is_still_no_match():
    assert has_word(DECISION_RE, "the trademark", DECISION_HINTS) is False
    assert has_word(RULE_RE, "a random donkey", RULE_HINTS) is False
    assert has_word(RULE_RE, "nothing here", RULE_HINTS) is False


class Recorder(Collector):
    def __init__(self, results: bool) -> None:
        self.reads_tool_results = results
        self.seen: list[int] = []

    def see(self, m: Seen, w: Walk) -> None:
        self.seen.append(m.index)


def test_tool_results_reach_only_the_collectors_that_read_them():
    call = {"id": "c1", "type": "function", "function": {"name": "Shell", "arguments": "{}"}}
    messages = [
        Message.make("user", "Run it."),
        Message.make("assistant", "", tool_calls=[call]),
        Message.make("tool", "done", tool_call_id="c1"),
        Message.make("assistant", "Done."),
    ]
    both, prose_only = Recorder(True), Recorder(False)
    walk(messages, range(4), PLAIN, [both, prose_only], lambda _: False)
    assert both.seen == [0, 1, 2, 3]
    assert prose_only.seen == [0, 1, 3]


def test_rules_and_decisions_are_found_with_the_hints():
    messages = [
        Message.make("user", "Always run the linter. Is it fast?"),
        Message.make("assistant", "I went with SQLite because it is one file."),
        Message.make("user", "ok"),
    ]
    found = extract(messages, range(3), PLAIN)
    assert [i.text for i in found.of("instructions")] == ["Always run the linter."]
    assert [i.text for i in found.of("decisions")] == ["I went with SQLite because it is one file."]


def test_a_paths_start_is_read_with_the_characters_a_path_is_made_of():
    """The run before a file name's extension (read backwards by one pattern)
    takes exactly a letter or digit of any script, ``_`` and ``._-/~``."""
    from kimi_compact_tui.specifics.patterns import PATH_CHARS, PATH_RUN_RE

    for code in range(0x10000):
        ch = chr(code)
        expected = ch.isalnum() or ch == "_" or ch in PATH_CHARS
        assert bool(PATH_RUN_RE.fullmatch(ch)) is expected, hex(code)


def test_paths_whole_in_any_script_and_special_files():
    from kimi_compact_tui.specifics.patterns import paths_in

    text = "see 文档/第2章/notes.md, ~/x-y/z_1.py and ./a/.env; not $HOME/b.py, build the Makefile"
    assert paths_in(text) == ["文档/第2章/notes.md", "~/x-y/z_1.py", "./a/.env", "Makefile"]

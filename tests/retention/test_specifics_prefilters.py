"""The extractor's shortcuts (substring hints before a pattern's scan, tool results
handed only to the collectors that read them) give what the full scans give."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics import Specifics, extract
from kimi_compact_tui.specifics.collect import (
    DECISION_HINTS,
    DECISION_RE,
    RULE_HINTS,
    RULE_RE,
    has_word,
)
from kimi_compact_tui.specifics.declare import PLAIN
from kimi_compact_tui.specifics.patterns import (
    HOST_PORT_RE,
    NUMBER_GATE_RE,
    NUMBER_RE,
    PORT_GATE_RE,
    PORT_RE,
    SHAPE,
    UNITS,
    V_VERSION_RE,
    numbers_in,
    numbers_of,
    numbers_scanned,
    plural_code,
)
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


ROOT = Path(__file__).resolve().parents[2]


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


# ----------------------------------------------------------------------------- figures' gates

FIGURE_PIECES = [
    *UNITS, *(u[:-1] for u in UNITS), *(u.upper() for u in UNITS), *(u + "x" for u in UNITS),
    "0", "1", "12", "2.5", "1,000", "10,00", ",", ".", " ", "\t", "\n", "  ", "v", "V", "-", "+",
    "/", "_", "%", "=", ":", "(", ")", "a", "1.2.3", "+b", "port", "Port", "import", "localhost",
    "127.0.0.1", "0.0.0.0", "8080", "é", "分", "µs", "²", "Σ", "K",
]  # fmt: skip


# a figure's parts: what stands before it, the number, a gap, a unit, what follows
FIGURE = st.tuples(
    st.sampled_from(["", " ", "%", "(", "a", ".", "\n", "v", "V", "port ", "port=", "port: ", "Port:\t ", "localhost:",
                     "127.0.0.1:", "0.0.0.0:", "é", "-", ":", ","]),
    st.sampled_from(["5", "12", "1,000", "2.5", "1.2.3", "8080", "10,00", "0", "2.5.1-rc1"]),
    st.sampled_from(["", " ", "\t", "  ", "=", ":", ".", ","]),
    st.sampled_from([*UNITS, *(u.upper() for u in UNITS), *(u + "x" for u in UNITS), "", "q"]),
    st.sampled_from(["", " ", "x", "/", ".", "\n", "-", "%", "1"]),
).map("".join)  # fmt: skip


def every_scan(low: str, text: str | None = None) -> list[tuple[str, str]]:
    """numbers_in as it read every text before its gates: each pattern run."""
    shown = text if text is not None and len(text) == len(low) else low
    out = []
    for m in NUMBER_RE.finditer(low):
        whole, version, decimal, unit = m.groups()
        if version is not None:
            if "," not in whole:
                out.append((f"v{whole}{version}", shown[m.start() : m.end()]))
        elif not (unit == "s" and decimal is None and plural_code(m, low)):
            key = f"{whole.replace(',', '')}{decimal or ''}{UNITS[unit]}"
            out.append((key, shown[m.start() : m.end()]))
    out += [(f"v{m.group(1)}", shown[m.start() : m.end()]) for m in V_VERSION_RE.finditer(low)]
    for pattern in (PORT_RE, HOST_PORT_RE):
        out += [(f"port {m.group(1)}", shown[m.start() : m.end()]) for m in pattern.finditer(low)]
    return out


@settings(max_examples=4000, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(FIGURE_PIECES), FIGURE), max_size=8),
    st.booleans(),
)
def test_the_figures_gates_find_what_every_pattern_finds(pieces, lower):
    """numbers_in rules a pattern out by the text's shape only where the
    pattern itself finds nothing: the same figures, in the same order."""
    text = "".join(pieces)
    for low in (text.lower(), text) if lower else (text,):
        want = every_scan(low, text)
        assert numbers_in(low, text) == numbers_scanned(low, text) == want
        assert numbers_in(low) == numbers_scanned(low) == every_scan(low)
    # lower-cased only when a gate passes: the same as lower-casing first
    assert numbers_of(text) == numbers_of(text, text.lower()) == every_scan(text.lower(), text)


def test_the_figures_gates_rule_out_a_listing_and_keep_each_figure():
    listing = "    1\tstream = record(546)\n   12\tsession = import(80)\n"
    shape = listing.encode("ascii").translate(SHAPE)
    assert NUMBER_GATE_RE.search(shape) is None and PORT_GATE_RE.search(shape) is None
    for text in (
        "took 1.5 ms",
        "3 MIN",
        "1,000 tokens",
        "80%",
        "v2.1",
        "port: 8080",
        "at 0.0.0.0:80",
    ):
        assert numbers_in(text.lower(), text), text


# ----------------------------------------------------------------------------- calls only


def test_a_collector_of_calls_sees_a_message_without_one_only_of_its_kinds():
    call = {"id": "c1", "type": "function", "function": {"name": "Shell", "arguments": "{}"}}
    messages = [
        Message.make("user", "Run it."),
        Message.make("assistant", "Running.", tool_calls=[call]),
        Message.make("tool", "done", tool_call_id="c1"),
        Message.make("assistant", "Done."),
        Message.make("system", "Be brief."),
    ]
    every, results, none = Recorder(True), Recorder(True), Recorder(True)
    results.reads_without_calls = frozenset(("tool",))
    none.reads_without_calls = frozenset()
    walk(messages, range(5), PLAIN, [every, results, none], lambda _: False)
    assert every.seen == [0, 1, 2, 3, 4]
    assert results.seen == [1, 2]
    assert none.seen == [1]


def sessions_of_every_shape(folder: Path) -> list[Path]:
    """The bundled samples, the three realistic sessions and a generated one."""
    from benchmarks import generate
    from benchmarks.realistic import REALISTIC

    samples = ROOT / "sample_sessions"
    paths = [samples / "kimi-debugging-session", samples / "openai-retry-refactor.json"]
    paths.append(samples / "cjk-orders-store.jsonl")
    for name, (_, write, _) in REALISTIC.items():
        (folder / name).mkdir()
        paths.append(write(folder / name))
    paths.append(generate.ensure(1_000, folder)["kimi"])
    return paths


def items_of(found: Specifics) -> list[object]:
    items = {k: [dataclasses.astuple(i) for i in b.values()] for k, b in found.items.items()}
    return [items, found.root, found.plan_message, found.causes, found.fixes, found.findings]


def test_the_collectors_of_calls_find_what_they_find_reading_every_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Skipping the messages without a call that a collector declares it ignores
    (``reads_without_calls``) changes no item: the same extraction with every
    collector called for every message it reads."""
    from kimi_compact_tui.formats import load_session
    from kimi_compact_tui.specifics.extractor import collectors

    declared = [type(c) for c in collectors(None) if type(c).reads_without_calls is not None]
    assert declared  # the shortcut is in use
    for path in sessions_of_every_shape(tmp_path):
        session = load_session(path)
        vocabulary = session.format.vocabulary()
        every = range(len(session.messages))
        fast = items_of(extract(session.messages, every, vocabulary))
        with monkeypatch.context() as patch:
            for kind in declared:
                patch.setattr(kind, "reads_without_calls", None)
            plain = items_of(extract(session.messages, every, vocabulary))
        assert fast == plain, path


def test_the_collectors_of_calls_read_what_a_message_without_a_call_holds() -> None:
    """The kinds a collector of calls still reads without one: the person's
    TODO lines (the plan), a run's and a write's results (commands, edits)."""
    from kimi_compact_tui.formats.kimi_cli.roles import ROLES

    def call(cid: str, name: str, args: str) -> dict[str, object]:
        return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}

    messages = [
        Message.make("user", "Fix the build.\nTODO: update the changelog"),
        Message.make("assistant", "", tool_calls=[call("c1", "Shell", '{"command": "make"}')]),
        Message.make("tool", "error: missing rule\nexit code 2", tool_call_id="c1"),
        Message.make("assistant", "", tool_calls=[call("c2", "WriteFile", '{"path": "Makefile"}')]),
        Message.make("tool", "<system>ERROR: refused</system>", tool_call_id="c2"),
    ]
    found = extract(messages, range(len(messages)), ROLES)
    assert [i.text for i in found.of("open_tasks")] == ["update the changelog"]
    assert [(i.text, i.status) for i in found.of("commands")] == [("make", "exit 2")]
    assert found.of("edited_files") == []  # the write was refused


def test_a_traceback_is_looked_for_by_the_start_its_pattern_reads() -> None:
    from kimi_compact_tui.specifics.collect import errors_in
    from kimi_compact_tui.specifics.patterns import TRACEBACK_START, TRACEBACK_TAIL_RE

    assert TRACEBACK_TAIL_RE.match(TRACEBACK_START + '  File "a.py", line 1\nKeyError: x')
    text = f'ran it\n{TRACEBACK_START}  File "a.py", line 3, in f\nboom: it broke\n'
    assert [found[2] for found in errors_in(text, True)] == [("boom", "it broke")]
    assert errors_in(text.replace("(most recent", "(least recent"), True) == []

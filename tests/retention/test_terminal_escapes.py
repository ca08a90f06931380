"""Terminal escape sequences in session text: an OSC 8 hyperlink,
CSI colour codes and other C0/C1 controls are never part of what retention extracts
or what the offline summarizer writes; an OSC 8 link's target URL is extracted
cleanly."""

from __future__ import annotations

import json
import re

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.request import build_request
from kimi_compact_tui.formats import registry
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers.offline import offline_summary
from kimi_compact_tui.sanitize import plain_text
from kimi_compact_tui.specifics import extract

VOCABULARY = registry.get("openai-jsonl").vocabulary()  # every agent's tool names (the registry's)

ESC = "\x1b"
ST = ESC + "\\"
# What a terminal shows as "click", linking to http://evil.example/ (OSC 8, ST-terminated).
OSC8_LINK = f"{ESC}]8;;http://evil.example/{ST}click{ESC}]8;;{ST}"
# The same link terminated by BEL, with an id parameter.
OSC8_BEL = f"{ESC}]8;id=7;https://docs.example.org/guide\x07the guide{ESC}]8;;\x07"
RED, RESET = f"{ESC}[31m", f"{ESC}[0m"
CONTROLS_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
PROMPT = PromptSource("inline", None, "Summarize.", "0" * 64)


def shell_call(call_id: str, command: str) -> dict:
    args = json.dumps({"command": command})
    return {"type": "function", "id": call_id, "function": {"name": "Shell", "arguments": args}}


def escape_session() -> list[Message]:
    return [
        Message.make("user", f"The docs are at {OSC8_LINK} and {OSC8_BEL}; fix src/app.py."),
        Message.make(
            "assistant",
            [{"type": "text", "text": "Running the tests."}],
            tool_calls=[shell_call("Shell:0", f"{RED}pytest -q{RESET} tests/test_app.py")],
        ),
        Message.make(
            "tool",
            f"{RED}FAILED{RESET} tests/test_app.py::test_port - ValueError: bad port\n"
            f"{RED}E   ValueError: bad port 80{ESC}[K{RESET}\n"
            f"\x9b1mexit code 1\x9b0m, took 3.5{ESC}[1m s{ESC}[0m at "
            f"{ESC}]0;window title\x07http://localhost:8080/health\x07",
            tool_call_id="Shell:0",
        ),
        Message.make("assistant", "Fixed the port parsing in src/app.py."),
        Message.make("user", "Thanks. Now add a test."),
        Message.make("assistant", "OK."),
    ]


def test_plain_text_turns_an_osc8_link_into_its_text_and_target():
    assert plain_text(OSC8_LINK) == "click <http://evil.example/>"
    assert plain_text(OSC8_BEL) == "the guide <https://docs.example.org/guide>"
    # a link whose text is its own target is written once
    same = f"{ESC}]8;;https://a.example/{ST}https://a.example/{ESC}]8;;{ST}"
    assert plain_text(same) == "https://a.example/"
    # CSI (7-bit and C1), other OSC, lone controls; newlines and tabs stay
    assert plain_text(f"{RED}a{RESET}\tb\x9b1mc\x9b0m\n{ESC}]0;title\x07d\x07e\x00f") == (
        "a\tbc\ndef"
    )
    assert (
        plain_text("no controls: caf\u00e9 \u4e2d\u6587") == "no controls: caf\u00e9 \u4e2d\u6587"
    )


def test_retention_extracts_an_osc8_target_url_cleanly():
    messages = escape_session()
    extracted = extract(messages, range(len(messages) - 2), VOCABULARY).items
    urls = sorted(item.text for item in extracted["urls"].values())
    assert urls == [
        "http://evil.example/",
        "http://localhost:8080/health",
        "https://docs.example.org/guide",
    ]


def test_no_extracted_item_holds_an_escape_sequence_or_control():
    messages = escape_session()
    extracted = extract(messages, range(len(messages) - 2), VOCABULARY).items
    texts = [
        (name, text)
        for name in extracted
        for item in extracted[name].values()
        for text in (item.text, item.key, *item.extra)
    ]
    assert not [(n, t) for n, t in texts if CONTROLS_RE.search(t)]
    commands = [i.text for i in extracted["commands"].values()]
    assert commands == ["pytest -q tests/test_app.py"]
    errors = {i.text for i in extracted["errors"].values()}
    assert "ValueError: bad port 80" in errors
    assert "failing test tests/test_app.py::test_port" in errors


def offline_for(messages: list[Message]) -> str:
    plan = make_plan(messages, max_preserved_messages=2)
    return offline_summary(build_request(messages, plan, PROMPT, {}))


def test_the_offline_summary_holds_no_escape_sequence():
    text = offline_for(escape_session())
    assert not CONTROLS_RE.search(text), repr(CONTROLS_RE.findall(text))
    issues = text[text.index("<active_issues>") : text.index("</active_issues>")]
    # the coloured pytest line is still read as an error
    assert "failing test tests/test_app.py::test_port" in issues
    assert "ValueError: bad port 80" in issues
    assert "<http://evil.example/>" in text  # the link's target, visible


@pytest.mark.parametrize("text", ["plain", "tab\there\nnewline", "emoji \U0001f600 and \u200b"])
def test_plain_text_leaves_text_without_terminal_controls_alone(text):
    assert plain_text(text) is text or plain_text(text) == text


def test_the_ascii_fast_check_finds_the_controls_the_pattern_finds():
    """has_control's one-pass check of an ASCII text says what the pattern says,
    on every character and on random mixtures (newlines and tabs are no control)."""
    import random

    from kimi_compact_tui.sanitize import _ANY_CONTROL, has_control

    for code in range(0x300):
        for text in (chr(code), f"ab{chr(code)}cd", f"é{chr(code)}"):
            assert has_control(text) == (_ANY_CONTROL.search(text) is not None), repr(text)
    rng = random.Random(31)
    alphabet = "abc \n\t\r\x1b\x07\x7f\x85\x9cé漢" + "".join(map(chr, range(32)))
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
        assert has_control(text) == (_ANY_CONTROL.search(text) is not None), repr(text)

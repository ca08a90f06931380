"""Inputs for the kimi-cli parity cases (ours): each is run through kimi-cli's own
``SimpleCompaction`` (tests/agents/kimi_cli_driver.py) and through our engine.

Messages are written the way kimi-cli writes them (kosong's model: a single text part is a
plain string, ``null`` kept inside parts), except in the cases named in ``NOT_KIMI_FORM``,
which kosong normalises on reading.
"""

from __future__ import annotations

from typing import Any

from tests.core_helpers import golden_cases

# What the fake compaction model answers: a think part (kimi-cli drops it) and the summary.
SUMMARY = '<current_focus>\nFix the "db" migration — 修复迁移 ✓\n</current_focus>\n\\ end'
SUMMARY_THINK = "Let me summarise the conversation."
OUTPUT_TOKENS = 321
# The agent's system prompt in the session files (kimi-cli's ``_system_prompt`` record).
SYSTEM_PROMPT = 'You are a test agent. 测试 — "quoted".'

# Cases whose input kosong rewrites (content null, a one-text-part list): our request
# must still match kimi-cli's, and we keep the messages as they were read.
NOT_KIMI_FORM = {"content_null_and_single_text_part_list"}


def _m(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **extra}


def _think(text: str, encrypted: str | None = None) -> dict[str, Any]:
    return {"type": "think", "think": text, "encrypted": encrypted}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _media(kind: str, url: str) -> dict[str, Any]:
    return {"type": f"{kind}_url", f"{kind}_url": {"url": url, "id": None}}


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function", "id": call_id, "function": {"name": name, "arguments": arguments}}


def _turns(n: int) -> list[dict[str, Any]]:
    return [_m("user" if i % 2 == 0 else "assistant", f"turn {i + 1}") for i in range(n)]


def _case(
    name: str, messages: list[dict[str, Any]], keep: int = 2, instruction: str = ""
) -> dict[str, Any]:
    return {
        "name": name,
        "messages": messages,
        "max_preserved_messages": keep,
        "custom_instruction": instruction,
    }


TOOL_EXCHANGE = [
    _m("user", "Fix the failing test in db.py"),
    _m(
        "assistant",
        [_think("Read it first"), _text("I'll read the file.")],
        tool_calls=[_call("ReadFile:0", "ReadFile", '{"path": "db.py"}')],
    ),
    _m(
        "tool",
        [_text("<system>Read 2 lines.</system>"), _text("def f():\n    return 1\n")],
        tool_call_id="ReadFile:0",
    ),
    _m("assistant", [], tool_calls=[_call("Shell:1", "Shell", '{"command": "pytest -q"}')]),
    _m("tool", "1 failed", tool_call_id="Shell:1"),
    _m("assistant", "Fixed: f() now returns 2."),
    _m("user", "Thanks. Next?"),
    _m("assistant", "Next is the cache."),
]

CASES: list[dict[str, Any]] = [
    _case("text_keep_two", _turns(6)),
    _case("text_keep_one", _turns(3), keep=1),
    _case("text_keep_three", _turns(7), keep=3),
    _case("long_conversation", _turns(41)),
    _case("keep_zero_is_a_no_op", _turns(4), keep=0),
    _case("keep_negative_is_a_no_op", _turns(4), keep=-1),
    _case("empty_session", []),
    _case("too_few_messages", _turns(1)),
    _case("too_few_for_three", _turns(2), keep=3),
    _case("only_the_preserved_tail", _turns(2)),
    _case("leading_system", [_m("system", "System note"), *_turns(4)]),
    _case(
        "two_leading_systems",
        [_m("system", "Agent rules"), _m("system", "Project notes"), *_turns(5)],
        keep=1,
    ),
    # kimi-cli would send a request holding only the system message; the spec keeps a
    # leading system message, so there is nothing to replace: a no-op for us by design.
    _case("only_a_leading_system_before_the_tail", [_m("system", "System note"), *_turns(2)]),
    _case(
        "mid_conversation_system_is_ordinary",
        [*_turns(2), _m("system", "Context switched"), *_turns(3)],
    ),
    _case(
        "multipart_think_and_image",
        [
            _m(
                "user",
                [
                    _text("Look at this:"),
                    _media("image", "data:image/png;base64,AAAA"),
                    _text("ok?"),
                ],
            ),
            _m("assistant", [_think("hm", encrypted="sig=="), _text("A cat."), _text(" Two.")]),
            _m("user", [_media("image", "https://example.com/b.png")]),
            _m("assistant", [_think("looking")]),
            *_turns(2),
        ],
    ),
    _case(
        "audio_and_video_in_the_tail",
        [
            *_turns(2),
            _m("user", [_text("Listen:"), _media("audio", "data:audio/mp3;base64,AUD")]),
            _m("assistant", [_media("video", "data:video/mp4;base64,VID"), _text("Done.")]),
        ],
    ),
    _case("tool_calls_and_tool_messages", TOOL_EXCHANGE),
    _case("tool_results_follow_the_kept_call", TOOL_EXCHANGE[:5], keep=1),
    _case("tool_call_exchange_in_the_tail", TOOL_EXCHANGE, keep=5),
    _case(
        "custom_instruction",
        _turns(5),
        instruction="Keep every database decision.\nAnd the **schema** — 保留数据库的决定。",
    ),
    _case("custom_instruction_only_spaces", _turns(4), instruction="   "),
    _case(
        "cjk_emoji_and_escapes",
        [
            _m("user", "修复数据库迁移 [bold]x[/bold] \x1b[31mred\x1b[0m [/ 🚀"),
            _m("assistant", "好的 → done\r\nline\ttab \u200b zero-width"),
            _m("user", "继续 👍🏽"),
            _m("assistant", "ok"),
        ],
        keep=1,
    ),
    _case(
        "empty_content",
        [
            _m("user", ""),
            _m("assistant", [], tool_calls=[_call("c1", "Shell", "{}")]),
            _m("tool", "", tool_call_id="c1"),
            _m("assistant", [_text(""), _think("")]),
            _m("user", "  \n"),
            _m("assistant", "last"),
        ],
        keep=1,
    ),
    _case(
        "named_and_partial_messages",
        [
            _m("user", "hi", name="alice"),
            _m("assistant", "partial answer", partial=True),
            *_turns(2),
        ],
    ),
    _case(
        "content_null_and_single_text_part_list",
        [
            _m("user", [_text("only part")]),
            _m("assistant", None, tool_calls=[_call("c9", "Shell", '{"command": "ls"}')]),
            _m("tool", [_text("a.txt")], tool_call_id="c9"),
            *_turns(2),
        ],
    ),
]

# The stored golden cases of ../shared/reference, when that folder is there: run through
# kimi-cli again and through our engine like ours (an extra check; the proof is above).
REFERENCE_PREFIX = "reference-"
REFERENCE_CASES: list[dict[str, Any]] = [
    {
        "name": REFERENCE_PREFIX + c["name"],
        "messages": c["messages"],
        "max_preserved_messages": c["max_preserved_messages"],
        "custom_instruction": c["custom_instruction"],
        "stored_upstream": c["upstream"],
    }
    for c in golden_cases()
]
ALL_CASES = CASES + REFERENCE_CASES

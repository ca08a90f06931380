"""OpenAI-style message dicts the session writers take."""

from __future__ import annotations

import json
from typing import Any


def conversation(n: int, *, system: str | None = "sys") -> list[dict[str, Any]]:
    """An optional system message, then ``n`` alternating user/assistant turns."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        out.append({"role": role, "content": f"{role} turn {i} ünïcode"})
    return out


def tool_call(call_id: str, name: str = "shell", text: str = "") -> dict[str, Any]:
    """An assistant message calling one tool."""
    return {
        "role": "assistant",
        "content": text,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps({"cmd": "ls"})},
            }
        ],
    }


def tool_result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def tool_session() -> list[dict[str, Any]]:
    """A session with two tool exchanges (messages are 1-based below):
    1 system, 2 user, 3 assistant calls c1, 4 result c1, 5 assistant,
    6 user, 7 assistant calls c2, 8 result c2, 9 assistant, 10 user, 11 assistant."""
    return [
        {"role": "system", "content": "You are a careful engineer."},
        {"role": "user", "content": "List the files."},
        tool_call("c1"),
        tool_result("c1", "a.py b.py"),
        {"role": "assistant", "content": "Two files: a.py and b.py."},
        {"role": "user", "content": "Run the tests."},
        tool_call("c2", text="Running them."),
        tool_result("c2", "2 passed"),
        {"role": "assistant", "content": "Both tests pass."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "You're welcome."},
    ]


# ----------------------------------------------------------------------------- for the TUI tests

MARKUP_TEXT = "[bold]x[/bold] [/foo] [link=x]"
ESCAPE_TEXT = "\x1b[31m \x1b]0;title\x07 \u202e"


def regions_messages() -> list[dict]:
    """A session with every kind of part: two leading system messages, think,
    media, tool calls and tool results, ending in a user/assistant tail."""
    return [
        {"role": "system", "content": "You are a careful engineer."},
        {"role": "system", "content": "Project: ledger (Python 3.12)."},
        {"role": "user", "content": "The importer crashes on the March file. Why?"},
        {
            "role": "assistant",
            "content": [
                {"type": "think", "think": "Reproduce first, then read the parser."},
                {"type": "text", "text": "Let me reproduce the crash."},
            ],
            "tool_calls": [
                {
                    "type": "function",
                    "id": "call_1",
                    "function": {"name": "Shell", "arguments": '{"command": "make import"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "decimal.InvalidOperation at line 412",
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Here is the dashboard screenshot."},
                {"type": "image_url", "image_url": {"url": "https://example.com/shot.png"}},
            ],
        },
        {"role": "assistant", "content": "Empty amounts break parse_amount; I will fix it."},
        {"role": "user", "content": "Good. Add a --strict flag next."},
        {"role": "assistant", "content": "Adding --strict to the importer now."},
    ]


def hostile_messages() -> list[dict]:
    return [
        {"role": "user", "content": f"markup {MARKUP_TEXT} escapes {ESCAPE_TEXT} end"},
        {"role": "assistant", "content": f"{ESCAPE_TEXT}{MARKUP_TEXT}"},
        {"role": "user", "content": "third"},
        {"role": "assistant", "content": "fourth"},
    ]


#: A summary in the six sections (the flow tests' scripted provider answer).
SUMMARY = (
    "<current_focus>\nFinish the parser fix in db.py; next run the tests.\n</current_focus>\n\n"
    "<environment>\n- Python 3.11, pytest\n</environment>\n\n"
    "<completed_tasks>\n- Fixed f(): it returns 2\n</completed_tasks>\n\n"
    "<active_issues>\n- The screenshot test is flaky\n</active_issues>\n\n"
    "<code_state>\n<file>\ndb.py\n\n**Summary:**\nThe database helpers\n</file>\n</code_state>\n\n"
    "<important_context>\n- The user wants **no new dependencies**\n</important_context>\n"
)

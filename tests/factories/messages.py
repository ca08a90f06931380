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

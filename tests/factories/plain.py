"""Sessions written from OpenAI-style message dicts: kimi-cli's ``context.jsonl``
and the OpenAI ``.jsonl`` / ``.json`` files (``write_session`` picks by format)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: The formats ``write_session`` writes from bare messages.
FORMATS = ("kimi", "openai-json", "openai-jsonl")


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def write_kimi(
    folder: Path,
    messages: list[dict[str, Any]],
    *,
    system_prompt: str | None = "You are kimi.",
    usage: int | None = 4242,
    checkpoint: bool = True,
) -> Path:
    """A kimi-cli session folder holding ``context.jsonl``: an optional
    ``_system_prompt`` record, a ``_checkpoint``, the messages and a final
    ``_usage`` record, each line as kimi-cli writes it (its own records with
    ``json.dumps``' default spacing, messages compact). Returns the
    ``context.jsonl`` path."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    if system_prompt is not None:
        lines.append(json.dumps({"role": "_system_prompt", "content": system_prompt}))
    if checkpoint:
        lines.append(json.dumps({"role": "_checkpoint", "id": 0}))
    lines += [_line(m) for m in messages]
    if usage is not None:
        lines.append(json.dumps({"role": "_usage", "token_count": usage}))
    path = folder / "context.jsonl"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    return path


def write_openai_json(path: Path, messages: list[dict[str, Any]], **extra: Any) -> Path:
    """An OpenAI-style ``.json``: a bare list, or ``{"messages": [...], **extra}``."""
    data: Any = {"messages": messages, **extra} if extra else messages
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def write_openai_jsonl(path: Path, messages: list[dict[str, Any]]) -> Path:
    """An OpenAI-style ``.jsonl``: one message per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(_line(m) + "\n" for m in messages).encode("utf-8"))
    return path


def write_session(
    folder: Path, fmt: str, messages: list[dict[str, Any]], name: str = "session"
) -> Path:
    """``messages`` written under ``folder`` in format ``fmt`` (one of :data:`FORMATS`).
    The path returned is what a user passes as SESSION."""
    if fmt == "kimi":
        return write_kimi(folder / name, messages)
    if fmt == "openai-json":
        return write_openai_json(folder / f"{name}.json", messages)
    if fmt == "openai-jsonl":
        return write_openai_jsonl(folder / f"{name}.jsonl", messages)
    raise ValueError(f"unknown test session format {fmt!r} (expected one of {FORMATS})")


def big_session(path: Path, n: int) -> Path:
    """An OpenAI .jsonl session with ``n`` short messages (fast to write)."""
    roles = ("user", "assistant")
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(f'{{"role":"{roles[i % 2]}","content":"message number {i + 1}"}}\n')
    return path


# ----------------------------------------------------------------------------- kimi-cli lines

KIMI_LINES: list[dict[str, Any]] = [
    {"role": "_system_prompt", "content": "You are Kimi Code CLI."},
    {"role": "_checkpoint", "id": 0},
    {"role": "user", "content": "Fix the failing test in db.py"},
    {"role": "_usage", "token_count": 9000},
    {
        "role": "assistant",
        "content": [
            {"type": "think", "think": "Let me look", "encrypted": None},
            {"type": "text", "text": "I'll read the file."},
        ],
        "tool_calls": [
            {
                "type": "function",
                "id": "ReadFile:0",
                "function": {"name": "ReadFile", "arguments": '{"path": "db.py"}'},
            }
        ],
    },
    {
        "role": "tool",
        "content": [{"type": "text", "text": "def f():\n    return 1\n"}],
        "tool_call_id": "ReadFile:0",
    },
    {"role": "assistant", "content": "Fixed: f() now returns 2. [bold]not markup[/] \x1b[31mred"},
    {"role": "_checkpoint", "id": 3},
    {"role": "user", "content": "Now look at the screenshot"},
    {"role": "assistant", "content": "The screenshot shows a green test run."},
    {"role": "user", "content": "Great, write the changelog."},
    {"role": "assistant", "content": "Done: CHANGELOG.md updated."},
    {"role": "_usage", "token_count": 9500},
]


def write_kimi_session(folder: Path, lines: list[dict[str, Any]] | None = None) -> Path:
    """``context.jsonl`` in ``folder`` holding ``lines`` (kimi-cli's records as
    given, special ones included; default :data:`KIMI_LINES`)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "context.jsonl"
    body = "".join(json.dumps(line) + "\n" for line in (lines or KIMI_LINES))
    path.write_text(body, encoding="utf-8")
    return path


def write_openai_session(path: Path, n: int) -> Path:
    """An OpenAI ``.json`` list: a system message and ``n`` short turns."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful."}]
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"message {i} about topic {i % 7}"})
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path

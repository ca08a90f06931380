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
    ``_usage`` record. Returns the ``context.jsonl`` path."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    if system_prompt is not None:
        lines.append(_line({"role": "_system_prompt", "content": system_prompt}))
    if checkpoint:
        lines.append(_line({"role": "_checkpoint", "id": 0}))
    lines += [_line(m) for m in messages]
    if usage is not None:
        lines.append(_line({"role": "_usage", "token_count": usage}))
    path = folder / "context.jsonl"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    return path


def write_openai_json(path: Path, messages: list[dict[str, Any]], **extra: Any) -> Path:
    """An OpenAI-style ``.json``: a bare list, or ``{"messages": [...], **extra}``."""
    data: Any = {"messages": messages, **extra} if extra else messages
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def write_openai_jsonl(path: Path, messages: list[dict[str, Any]]) -> Path:
    """An OpenAI-style ``.jsonl``: one message per line."""
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

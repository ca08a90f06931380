"""How the extractor reads one message: its tool calls and their arguments,
its text as a terminal shows it, its sentences."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from kimi_compact_tui.model import Message
from kimi_compact_tui.sanitize import plain_text
from kimi_compact_tui.specifics.patterns import FENCE_RE, SENTENCE_RE, collapse

Call = tuple[str, "dict[str, Any] | str", "str | None"]  # name, arguments, call id


def call_args(call: dict[str, Any]) -> tuple[str, dict[str, Any] | str]:
    """A tool call's name and its arguments (a dict when they are a JSON object,
    else the raw text: a custom tool's input, or arguments cut short)."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict):
        return "", ""
    name = fn["name"] if isinstance(fn.get("name"), str) else ""
    raw = fn.get("arguments")
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return name, raw
        return name, parsed if isinstance(parsed, dict) else raw
    return name, raw if isinstance(raw, dict) else ""


def arg_strings(args: dict[str, Any] | str) -> list[str]:
    if isinstance(args, str):
        return [args]
    out: list[str] = []
    for v in args.values():
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, str))
    return out


def parsed_calls(message: Message) -> list[Call]:
    out: list[Call] = []
    for call in message.tool_calls:
        name, args = call_args(call)
        cid = call.get("id") if isinstance(call, dict) else None
        out.append((name, args, cid if isinstance(cid, str) else None))
    return out


def message_haystack(message: Message) -> str:
    """Everything a reader of the message sees: its text and its tool calls, as a
    terminal shows them."""
    text = plain_text(message.text())
    calls = parsed_calls(message)
    if not calls:
        return text
    chunks = [text]
    for name, args, _ in calls:
        chunks.append(name)
        chunks.extend(arg_strings(args))
    return plain_text("\n".join(c for c in chunks if c))


def without_tags(text: str, tags: Iterable[str]) -> str:
    """``text`` without the ``<tag>…</tag>`` blocks of ``tags`` (an unclosed one
    runs to the end)."""
    for tag in tags:
        if f"<{tag}>" in text:
            text = re.sub(rf"<{re.escape(tag)}>.*?(?:</{re.escape(tag)}>|\Z)", "", text, flags=re.S)
    return text.strip()


def sentences(text: str) -> list[str]:
    return [s for s in (m.group(0).strip() for m in SENTENCE_RE.finditer(text)) if s]


def shown(text: str, width: int = 160) -> str:
    flat = collapse(text)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def prose(text: str) -> str:
    """``text`` without its fenced code blocks."""
    return FENCE_RE.sub(" ", text) if "```" in text or "~~~" in text else text


def first_string(args: dict[str, Any] | str, keys: Iterable[str]) -> str | None:
    """The first of ``keys`` in ``args`` holding text (a list of words joined);
    raw (non-JSON) arguments are their own text."""
    if isinstance(args, str):
        return args.strip() or None
    for key in keys:
        value = args.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None

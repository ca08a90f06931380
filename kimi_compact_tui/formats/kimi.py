"""kimi-cli ``context.jsonl``: message lines plus special records.

Read: every line is kept with its exact text, so an unchanged session is
written back byte for byte. Write: lines that were read are written as they
were; new lines are written the way kimi-cli writes them — special records
with ``json.dumps`` defaults, messages as compact JSON (UTF-8 raw, nulls
dropped at the top level, key order ``role, name, content, tool_calls,
tool_call_id, partial``, a content of exactly one text part as a string).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.lines import decoded_lines, raw_bytes, split_lines
from kimi_compact_tui.formats.validate import check_message, type_name
from kimi_compact_tui.model import Message, Session, SpecialRecord

SPECIAL_ROLES = ("_system_prompt", "_checkpoint", "_usage")
# role -> (field, exact type, how the error names it)
SPECIAL_FIELDS = {
    "_system_prompt": ("content", str, "a string"),
    "_usage": ("token_count", int, "an integer"),
    "_checkpoint": ("id", int, "an integer"),
}
KEY_ORDER = ("role", "name", "content", "tool_calls", "tool_call_id", "partial")


class BlankLine(bytes):
    """A blank line in the file, kept so the bytes survive a round trip."""


def looks_like_kimi(text: str) -> bool:
    """True when the first records look like kimi-cli special records."""
    for marker in ('"role": "_system_prompt"', '"role": "_checkpoint"', '"role": "_usage"'):
        if marker in text[:65536]:
            return True
    return False


def parse(data: bytes, path: Path) -> Session:
    lines, trailing_newline = split_lines(data)
    entries: list[Any] = []
    messages: list[Message] = []
    system_prompt = None
    recorded = None
    loads = json.loads
    for lineno, raw, line in decoded_lines(lines, path):
        if not line.strip():
            entries.append(BlankLine(raw))
            continue
        try:
            data = loads(line)
        except RecursionError:
            raise SessionFormatError(f"{path}:{lineno}: JSON nested too deeply") from None
        except ValueError as exc:
            msg = getattr(exc, "msg", str(exc))
            col = getattr(exc, "colno", None)
            at = f", column {col}" if col else ""
            raise SessionFormatError(f"{path}:{lineno}: invalid JSON ({msg}{at})") from None
        role = data.get("role") if type(data) is dict else None
        if type(role) is str and role.startswith("_"):
            rule = SPECIAL_FIELDS.get(role)
            if rule is not None:  # unknown special records are kept as they are
                key, kind, described = rule
                value = data.get(key)
                if type(value) is not kind:
                    raise SessionFormatError(
                        f"{path}:{lineno}: {role} '{key}' must be {described}, "
                        f"got {type_name(value)}"
                    )
                if role == "_system_prompt":
                    system_prompt = value
                elif role == "_usage":
                    recorded = value
            entries.append(SpecialRecord(data, raw))
            continue
        check_message(data, f"{path}:{lineno}")
        msg_obj = Message(data, raw)
        entries.append(msg_obj)
        messages.append(msg_obj)
    return Session(
        path=path,
        format="kimi",
        messages=messages,
        entries=entries,
        system_prompt=system_prompt,
        recorded_tokens=recorded,
        trailing_newline=trailing_newline,
    )


def dump_special(data: dict[str, Any]) -> str:
    return json.dumps(data)


def dump_message(data: dict[str, Any]) -> str:
    out: dict[str, Any] = {}
    for key in KEY_ORDER:
        value = data.get(key)
        if value is None:
            continue
        if key == "content" and type(value) is list and len(value) == 1:
            part = value[0]
            if type(part) is dict and part.get("type") == "text" and set(part) == {"type", "text"}:
                value = part["text"]
        out[key] = value
    for key, value in data.items():
        if key not in out and key not in KEY_ORDER and value is not None:
            out[key] = value
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def serialize(session: Session) -> bytes:
    lines: list[bytes] = []
    if session.entries is not None:
        for entry in session.entries:
            if isinstance(entry, BlankLine):
                lines.append(bytes(entry))
            elif entry.raw is not None:
                lines.append(raw_bytes(entry.raw))
            elif isinstance(entry, SpecialRecord):
                lines.append(dump_special(entry.data).encode("utf-8"))
            else:
                lines.append(dump_message(entry.data).encode("utf-8"))
    else:
        # A rebuilt session (after compaction): kimi-cli's layout.
        specials: list[dict[str, Any]] = []
        if session.system_prompt is not None:
            specials.append({"role": "_system_prompt", "content": session.system_prompt})
        specials.append({"role": "_checkpoint", "id": 0})
        lines.extend(dump_special(d).encode("utf-8") for d in specials)
        for m in session.messages:
            lines.append(raw_bytes(m.raw) if m.raw is not None else dump_message(m.data).encode())
        if session.recorded_tokens is not None:
            usage = {"role": "_usage", "token_count": session.recorded_tokens}
            lines.append(dump_special(usage).encode("utf-8"))
    out = b"\n".join(lines)
    if lines and (session.trailing_newline or session.entries is None):
        out += b"\n"
    return out

"""OpenAI-style messages: ``.json`` (a list, or an object with ``messages``)
and ``.jsonl`` (one message per line)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kimi_compact_tui.compaction.summary import plain_summary_message, splice
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.base import SessionInfo, WriteOp
from kimi_compact_tui.formats.lines import decoded_lines, raw_bytes, split_lines
from kimi_compact_tui.formats.validate import check_message, type_name
from kimi_compact_tui.model import Message, Session


def parse_json(text: str, path: Path) -> Session:
    try:
        value = json.loads(text)
    except RecursionError:
        raise SessionFormatError(f"{path}: JSON nested too deeply") from None
    except ValueError as exc:
        lineno = getattr(exc, "lineno", None)
        col = getattr(exc, "colno", None)
        where = f"{path}:{lineno}" if lineno else str(path)
        at = f", column {col}" if col else ""
        raise SessionFormatError(
            f"{where}: invalid JSON ({getattr(exc, 'msg', exc)}{at})"
        ) from None
    container = None
    if type(value) is list:
        raw_messages = value
        prefix = ""
    elif type(value) is dict:
        if "messages" not in value:
            raise SessionFormatError(f"{path}: JSON object has no 'messages' list")
        raw_messages = value["messages"]
        if type(raw_messages) is not list:
            raise SessionFormatError(
                f"{path}: 'messages' must be a list, got {type_name(raw_messages)}"
            )
        container = {k: v for k, v in value.items() if k != "messages"}
        prefix = "messages"
    else:
        raise SessionFormatError(
            f"{path}: expected a list of messages or an object with 'messages', "
            f"got {type_name(value)}"
        )
    messages = []
    for i, data in enumerate(raw_messages):
        check_message(data, f"{path}: {prefix}[{i}]")
        messages.append(Message(data))
    return Session(
        path=path,
        format="openai-json",
        messages=messages,
        container=container,
        container_is_list=container is None,
        trailing_newline=text.endswith("\n"),
    )


def parse_jsonl(data: bytes, path: Path) -> Session:
    lines, trailing_newline = split_lines(data)
    messages = []
    loads = json.loads
    for lineno, raw, line in decoded_lines(lines, path):
        if not line.strip():
            continue
        try:
            data = loads(line)
        except RecursionError:
            raise SessionFormatError(f"{path}:{lineno}: JSON nested too deeply") from None
        except ValueError as exc:
            raise SessionFormatError(
                f"{path}:{lineno}: invalid JSON ({getattr(exc, 'msg', exc)})"
            ) from None
        check_message(data, f"{path}:{lineno}")
        messages.append(Message(data, raw))
    return Session(
        path=path, format="openai-jsonl", messages=messages, trailing_newline=trailing_newline
    )


def serialize_json(session: Session) -> bytes:
    items = [m.data for m in session.messages]
    if session.container_is_list or session.container is None:
        value: object = items
    else:
        value = dict(session.container)
        value["messages"] = items
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def serialize_jsonl(session: Session) -> bytes:
    lines = [
        raw_bytes(m.raw) if m.raw is not None else json.dumps(m.data, ensure_ascii=False).encode()
        for m in session.messages
    ]
    out = b"\n".join(lines)
    if lines:
        out += b"\n"
    return out


# ----------------------------------------------------------------------------- the plugins


class _OpenAIFormat:
    """Shared by the two OpenAI layouts: no discovery, a plain summary
    message, no usage record, a timestamped backup before the replace."""

    write_policy = "backup"
    write_notes = ()
    fallback = True  # recognised only when no specific format (or foreign file) matches

    def resolve_folder(self, folder: Path) -> Path | None:
        return None

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        return []

    def summary_message(self, summary: str) -> Message:
        return plain_summary_message(summary)

    def compacted_session(
        self, session: Session, plan: Any, summary: str, output_tokens: int | None
    ) -> Session:
        return splice(session, plan, self.summary_message(summary))

    def write_op(self, session: Session, compacted: Session, context: Mapping[str, Any]) -> WriteOp:
        return WriteOp("backup", self.dump(compacted))


class OpenAIJsonlFormat(_OpenAIFormat):
    name = "openai-jsonl"
    label = "OpenAI messages .jsonl"

    def recognise(self, path: Path, head: bytes) -> bool:
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            return True
        stripped = head.lstrip()
        return suffix != ".json" and stripped.startswith(b"{") and b"\n{" in stripped

    def parse(self, data: bytes, path: Path) -> Session:
        return parse_jsonl(data, path)

    def dump(self, session: Session) -> bytes:
        return serialize_jsonl(session)


class OpenAIJsonFormat(_OpenAIFormat):
    name = "openai-json"
    label = "OpenAI messages .json"

    def recognise(self, path: Path, head: bytes) -> bool:
        suffix = path.suffix.lower()
        if suffix == ".json":
            return True
        return suffix != ".jsonl" and head.lstrip()[:1] in (b"[", b"{")

    def parse(self, data: bytes, path: Path) -> Session:
        from kimi_compact_tui.fsutil import decode_utf8

        return parse_json(decode_utf8(data, path, SessionFormatError), path)

    def dump(self, session: Session) -> bytes:
        return serialize_json(session)

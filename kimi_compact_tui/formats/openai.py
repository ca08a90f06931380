"""OpenAI-style messages: ``.json`` (a list, or an object with ``messages``)
and ``.jsonl`` (one message per line)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.base import MessagesFile, Session, SessionInfo, splice, state_of
from kimi_compact_tui.formats.fastjson import MISS, decode_fast
from kimi_compact_tui.formats.lines import Lines, decode_line, raw_bytes
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.formats.strategies import BackupReplace
from kimi_compact_tui.formats.validate import check_message, type_name
from kimi_compact_tui.fsutil import decode_utf8
from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import REMINDER, Vocabulary

ONLY_NOTES_RE = re.compile(
    r"\A(?:\s*(?:<system-reminder>.*?(?:</system-reminder>|\Z)|<system>.*?</system>))+\s*\Z",
    re.S,
)


@dataclass(frozen=True)
class JsonState:
    """An OpenAI ``.json`` session: the other top-level keys of an object
    holding ``messages`` (None for a plain list), where ``messages`` stands among
    them, and whether the file ends with a line end (kept on dump)."""

    container: dict[str, Any] | None = None
    position: int = 0
    final_newline: bool = True


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
    container, position = None, 0
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
        position = list(value).index("messages")
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
    state = JsonState(container, position, text.endswith("\n"))
    return Session(SessionRef(path), JSON_FORMAT, messages, format_state=state)


def parse_jsonl(data: bytes, path: Path) -> Session:
    return parse_jsonl_lines(Lines(path, data=data), path)


def parse_jsonl_lines(lines: Lines, path: Path) -> Session:
    messages = []
    loads = json.loads
    keep = lines.keep
    for lineno, offset, raw in lines:
        data = decode_fast(raw)  # exact, or MISS: then json decides, as before
        try:
            if data is MISS:
                line = decode_line(raw, path, lineno, offset)
                if not line.strip():
                    continue
                data = loads(line)
        except RecursionError:
            raise SessionFormatError(f"{path}:{lineno}: JSON nested too deeply") from None
        except ValueError as exc:
            raise SessionFormatError(
                f"{path}:{lineno}: invalid JSON ({getattr(exc, 'msg', exc)})"
            ) from None
        check_message(data, f"{path}:{lineno}")
        messages.append(Message(data, keep(raw, offset)))
    return Session(SessionRef(path), JSONL_FORMAT, messages)


def serialize_json(session: Session) -> bytes:
    items = [m.data for m in session.messages]
    state = state_of(session, JsonState)
    if state.container is None:
        value: object = items
    else:
        keys = list(state.container)
        keys.insert(state.position, "messages")
        value = {k: items if k == "messages" else state.container[k] for k in keys}
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return (text + "\n" if state.final_newline else text).encode("utf-8")


def serialize_jsonl(session: Session) -> bytes:
    lines = [
        raw_bytes(m.raw) if m.raw is not None else json.dumps(m.data, ensure_ascii=False).encode()  # type: ignore[arg-type]  # bytes, str or RawRef
        for m in session.messages
    ]
    out = b"\n".join(lines)
    if lines:
        out += b"\n"
    return out


# ----------------------------------------------------------------------------- the plugins


def only_notes(message: Message) -> str | None:
    """The bookkeeping of messages any agent wrote: a user message that is
    only injected notes (``<system>`` or ``<system-reminder>`` blocks)."""
    if message.role == "user" and ONLY_NOTES_RE.match(message.text() or "-"):
        return REMINDER
    return None


#: The picker parses an OpenAI file up to this size to count and check it.
DESCRIBE_LIMIT = 8 << 20


class _OpenAIFormat(MessagesFile):
    """Shared by the two OpenAI layouts: no discovery, the plain summary
    message, no usage record, a timestamped backup before the replace."""

    storage = BackupReplace()
    fallback = True  # recognised only when no specific format (or foreign file) matches
    # Any agent may have written the messages: the registry gives every agent's
    # tool names (``Lexicon.know_agents``, called for each fallback format).
    roles = Vocabulary(bookkeeping=only_notes)
    tail_skips_bookkeeping = False  # kimi-cli's scan, as before

    def describe(self, path: Path) -> SessionInfo:
        """A file up to :data:`DESCRIBE_LIMIT` is parsed as a load would: its
        message count, or the load's one-line error (an empty file, random
        bytes); a larger one is listed without a count."""
        info = SessionInfo(SessionRef(path), self.name)
        try:
            size = path.stat().st_size
            if size > DESCRIBE_LIMIT:
                return info
            data = path.read_bytes()
        except OSError as exc:
            info.error = f"{path}: cannot read ({exc.strerror or exc})"
            return info
        try:
            if not data.strip():
                raise SessionFormatError(f"{path}: file is empty")
            info.message_count = len(self.parse(data, path).messages)
        except SessionFormatError as exc:
            info.error = str(exc)
        return info


class OpenAIJsonlFormat(_OpenAIFormat):
    name = "openai-jsonl"
    label = "OpenAI messages .jsonl"
    streams_lines = True

    def recognise(self, path: Path, head: bytes) -> bool:
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            return True
        stripped = head.lstrip()
        return suffix != ".json" and stripped.startswith(b"{") and b"\n{" in stripped

    def parse(self, data: bytes, path: Path) -> Session:
        return parse_jsonl(data, path)

    def parse_lines(self, lines: Lines, path: Path) -> Session:
        return parse_jsonl_lines(lines, path)

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
        return parse_json(decode_utf8(data, path, SessionFormatError), path)

    def new_state(self) -> JsonState:
        return JsonState()

    def dump(self, session: Session) -> bytes:
        return serialize_json(session)

    def compacted_session(
        self, session: Session, plan: CompactionPlan, summary: str, output_tokens: int | None
    ) -> Session:
        messages = splice(session, plan, self.summary_message(summary))
        return Session(
            session.ref, self, messages, meta=session.meta, format_state=session.format_state
        )


JSONL_FORMAT = OpenAIJsonlFormat()
JSON_FORMAT = OpenAIJsonFormat()

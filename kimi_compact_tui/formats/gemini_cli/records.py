"""Reading a Gemini CLI session file the way Gemini CLI 0.61 loads it on resume.

Facts (read from Gemini CLI's chat recording service and checked against its runs):

- Where: ``~/.gemini/tmp/<project id>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl``
  (``$GEMINI_CLI_HOME`` replaces ``~``); ``<project id>/.project_root`` holds the
  work folder. Sub-agents write ``chats/<parent id>/<id>.jsonl`` (``kind:
  "subagent"``), which is never resumed. Older sessions are one JSON object in a
  ``.json`` file, rewritten as ``.jsonl`` when resumed.
- Every write is one ``JSON.stringify`` line appended to the file (UTF-8 raw, so
  U+2028 and U+0085 appear inside lines). The reader splits with Node's readline
  (``\\n``, ``\\r\\n``, lone ``\\r``), skips blank lines and silently skips lines
  that are not JSON.
- A line is, in this order of tests: a rewind ``{"$rewindTo": id}`` (drops that
  message and every later one; an unknown id drops them all); a message (any
  object with a string ``id``), which replaces the message of the same id in place
  or is added at the end; a metadata update ``{"$set": {...}}`` merged into the
  metadata, where ``$set.messages`` (a list) replaces the whole message list; a
  header ``{sessionId, projectHash, startTime, lastUpdated, kind}`` merged into the
  metadata (its ``messages``, if any, are added). Headers appear again mid-file:
  a resume in the same minute as the file's name first writes a new header and a
  ``$set.messages`` holding only its ``<session_context>`` message, then the whole
  history again.
- Without a ``sessionId`` and ``projectHash`` in the metadata the file is read
  as one legacy JSON object (``{sessionId, projectHash, ..., messages}``).
- Messages: ``{id, timestamp, type, content, ...}`` with ``type`` ``user``,
  ``gemini``, ``info``, ``error`` or ``warning``. A ``gemini`` message holds its
  text or parts, ``thoughts`` (``{subject, description}``), ``tokens`` and
  ``toolCalls`` (``{id, name, args, result, status, ...}``; ``result`` is the list
  of ``functionResponse`` parts). Tool results are also recorded as their own
  ``user`` message of ``functionResponse`` parts, so a resume sends each result
  twice; after one resume the history is rewritten (``$set.messages``) with model
  messages holding ``functionCall`` parts and ``<id>_response`` user messages.
- Gemini CLI writes to the file on every resume (a new header, ``$set`` records,
  the rewritten history). A resume in another minute than the file's name writes
  its new header to a second file ``session-<now>-<id8>.jsonl`` holding no
  conversation; ``--resume <id>`` picks, among the files holding a conversation
  with that id, the one with the latest ``lastUpdated``. With
  ``general.sessionRetention`` on, start-up deletes every ``session-*.json[l]``
  file in ``chats/`` that holds no resumable conversation, and with it every file
  sharing its ``-<id8>`` name ending (but the running session's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.gemini_cli.js import js_trim, lines, parse_json, part_to_string

IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")


@dataclass
class Loaded:
    """The conversation record Gemini CLI builds from a file."""

    metadata: dict[str, Any]
    messages: list[dict[str, Any]]  # the message records, in history order
    first_user: str | None  # the first resumable user text met in the file
    legacy: bool = False  # read as one JSON object (a ``.json`` session)
    warnings: list[str] = field(default_factory=list)
    torn: bool = False  # the last line has no line end

    @property
    def session_id(self) -> str | None:
        sid = self.metadata.get("sessionId")
        return sid if isinstance(sid, str) else None

    @property
    def valid(self) -> bool:
        """Gemini CLI reads a conversation from it (a session id and project hash)."""
        return isinstance(self.metadata.get("sessionId"), str) and isinstance(
            self.metadata.get("projectHash"), str
        )


def is_ignored_user_text(text: str) -> bool:
    trimmed = js_trim(text)
    return not trimmed or trimmed.startswith(IGNORED_PREFIXES)


def is_resumable(message: dict[str, Any]) -> bool:
    """A message that makes a session worth resuming (Gemini CLI lists only those)."""
    content = message.get("content")
    text = part_to_string(content) if content else ""
    kind = message.get("type")
    if kind == "user":
        return not is_ignored_user_text(text)
    if kind == "gemini":
        calls, thoughts = message.get("toolCalls"), message.get("thoughts")
        return bool(
            js_trim(text)
            or (isinstance(calls, list) and calls)
            or (isinstance(thoughts, list) and thoughts)
        )
    return False


def _first_text(content: Any) -> str | None:
    if isinstance(content, list):
        return "".join(
            p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else ""
            for p in content
        )
    return content if isinstance(content, str) else None


class _Folder:
    """Gemini CLI's fold: an id-keyed, insertion-ordered map of messages."""

    def __init__(self) -> None:
        self.metadata: dict[str, Any] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        self.first_user: str | None = None

    def note_first_user(self, msg: dict[str, Any]) -> None:
        if not self.first_user and msg.get("type") == "user" and is_resumable(msg):
            content = msg.get("content")
            if content:
                self.first_user = _first_text(content)

    def add(self, msg: dict[str, Any]) -> None:
        self.note_first_user(msg)
        self.messages[msg["id"]] = msg

    def rewind(self, target: str) -> None:
        if target in self.messages:
            keys = list(self.messages)
            for key in keys[keys.index(target) :]:
                del self.messages[key]
        else:
            self.messages.clear()

    def take(self, record: Any) -> None:
        if not isinstance(record, dict):
            return
        if isinstance(record.get("$rewindTo"), str):
            self.rewind(record["$rewindTo"])
        elif isinstance(record.get("id"), str):
            self.add(record)
        elif isinstance(record.get("$set"), dict | list):
            update = record["$set"]
            if isinstance(update, list):  # JavaScript spreads an array by index
                update = {str(i): v for i, v in enumerate(update)}
            if isinstance(update.get("messages"), list):
                self.messages.clear()
                for msg in update["messages"]:
                    if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                        self.add(msg)
            self.metadata.update(update)
        elif isinstance(record.get("sessionId"), str) and isinstance(
            record.get("projectHash"), str
        ):
            self.metadata.update(record)
            if isinstance(record.get("messages"), list):
                for msg in record["messages"]:
                    if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                        self.add(msg)


def load(data: bytes, path: Path) -> Loaded:
    """The conversation Gemini CLI loads from ``data`` (the bytes of ``path``)."""
    folder = _Folder()
    warnings: list[str] = []
    for number, _, raw in lines(data):
        if not js_trim(raw.decode("utf-8", "replace")):
            continue
        try:
            record = parse_json(raw)
        except (ValueError, RecursionError):
            warnings.append(f"{path}:{number}: not JSON; Gemini CLI skips this line")
            continue
        folder.take(record)
    torn = bool(data) and not data.endswith((b"\n", b"\r"))
    loaded = Loaded(
        folder.metadata,
        list(folder.messages.values()),
        folder.first_user,
        warnings=warnings,
        torn=torn,
    )
    if loaded.valid:
        return loaded
    legacy = _legacy(data)
    return legacy if legacy is not None else loaded


def _legacy(data: bytes) -> Loaded | None:
    try:
        record = parse_json(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or "sessionId" not in record:
        return None
    messages = record.get("messages")
    found = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    metadata = {k: v for k, v in record.items() if k != "messages"}
    first = next((m for m in found if m.get("type") == "user" and is_resumable(m)), None)
    first_user = _first_text(first.get("content")) if first else None
    return Loaded(metadata, found, first_user, legacy=True)

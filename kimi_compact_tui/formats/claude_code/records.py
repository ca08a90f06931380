"""Reading a Claude Code transcript: its lines as records.

Facts (Claude Code 2.1.197, checked against its own runs and its loader; older
2.0.x transcripts share the shapes below, without ``queue-operation``,
``last-prompt``, ``mode`` and ``progress`` records, and with ``summary`` records):

- **Where.** ``$CLAUDE_CONFIG_DIR`` (else ``~/.claude``) ``/projects/<the work
  folder with every non-alphanumeric character as "-">/<session uuid>.jsonl``.
  Only files named ``<uuid>.jsonl`` are sessions to the agent. Sub-agent
  transcripts live beside them (``agent-<id>.jsonl``, or ``<session
  uuid>/subagents/agent-<id>.jsonl``) and are not the main history.
- **Lines.** One JSON object per line, written with ``JSON.stringify`` (compact,
  UTF-8 raw) and appended. A line that does not parse is skipped silently.
- **Transcript records** are ``user``, ``assistant``, ``attachment`` and
  ``system``: they carry ``uuid`` and ``parentUuid`` (key order ``parentUuid``
  first, ``uuid`` then ``timestamp``, which the loader's fast path for files over
  5 MB relies on), ``isSidechain``, ``sessionId``, ``cwd``, ``version``.
  ``progress`` records are dropped on load, their children re-parented to the
  progress record's parent. Everything else is metadata and never sent:
  ``queue-operation``, ``last-prompt`` (``leafUuid``: the leaf of the last turn),
  ``mode``, ``permission-mode``, ``file-history-snapshot``, ``custom-title``,
  ``ai-title``, ``summary`` (older titles, keyed by ``leafUuid``).
- **The history** is the chain from a leaf back through ``parentUuid`` to a
  record whose parent is null. The leaf is, in short, the last transcript record
  (the ``last-prompt`` leaf when the last record does not descend from it), walked
  up to its nearest ``user``/``assistant`` record, then followed by the
  attachments hanging from it. A ``compact_boundary`` record resets the
  ``last-prompt`` leaf.
- **Assistant replies** are one record per content block (text, thinking,
  tool_use), all sharing ``message.id``; the loader also pulls in records of the
  same ``message.id`` that are off the chain, and they are sent as one assistant
  message. A copy of an assistant record keeping its old ``message.id`` is thus
  merged with the original and sent twice.
- **Tool results** are ``user`` records whose content holds ``tool_result``
  blocks (``tool_use_id``, ``content``, ``is_error``), with a ``toolUseResult``
  field and ``sourceToolAssistantUUID``.
- **What is sent.** ``user`` records (``isMeta`` ones too: caveats, command
  echoes; the compaction summary, ``isCompactSummary``) and ``assistant`` records
  (not the synthetic API-error ones); ``attachment`` records rendered by the agent,
  sent as role ``system``; ``system`` records only with subtype
  ``local_command`` (as user text). Adjacent messages of one role are merged.
  The agent adds its own prefix: the top-level system prompt, and a context
  reminder prepended to the first user message.
- **Compaction.** A ``system`` record ``subtype: compact_boundary`` with
  ``parentUuid: null``, ``logicalParentUuid`` (the old leaf) and
  ``compactMetadata``, then a ``user`` record ``isCompactSummary: true``. The
  history starts at the last boundary. Claude Code's own ``/compact`` keeps the
  last reply in place with ``compactMetadata.preservedSegment {headUuid,
  anchorUuid, tailUuid}``: that segment is re-linked after the anchor (the
  summary) and every record before the boundary is dropped on load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRANSCRIPT_TYPES = ("user", "assistant", "attachment", "system")
META_TYPES = (
    "queue-operation",
    "last-prompt",
    "mode",
    "permission-mode",
    "file-history-snapshot",
    "custom-title",
    "ai-title",
    "summary",
    "progress",
    "tag",
    "agent-name",
    "attribution-snapshot",
    "content-replacement",
)

# The ends of a file (see ClaudeState.tail).
TAIL_NEWLINE = "newline"  # ends with "\n" (or is empty)
TAIL_UNTERMINATED = "unterminated"  # the last line parses but has no "\n"
TAIL_TORN = "torn"  # the last line has no "\n" and does not parse: being written


@dataclass(frozen=True, slots=True)
class Record:
    """One parsed line: its 1-based line number, byte span and object."""

    line: int
    start: int
    end: int  # the end of the line's bytes (before its "\n")
    obj: dict[str, Any]

    @property
    def kind(self) -> Any:
        return self.obj.get("type")

    @property
    def uuid(self) -> str | None:
        value = self.obj.get("uuid")
        return value if type(value) is str else None

    @property
    def parent(self) -> str | None:
        value = self.obj.get("parentUuid")
        return value if type(value) is str and value else None

    @property
    def sidechain(self) -> bool:
        return self.obj.get("isSidechain") is True

    @property
    def timestamp(self) -> str:
        value = self.obj.get("timestamp")
        return value if type(value) is str else ""

    def is_transcript(self) -> bool:
        return self.kind in TRANSCRIPT_TYPES and self.uuid is not None

    def is_boundary(self) -> bool:
        return self.kind == "system" and self.obj.get("subtype") == "compact_boundary"

    @property
    def message(self) -> dict[str, Any]:
        value = self.obj.get("message")
        return value if type(value) is dict else {}


@dataclass(frozen=True)
class Transcript:
    records: tuple[Record, ...]
    warnings: tuple[str, ...]
    tail: str


def read_records(data: bytes, path: Path) -> Transcript:
    """Every line that is a JSON object, in file order; the others are skipped
    (as Claude Code skips them) with one warning each naming ``file:line``."""
    records: list[Record] = []
    warnings: list[str] = []
    tail = TAIL_NEWLINE
    pos, line, size = 0, 0, len(data)
    while pos < size:
        line += 1
        nl = data.find(b"\n", pos)
        end = size if nl < 0 else nl
        raw = data[pos:end].strip()
        if raw:
            obj = _decode(raw)
            if obj is None:
                if nl < 0:
                    tail = TAIL_TORN
                    warnings.append(
                        f"{path}:{line}: skipped a partial last record (no end of line); "
                        "Claude Code skips it too"
                    )
                else:
                    warnings.append(
                        f"{path}:{line}: skipped a line that is not a JSON object; "
                        "Claude Code skips it too"
                    )
            else:
                records.append(Record(line, pos, end, obj))
                if nl < 0:
                    tail = TAIL_UNTERMINATED
        pos = end + 1
    return Transcript(tuple(records), tuple(warnings), tail)


def _decode(raw: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return obj if type(obj) is dict else None


def looks_like_record(obj: Any) -> bool:
    """A record only Claude Code writes (for recognising a transcript)."""
    if type(obj) is not dict:
        return False
    kind = obj.get("type")
    if kind in TRANSCRIPT_TYPES:
        return "parentUuid" in obj and type(obj.get("uuid")) is str and "sessionId" in obj
    if kind == "summary":
        return type(obj.get("leafUuid")) is str and "summary" in obj
    if kind == "file-history-snapshot":
        return "messageId" in obj and "snapshot" in obj
    return kind in META_TYPES and type(obj.get("sessionId")) is str and "role" not in obj

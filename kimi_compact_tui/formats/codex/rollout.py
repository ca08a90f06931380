"""Reading a Codex CLI rollout (``rollout-<time>-<id>.jsonl``) line by line.

Facts (checked against Codex 0.171.0 running offline, and its public source):

- One JSON object per line: ``{"timestamp", "ordinal", "type", "payload"}``
  (some records carry a ``metadata`` object too). Rollouts whose
  ``session_meta`` says ``history_mode: "paginated"`` number their records
  with ``ordinal`` (0, 1, 2, ...); older rollouts have no ``ordinal`` at all.
  Codex writes compact JSON, UTF-8 unescaped, one ``\\n`` per record.
- Record types: ``session_meta`` (first; ``id``, ``cwd``, ``cli_version``,
  ``base_instructions.text``), ``turn_context``, ``world_state`` (the
  context Codex last showed the model), ``token_usage_record``, ``event_msg``
  (the UI event stream; only ``thread_rolled_back`` changes the model history),
  ``response_item`` (one model-visible item: ``message`` with role
  ``developer``/``user``/``assistant``, ``reasoning``, ``function_call`` and
  ``function_call_output`` joined by ``call_id``, ``custom_tool_call(_output)``,
  ``local_shell_call``, ``web_search_call``, ...) and ``compacted``
  (``{message, replacement_history}``: the history becomes
  ``replacement_history``; without it, every real user message plus
  ``message`` as a user message).
- Codex silently skips a line that is not JSON, has an unknown ``type`` or a
  payload it cannot read, and a record with no ``timestamp``. On resume it
  refuses a paginated rollout whose last record has no ``ordinal``.
- When the file does not end with ``\\n`` Codex starts its next record on a
  new line: a torn last line stays a skipped line.
- What a resume sends (``POST /v1/responses``, the history in ``input``):
  first a developer message rendered from the base instructions (they differ
  from ``session_meta``'s text by the sections for tools it does not offer),
  then the history, then the new turn. Codex writes its context (developer
  instructions, the environment) as the first history items; after a
  ``compacted`` record with no ``world_state`` after it, it writes that
  context again at the next turn, before the prompt. Items written with a
  ``compacted`` record are sent as they are (ids and extra fields kept).
- Codex resumes a session by id through its SQLite index
  (``state_5.sqlite``: ``threads.rollout_path``; rebuilt from the file names
  when missing, which ignores files beside a rollout); ``thread_history_1.sqlite``
  keeps a UI projection up to a byte offset and ordinal of the rollout, and
  reads on from there at the next start.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECORD_TYPES = frozenset(
    {
        "session_meta",
        "turn_context",
        "world_state",
        "token_usage_record",
        "event_msg",
        "response_item",
        "compacted",
    }
)

TAIL_NEWLINE = "newline"  # the file ends with "\n"
TAIL_UNTERMINATED = "unterminated"  # the last record is whole but has no "\n"
TAIL_TORN = "torn"  # the last line is not a record (a torn write): skipped


@dataclass(frozen=True)
class Record:
    line: int  # 1-based line number in the file
    type: str
    payload: Any
    ordinal: int | None
    timestamp: str


@dataclass
class Rollout:
    records: list[Record]
    tail: str = TAIL_NEWLINE
    warnings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)  # the session_meta payload
    max_ordinal: int | None = None
    last_timestamp: str | None = None

    @property
    def paginated(self) -> bool:
        """Does Codex number this rollout's records (``ordinal``)?"""
        return self.meta.get("history_mode") == "paginated" or self.max_ordinal is not None


def _skip(warnings: list[str], path: Path, line: int, why: str) -> None:
    warnings.append(f"{path}:{line}: {why}; skipped (Codex skips it too)")


def read_rollout(data: bytes, path: Path) -> Rollout:
    """Every record Codex reads from ``data``, in file order."""
    lines = data.split(b"\n")
    rollout = Rollout(records=[])
    last = len(lines) - 1  # the part after the last "\n" (b"" when the file ends with one)
    for index, raw in enumerate(lines):
        number = index + 1
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            if index == last:
                rollout.tail = TAIL_TORN
                rollout.warnings.append(
                    f"{path}:{number}: the last line is not a whole record (a torn write); "
                    "ignored, as Codex ignores it"
                )
            else:
                _skip(rollout.warnings, path, number, "not JSON")
            continue
        if index == last:
            rollout.tail = TAIL_UNTERMINATED
        if type(obj) is not dict:
            _skip(rollout.warnings, path, number, "not a JSON object")
            continue
        kind = obj.get("type")
        if kind not in RECORD_TYPES:
            _skip(rollout.warnings, path, number, f"unknown record type {kind!r}")
            continue
        stamp = obj.get("timestamp")
        if type(stamp) is not str:
            _skip(rollout.warnings, path, number, "no timestamp")
            continue
        ordinal = obj.get("ordinal")
        if type(ordinal) is not int:
            ordinal = None
        elif rollout.max_ordinal is None or ordinal > rollout.max_ordinal:
            rollout.max_ordinal = ordinal
        payload = obj.get("payload")
        if kind in ("session_meta", "response_item", "compacted", "event_msg") and (
            type(payload) is not dict
        ):
            _skip(rollout.warnings, path, number, f"a {kind} record whose payload is not an object")
            continue
        if kind == "session_meta" and not rollout.meta and isinstance(payload, dict):
            rollout.meta = payload
        rollout.records.append(Record(number, kind, payload, ordinal, stamp))
        rollout.last_timestamp = stamp
    return rollout


def first_record(head: bytes) -> dict[str, Any] | None:
    """The first record in the first bytes of a file, when it is whole."""
    for raw in head.split(b"\n")[:3]:
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
        return obj if type(obj) is dict else None
    return None

"""Folding the restorable chain into kimi-code's context history.

The result is the list of kimi-code context messages (its own JSON shape:
``role``, ``content`` parts, ``toolCalls``, ``toolCallId``, ``origin``, ...)
that kimi-code 2.1 holds after a resume, one entry per context message, so
that a position in this list is a position ``compactedCount`` counts.

Assistant turns come from loop events: ``step.begin`` opens a partial
assistant message, ``content.part`` and ``tool.call`` of that step fill it,
``tool.result`` answers a pending call, ``step.end`` seals it (or drops it
when it holds only blank text and no calls); an ``interrupted``/``error``
step end leaves it open. Messages appended while calls are pending wait
until the calls are answered. An open step is settled by the next one: calls
never answered get a synthetic error result. ``context.clear``,
``context.undo`` and ``context.apply_compaction`` replace the history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.jsvalue import js_stringify
from kimi_compact_tui.formats.kimi_code import handoff
from kimi_compact_tui.formats.kimi_code.wire import Entry, is_undo_anchor
from kimi_compact_tui.wording import count

INTERRUPTED_NOTE = "(no result recorded: the call was interrupted; kimi-code sends an error result)"
NUMBER = (int, float)
CONTEXT_TYPES = (
    "context.append_message",
    "context.append_loop_event",
    "context.clear",
    "context.undo",
    "context.apply_compaction",
)


@dataclass
class FoldResult:
    history: list[dict[str, Any]]
    open_turn: str | None = None  # why the journal ends mid-turn, or None
    warnings: list[str] = field(default_factory=list)


class _Fold:
    """kimi-code's loop-event fold over one history list."""

    def __init__(self, history: list[dict[str, Any]]) -> None:
        self.history = history
        self.open_index = _last_partial(history)
        self.open_step: str | None = None  # None: no open step
        self.has_calls = False
        self.vacuous = True
        self.pending: dict[Any, Any] = {}
        self.deferred: list[dict[str, Any]] = []

    def append_message(self, message: dict[str, Any]) -> None:
        if self.pending:
            self.deferred.append(message)
        else:
            self.history.append(message)

    def _flush(self) -> None:
        if self.pending or not self.deferred:
            return
        self.history.extend(self.deferred)
        self.deferred = []

    def _settle_open(self) -> None:
        if self.open_step is None:
            return
        if self.pending:
            for call_id in self.pending:
                self.history.append(interrupted_result(call_id))
            self.pending.clear()
            self._flush()
        if not self.has_calls and self.vacuous:
            if self.open_index >= 0:
                del self.history[self.open_index]
        elif self.open_index >= 0:
            sealed = dict(self.history[self.open_index])
            sealed.pop("partial", None)
            self.history[self.open_index] = sealed
        self.open_index = -1
        self.open_step = None

    def settle(self) -> None:
        self._settle_open()
        self._flush()

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "step.begin":
            self._settle_open()
            self.history.append(
                {"role": "assistant", "content": [], "toolCalls": [], "partial": True}
            )
            self.open_index = len(self.history) - 1
            self.open_step = event.get("uuid")  # without one, no step is open (kimi-code)
            self.has_calls = False
            self.vacuous = True
        elif kind == "step.end":
            if event.get("finishReason") in ("interrupted", "error"):
                return
            self._settle_open()
            self._flush()
        elif kind == "content.part":
            if not self._accepts(event):
                return
            part = event.get("part")
            self._update_open("content", part)
            self.vacuous = self.vacuous and handoff.is_vacuous_part(part)
        elif kind == "tool.call":
            if not self._accepts(event):
                return
            call: dict[str, Any] = {
                "type": "function",
                "id": event.get("toolCallId"),
                "name": event.get("name"),
                "arguments": None if "args" not in event else js_stringify(event["args"]),
            }
            if event.get("extras") is not None:
                call["extras"] = event["extras"]
            self._update_open("toolCalls", call)
            self.pending[event.get("toolCallId")] = event.get("name")
            self.has_calls = True
        elif kind == "tool.result":
            call_id = event.get("toolCallId")
            if call_id not in self.pending:
                return
            del self.pending[call_id]
            result = event.get("result") or {}
            output = result.get("output")
            content = [{"type": "text", "text": output}] if type(output) is str else list(output)  # type: ignore[arg-type]  # a list (kimi-code's own shape)
            message: dict[str, Any] = {
                "role": "tool",
                "content": content,
                "toolCalls": [],
                "toolCallId": call_id,
            }
            for key in ("isError", "note", "durationMs"):
                if result.get(key) is not None:
                    message[key] = result[key]
            self.history.append(message)
            self._flush()

    def _accepts(self, event: dict[str, Any]) -> bool:
        return self.open_step is not None and event.get("stepUuid") == self.open_step

    def _update_open(self, key: str, item: Any) -> None:
        if self.open_index < 0:
            return
        message = dict(self.history[self.open_index])
        message[key] = [*message.get(key, []), item]
        self.history[self.open_index] = message

    def open_turn(self) -> str | None:
        if self.pending:
            n = len(self.pending)
            verb = "has" if n == 1 else "have"
            return f"{count(n, 'tool call')} of the last step {verb} no result yet"
        if self.open_step is not None:
            return "the last step was not finished (interrupted or still running)"
        return None


def interrupted_result(call_id: Any) -> dict[str, Any]:
    """The error result kimi-code gives a call that was never answered (our
    wording; kimi-code sends its own)."""
    return {
        "role": "tool",
        "content": [{"type": "text", "text": INTERRUPTED_NOTE}],
        "toolCalls": [],
        "toolCallId": call_id,
        "isError": True,
        "synthetic": "interrupted",
    }


def _last_partial(history: list[dict[str, Any]]) -> int:
    for i in range(len(history) - 1, -1, -1):
        if history[i].get("partial") is True:
            return i
    return -1


def fold(chain: list[Entry], agent_id: str, path: Path) -> FoldResult:
    """The history kimi-code resumes from ``chain`` (see module doc). The
    last open step is settled as kimi-code's next step would settle it;
    ``open_turn`` says so."""
    warnings: list[str] = []
    state = _Fold([])
    for entry in chain:
        record = entry.record
        kind = record["type"]
        if kind not in CONTEXT_TYPES:
            continue
        where = f"{path}:{entry.physical}"
        owner = record.get("agentId", agent_id)
        if owner != agent_id:
            warnings.append(f"{where}: {kind} for agent {owner!r}, not {agent_id!r}; skipped")
            continue
        problem = _malformed(kind, record)
        if problem:
            warnings.append(f"{where}: malformed {kind} ({problem}); skipped")
            continue
        if kind == "context.append_message":
            state.append_message(record["message"])
        elif kind == "context.append_loop_event":
            state.event(record["event"])
        elif kind == "context.clear":
            if state.history:
                state = _Fold([])
        elif kind == "context.undo":
            history = state.history
            if history:
                cut = undo_cut(history, int(record["count"]))
                if cut is not None:
                    state = _Fold(history[:cut])
        else:  # context.apply_compaction
            state = _Fold(handoff.compacted_history(state.history, record, where))
    open_turn = state.open_turn()
    state.settle()
    return FoldResult(state.history, open_turn, warnings)


def undo_cut(history: list[dict[str, Any]], count: int) -> int | None:
    """Where kimi-code's ``context.undo {count}`` cuts the history, or None
    when it cannot undo that many turns (it then changes nothing)."""
    remaining, cut, removed = count, -1, 0
    for i in range(len(history) - 1, -1, -1):
        if remaining <= 0:
            break
        message = history[i]
        kind = _origin_kind(message)
        if kind == "injection":
            continue
        if kind == "compaction_summary":
            break
        if is_undo_anchor(message):
            remaining -= 1
            removed += 1
            cut = i
            while cut > 0 and _owned_by(history[cut - 1], message):
                cut -= 1
    return cut if cut >= 0 and removed >= count else None


def _origin_kind(message: dict[str, Any]) -> Any:
    origin = message.get("origin")
    return origin.get("kind") if type(origin) is dict else None


def _owned_by(message: dict[str, Any], prompt: dict[str, Any]) -> bool:
    origin = message.get("origin")
    if type(origin) is not dict or origin.get("kind") != "injection":
        return False
    owner = origin.get("ownerPromptId")
    return owner is not None and owner == prompt.get("id")


def _malformed(kind: str, record: dict[str, Any]) -> str | None:
    """What kimi-code's record schema (or its fold) rejects, or None."""
    if "agentId" in record and type(record["agentId"]) is not str:
        return "agentId is not a string"
    if kind == "context.append_message":
        message = record.get("message")
        if type(message) is not dict or type(message.get("role")) is not str:
            return "message is not a message object"
        if type(message.get("content")) is not list:
            return "message content is not a list of parts"
        return None
    if kind == "context.append_loop_event":
        event = record.get("event")
        if type(event) is not dict:
            return "event is not an object"
        if event.get("type") == "tool.call" and type(event.get("toolCallId")) is not str:
            return "tool.call has no toolCallId"
        if event.get("type") == "tool.result" and type(event.get("result")) is not dict:
            return "tool.result has no result object"
        if event.get("type") == "tool.result":
            output = event["result"].get("output")
            if type(output) not in (str, list):
                return "tool.result output is neither text nor parts"
        return None
    if kind == "context.undo":
        count = record.get("count")
        if type(count) not in (int, float) or count != int(count) or not 0 < count < 2**53:  # type: ignore[arg-type]  # a number: type() checked first
            return "count is not a positive integer"
        return None
    if kind == "context.apply_compaction":
        return handoff.malformed_compaction(record)
    return None


__all__ = ["FoldResult", "fold", "interrupted_result", "undo_cut"]

"""A session's rows as this tool's messages, exactly as opencode sends them on resume.

**A pending undo.** When the session's ``revert`` is set (opencode's undo, not yet
confirmed), opencode's next prompt first deletes the rows it undid: every message
from ``revert.messageID`` on (from the one after it when a ``partID`` is given, and
then that message's parts from ``partID`` on). The rows are read as after that.

**Which rows.** opencode loads every message row (``ORDER BY time_created, id``) and,
walking back from the newest, stops at its latest compaction that counts:

- a compaction counts when an assistant row with ``summary`` set, a ``finish`` and no
  ``error`` names as ``parentID`` a user row holding a ``compaction`` part;
- that part's ``tail_start_id`` names the first kept message: the walk goes on back
  to that row; without one, nothing before the compaction row is kept;
- the kept rows are then ordered [compaction row, ... its summary row, the rows from
  ``tail_start_id`` up to the compaction row, the rows after the summary]. When the
  ``tail_start_id`` names no row, the walk never stops and the whole session is
  sent in stored order.

**Which messages** (one row may give several):

- a ``user`` row: one ``user`` message of its text parts (``ignored`` and empty ones
  left out), file parts (references, never data) and subtask parts; a row with none
  gives nothing;
- opencode's **framing of a summary**: a ``compaction`` part is sent as a fixed
  question of opencode's own, a user message that is not the conversation's. Here it
  is a ``user`` message holding one part ``{"type": "opencode:compaction", "auto":
  ...}`` and no text, marked ``"opencode": {"framing": true}``: it is kept in its
  place (so the list matches what opencode sends, message for message) and never
  read as a prompt's words;
- an ``assistant`` row (skipped when it has an ``error``, unless the error is an
  abort and it has more than step starts and reasoning): each step (its parts
  between ``step-start`` parts) is one ``assistant`` message (``text`` parts,
  ``think`` parts for reasoning: kept apart, never compaction input, and
  ``tool_calls``), followed by one ``tool`` message per tool part of the step (its
  output; an error's text; a pruned output, ``time.compacted`` set, is a
  ``{"type": "opencode:cleared"}`` part as opencode sends a fixed placeholder; an
  unfinished call an ``{"type": "opencode:interrupted"}`` part). The summary row of a
  compaction is marked ``"opencode": {"summary": true}``.

Row ids stay out of the messages: :class:`Origin` says, per message, which row and
parts it came from and whether it is the first message of its row (only there can
a boundary be written: ``tail_start_id`` names a row, so a boundary inside an
assistant row holding a tool call and its result moves to the row's start).

**The todo list.** opencode shows a session's todos (its ``todo`` table: what its
``todowrite`` tool last set) beside the conversation. When no ``todowrite`` call is
among the messages sent (its calls are behind opencode's own compaction), the list
is put as one made ``todowrite`` call (no id, so no result belongs to it; marked
``"opencode": {"todo_table": true}``) on the first reply after any earlier
summary: the plan the extractor reads, with the statuses opencode shows. It is
never written: :func:`without_todo_plan` takes it off the messages kept.

Not followed here: opencode sends reasoning as plain text when the resuming model
differs from the one that wrote it, truncates tool outputs only when asked to,
and sends tool attachments and file data (kept here as references).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any

from kimi_compact_tui.formats.opencode.db import MessageRow, PartRow, SessionRows
from kimi_compact_tui.model import Message

ABORTED_ERROR = "MessageAbortedError"
FRAMING_PART = "opencode:compaction"
CLEARED_PART = "opencode:cleared"
INTERRUPTED_PART = "opencode:interrupted"
FILE_REF = "opencode-file:"


@dataclass(frozen=True)
class Origin:
    """Where one message came from."""

    message_id: str  # its message row
    part_ids: tuple[str, ...]  # the parts it was made of
    row_start: bool  # the first message made from its row (a boundary may be put here)


@dataclass(frozen=True)
class History:
    rows: SessionRows
    messages: tuple[Message, ...]
    origins: tuple[Origin, ...]
    sent_rows: tuple[str, ...]  # the message rows opencode sends, in its order
    compaction_id: str | None = None  # the user row of the compaction applied, if any
    tail_start_id: str | None = None  # its first kept row, if any

    def boundary_row(self, index: int) -> str | None:
        """The row a boundary before message ``index`` names (``tail_start_id``), or
        None when that message is not the first of its row."""
        origin = self.origins[index]
        return origin.message_id if origin.row_start else None

    def safe_boundary(self, index: int) -> int:
        """The nearest index at or before ``index`` where a boundary can be written."""
        while index > 0 and not self.origins[index].row_start:
            index -= 1
        return index


def as_dict(value: Any) -> dict[str, Any]:
    """A JSON object, or an empty one for anything else."""
    return value if isinstance(value, dict) else {}


def _is_summary(row: MessageRow) -> bool:
    data = row.data
    return (
        row.role == "assistant"
        and bool(data.get("summary"))
        and bool(data.get("finish"))
        and not data.get("error")
    )


def _compaction_part(row: MessageRow) -> PartRow | None:
    return next((p for p in row.parts if p.type == "compaction"), None)


def _tail_part(row: MessageRow) -> PartRow | None:
    """The row's first compaction part that has a ``tail_start_id`` key."""
    return next(
        (p for p in row.parts if p.type == "compaction" and "tail_start_id" in p.data), None
    )


def sent_rows(messages: tuple[MessageRow, ...]) -> tuple[list[MessageRow], int, int, int]:
    """The rows opencode sends, in its order; also the indexes (in stored order of the
    kept rows) of the compaction row applied, its summary and its tail start, or -1."""
    kept: list[MessageRow] = []
    summarized: set[str] = set()
    tail: str | None = None
    for row in reversed(messages):
        kept.append(row)
        if tail is not None:
            if row.id == tail:
                break
            continue
        if row.role == "user" and row.id in summarized:
            part = _compaction_part(row)
            if part is None:
                continue
            start = part.data.get("tail_start_id")
            if not start:
                break
            tail = str(start)
            if row.id == tail:
                break
            continue
        if _is_summary(row):
            parent = row.data.get("parentID")
            if isinstance(parent, str):
                summarized.add(parent)
    kept.reverse()
    compaction = -1
    for i, row in enumerate(kept):
        if row.role == "user" and _tail_part(row) is not None:
            compaction = i
    if compaction < 0:
        return kept, -1, -1, -1
    head = kept[compaction]
    part = _tail_part(head)
    summary = next(
        (
            i
            for i, row in enumerate(kept)
            if i > compaction
            and row.role == "assistant"
            and row.data.get("summary")
            and row.data.get("parentID") == head.id
        ),
        -1,
    )
    start_id = part.data.get("tail_start_id") if part is not None else None
    start = next((i for i, row in enumerate(kept) if start_id and row.id == start_id), -1)
    if 0 <= start < compaction < summary:
        ordered = kept[compaction : summary + 1] + kept[start:compaction] + kept[summary + 1 :]
        return ordered, compaction, summary, start
    return kept, -1, -1, -1


def _file_ref(url: Any, mime: str) -> str:
    if not isinstance(url, str):
        return FILE_REF + mime
    if not url.startswith("data:"):
        return url
    return f"{FILE_REF}{mime};sha256={hashlib.sha256(url.encode()).hexdigest()}"


def _user_parts(row: MessageRow) -> tuple[list[dict[str, Any]], list[str], bool]:
    parts: list[dict[str, Any]] = []
    ids: list[str] = []
    framing = False
    for p in row.parts:
        d = p.data
        kind = p.type
        if kind == "text" and not d.get("ignored") and d.get("text") not in ("", None):
            parts.append({"type": "text", "text": str(d.get("text"))})
        elif kind == "file" and d.get("mime") not in ("text/plain", "application/x-directory"):
            mime = str(d.get("mime") or "application/octet-stream")
            ref = _file_ref(d.get("url"), mime)
            if mime.startswith("image/"):
                parts.append({"type": "image_url", "image_url": {"url": ref}})
            else:
                parts.append({"type": "opencode:file", "mime": mime, "url": ref})
        elif kind == "compaction":
            parts.append({"type": FRAMING_PART, "auto": bool(d.get("auto"))})
            framing = True
        elif kind == "subtask":
            parts.append({"type": "opencode:subtask", "agent": d.get("agent")})
        else:
            continue
        ids.append(p.id)
    return parts, ids, framing


def _skipped_assistant(row: MessageRow) -> bool:
    error = row.data.get("error")
    if not error:
        return False
    aborted = isinstance(error, dict) and error.get("name") == ABORTED_ERROR
    return not (aborted and any(p.type not in ("step-start", "reasoning") for p in row.parts))


def _arguments(value: Any) -> str:
    """A tool input as JSON text, the way JavaScript's JSON.stringify writes it."""
    return json.dumps(value if value is not None else {}, ensure_ascii=False, separators=(",", ":"))


def _tool_result(part: PartRow) -> dict[str, Any] | None:
    state = as_dict(part.data.get("state"))
    status = state.get("status")
    content: Any
    if status == "completed":
        times = as_dict(state.get("time"))
        if times.get("compacted"):
            content = [{"type": CLEARED_PART}]
        else:
            output = state.get("output")
            content = output if isinstance(output, str) else _arguments(output)
    elif status == "error":
        meta = as_dict(state.get("metadata"))
        if meta.get("interrupted") is True and isinstance(meta.get("output"), str):
            content = meta["output"]
        else:
            content = str(state.get("error") or "")
    elif status in ("pending", "running"):
        content = [{"type": INTERRUPTED_PART}]
    else:
        return None
    result = {"role": "tool", "content": content, "tool_call_id": part.data.get("callID")}
    code = as_dict(state.get("metadata")).get("exit")
    if status == "error":  # how it ended, for the extractor (roles.tool_failed)
        result["opencode"] = {"error": True}
    elif isinstance(code, int) and not isinstance(code, bool):
        result["opencode"] = {"exit": code}
    return result


class _Steps:
    """An assistant row's parts cut into steps at each ``step-start``."""

    def __init__(self) -> None:
        self.out: list[tuple[Message, tuple[str, ...]]] = []
        self._reset()

    def _reset(self) -> None:
        self.content: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.results: list[tuple[dict[str, Any], str]] = []
        self.ids: list[str] = []

    def flush(self, mark: dict[str, Any] | None) -> None:
        if self.content or self.calls:
            fields: dict[str, Any] = {}
            if self.calls:
                fields["tool_calls"] = self.calls
            if mark and not self.out:
                fields["opencode"] = mark
            self.out.append((Message.make("assistant", self.content, **fields), tuple(self.ids)))
            for result, pid in self.results:
                self.out.append((Message(result), (pid,)))
        self._reset()

    def add(self, part: PartRow) -> None:
        d = part.data
        kind = part.type
        if kind == "text":
            self.content.append({"type": "text", "text": str(d.get("text") or "")})
        elif kind == "reasoning":
            self.content.append({"type": "think", "think": str(d.get("text") or "")})
        elif kind == "tool":
            result = _tool_result(part)
            if result is None:
                return
            state = as_dict(d.get("state"))
            self.calls.append(
                {
                    "id": d.get("callID"),
                    "type": "function",
                    "function": {
                        "name": d.get("tool"),
                        "arguments": _arguments(state.get("input")),
                    },
                }
            )
            self.results.append((result, part.id))
        else:
            return
        self.ids.append(part.id)


def _assistant_messages(row: MessageRow) -> list[tuple[Message, tuple[str, ...]]]:
    if _skipped_assistant(row):
        return []
    mark = {"summary": True} if row.data.get("summary") else None
    steps = _Steps()
    for part in row.parts:
        if part.type == "step-start":
            steps.flush(mark)
        else:
            steps.add(part)
    steps.flush(mark)
    return steps.out


def after_revert(rows: SessionRows) -> tuple[MessageRow, ...]:
    """The message rows left once opencode has applied the session's pending undo."""
    revert = rows.session.revert
    messages = rows.messages
    if not revert:
        return messages
    at = next((i for i, m in enumerate(messages) if m.id == revert.get("messageID")), -1)
    if at < 0:
        return messages
    part_id = revert.get("partID")
    if not part_id:
        return messages[:at]
    cut = messages[at]
    index = next((i for i, p in enumerate(cut.parts) if p.id == part_id), -1)
    if index >= 0:
        cut = replace(cut, parts=cut.parts[:index])
    return messages[:at] + (cut,)


def resume_history(rows: SessionRows) -> History:
    """The messages opencode sends for this session when it resumes (after its system
    prompt, before the new turn)."""
    ordered, compaction, _summary, _start = sent_rows(after_revert(rows))
    messages: list[Message] = []
    origins: list[Origin] = []
    for row in ordered:
        made: list[tuple[Message, tuple[str, ...]]] = []
        if row.role == "user":
            parts, part_ids, framing = _user_parts(row)
            if parts:
                fields = {"opencode": {"framing": True}} if framing else {}
                made.append((Message.make("user", parts, **fields), tuple(part_ids)))
        elif row.role == "assistant":
            made = _assistant_messages(row)
        for i, (message, ids) in enumerate(made):
            messages.append(message)
            origins.append(Origin(row.id, ids, i == 0))
    compaction_id = ordered[0].id if compaction >= 0 else None
    tail_id = _tail_of(ordered[0]) if compaction >= 0 else None
    return History(
        rows, tuple(messages), tuple(origins), tuple(r.id for r in ordered), compaction_id, tail_id
    )


TODO_TOOL = "todowrite"
TODO_MARK = "todo_table"


def with_todo_plan(
    messages: tuple[Message, ...], todos: tuple[tuple[str, str], ...]
) -> tuple[Message, ...]:
    """``messages`` with the session's todo list as one made ``todowrite`` call on the
    first reply after any earlier summary, when no message calls ``todowrite``."""
    if not todos or any(_calls_todowrite(m) for m in messages):
        return messages
    at = next(
        (
            i
            for i, m in enumerate(messages)
            if m.role == "assistant" and not as_dict(m.data.get("opencode")).get("summary")
        ),
        None,
    )
    if at is None:
        return messages
    listed = [{"content": content, "status": status} for content, status in todos]
    call = {
        "type": "function",
        "function": {"name": TODO_TOOL, "arguments": json.dumps({"todos": listed})},
        "opencode": {TODO_MARK: True},
    }
    target = messages[at]
    made = Message({**target.data, "tool_calls": [*target.tool_calls, call]}, target.raw)
    return (*messages[:at], made, *messages[at + 1 :])


def without_todo_plan(message: Message) -> Message:
    """``message`` without the call :func:`with_todo_plan` made (the same message
    when it has none)."""
    calls = message.tool_calls
    kept = [c for c in calls if not (isinstance(c, dict) and _made(c))]
    if len(kept) == len(calls):
        return message
    data = {k: v for k, v in message.data.items() if k != "tool_calls"}
    if kept:
        data["tool_calls"] = kept
    return Message(data, message.raw)


def _made(call: dict[str, Any]) -> bool:
    return as_dict(call.get("opencode")).get(TODO_MARK) is True


def _calls_todowrite(message: Message) -> bool:
    return any(
        isinstance(c, dict) and as_dict(c.get("function")).get("name") == TODO_TOOL
        for c in message.tool_calls
    )


def _tail_of(row: MessageRow) -> str | None:
    part = _tail_part(row)
    start = part.data.get("tail_start_id") if part is not None else None
    return start if isinstance(start, str) else None

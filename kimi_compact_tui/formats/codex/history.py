"""The model history Codex rebuilds from a rollout when it resumes.

Replayed in file order: a ``response_item`` is appended; a ``compacted``
record replaces the history with its ``replacement_history`` (without one:
every real user message so far, as plain text, then ``message`` as a user
message); an ``event_msg`` of type ``thread_rolled_back`` drops the last
``num_turns`` user turns (from the N-th last real user message on). Codex
then sends the history with every call that has no output followed by a
synthetic output (``"aborted"``), outputs with no call dropped, and no
``system``-role messages, ``ghost_snapshot`` or unknown item types.

A person's prompt that the rollout holds only as a UI event (``event_msg``
``user_message``, or ``item_completed`` of a ``UserMessage``), with no
``response_item`` of it (Codex Desktop writes rollouts so), is never sent: Codex
rebuilds the model's history from response items alone (checked against Codex
0.171.0, ``tests/agents/test_codex_unsent.py``). Such a prompt is kept in the
history at its place, marked ``unsent``: shown, never sent, never written back.
An event is the echo of a sent prompt when a real user message holding its
text lies between the events before and after it.

Each history item remembers where it came from (``Origin``) so a kept item is
written back exactly as it was read.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.formats.codex.rollout import Rollout

CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")
# Items Codex sends to the model besides messages, calls and outputs.
OTHER_SENT_TYPES = (
    "reasoning",
    "web_search_call",
    "image_generation_call",
    "tool_search_call",
    "tool_search_output",
    "compaction",
)

SUMMARY_KIND = "compaction.summary"

# Text a user message starts with when Codex itself wrote it (context it shows the
# model), not the person: such messages are not user turns.
CONTEXT_USER_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions for",
    "<skill>",
    "<skills_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
)


@dataclass(frozen=True)
class HistoryItem:
    item: dict[str, Any]  # the response item, as read
    line: int  # the rollout line it was read from (of its response_item or compacted record)
    synthetic: bool = False  # made by Codex on resume (an "aborted" output), never written
    unsent: bool = False  # a prompt the person saw in Codex's UI, never sent nor written


@dataclass(frozen=True)
class History:
    items: tuple[HistoryItem, ...]
    compactions: int  # compacted records replayed
    rollbacks: int
    open_turn: str | None  # why the rollout ends mid-turn, or None


def _texts(item: dict[str, Any]) -> list[str]:
    content = item.get("content")
    if not isinstance(content, list):
        return []
    return [
        p["text"]
        for p in content
        if isinstance(p, dict) and isinstance(p.get("text"), str) and p.get("type") != "input_image"
    ]


def is_context_message(item: dict[str, Any]) -> bool:
    """A developer message, or a user message Codex wrote itself (environment
    context, instructions, skills, shell command notes, ...)."""
    if item.get("type") != "message":
        return False
    role = item.get("role")
    if role == "developer":
        return True
    if role != "user":
        return False
    if is_codex_summary(item):
        return False
    passthrough = item.get("internal_chat_message_metadata_passthrough")
    if isinstance(passthrough, dict):
        metas = passthrough.get("content_item_metadata")
        if isinstance(metas, list) and metas:
            kinds = [((m or {}).get("provenance") or {}).get("type") for m in metas]
            if all(k == "harness" for k in kinds):
                return True
    return any(t.lstrip().lower().startswith(CONTEXT_USER_PREFIXES) for t in _texts(item))


def is_codex_summary(item: dict[str, Any]) -> bool:
    """The summary message of Codex's own compaction (its metadata says so)."""
    passthrough = item.get("internal_chat_message_metadata_passthrough")
    kinds = passthrough.get("content_item_kinds") if isinstance(passthrough, dict) else None
    return isinstance(kinds, list) and SUMMARY_KIND in kinds


def is_user_turn(item: dict[str, Any]) -> bool:
    return (
        item.get("type") == "message"
        and item.get("role") == "user"
        and not is_context_message(item)
        and not is_codex_summary(item)
    )


def is_sent(item: dict[str, Any]) -> bool:
    """Does Codex send this history item to the model?"""
    kind = item.get("type")
    if kind == "message":
        return item.get("role") in ("user", "assistant", "developer")
    return kind in CALL_TYPES or kind in OUTPUT_TYPES or kind in OTHER_SENT_TYPES


def _user_text_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _rollback(items: list[HistoryItem], turns: int) -> list[HistoryItem]:
    if turns <= 0:
        return items
    starts = [i for i, h in enumerate(items) if is_user_turn(h.item) and not h.unsent]
    if not starts:
        return items
    cut = starts[0] if turns >= len(starts) else starts[len(starts) - turns]
    return items[:cut]


def _open_turn(rollout: Rollout) -> str | None:
    """Why the rollout ends inside a turn: a started turn with no end event."""
    started: str | None = None
    for rec in rollout.records:
        if rec.type != "event_msg":
            continue
        kind = rec.payload.get("type")
        if kind in ("task_started", "turn_started"):
            started = str(rec.payload.get("turn_id") or "?")
        elif kind in ("task_complete", "turn_complete", "turn_aborted"):
            started = None
    if started is not None:
        return f"turn {started} has started and not ended"
    return None


def ui_prompt(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The user message a UI event shows the person (``user_message``, or the
    ``item_completed`` of a ``UserMessage``), or None for any other event and
    for context Codex itself showed."""
    kind = payload.get("type")
    parts: list[dict[str, Any]] = []
    if kind == "user_message":
        if payload.get("kind") not in (None, "plain"):  # older Codex: its context, marked
            return None
        message = payload.get("message")
        if isinstance(message, str) and message:
            parts.append({"type": "input_text", "text": message})
        images = payload.get("images")
        for image in images if isinstance(images, list) else []:
            if isinstance(image, str):
                parts.append({"type": "input_image", "image_url": image})
    elif kind == "item_completed":
        item = payload.get("item")
        if not isinstance(item, dict) or item.get("type") != "UserMessage":
            return None
        content = item.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append({"type": "input_text", "text": part["text"]})
    else:
        return None
    if not parts:
        return None
    prompt = {"type": "message", "role": "user", "content": parts}
    return None if is_context_message(prompt) else prompt


def _key(item: dict[str, Any]) -> str:
    return " ".join("".join(_texts(item)).split())


def _same(event: str, item: str) -> bool:
    """Does a response item hold the prompt a UI event shows? Its text may wrap the
    prompt's (Codex adds ``<image name=…>`` parts around an image)."""
    return event == item or (bool(event) and event in item)


def unsent_prompts(rollout: Rollout) -> dict[int, dict[str, Any]]:
    """The prompts only a UI event holds, by the line of that event: each event
    with no real user message of the same text between the events before and
    after it (its echo, written just before or after it). Two events of one
    prompt with no response item between them (a Codex writing both kinds) are one."""
    events: list[tuple[int, dict[str, Any]]] = []
    users: list[tuple[int, str]] = []
    items_seen = 0  # response items read so far
    last_at = -1  # response items read when the last event was kept
    for rec in rollout.records:
        if rec.type == "event_msg":
            prompt = ui_prompt(rec.payload)
            if prompt is None:
                continue
            if events and last_at == items_seen and _key(events[-1][1]) == _key(prompt):
                continue
            events.append((rec.line, prompt))
            last_at = items_seen
        elif rec.type == "response_item":
            items_seen += 1
            if is_user_turn(rec.payload):
                users.append((rec.line, _key(rec.payload)))
    lines = [u for u, _ in users]  # ascending: each window is found by bisection
    matched: set[int] = set()
    out: dict[int, dict[str, Any]] = {}
    for k, (line, prompt) in enumerate(events):
        low = events[k - 1][0] if k else 0
        high = events[k + 1][0] if k + 1 < len(events) else (lines[-1] + 1 if lines else 0)
        key = _key(prompt)
        echo = None
        for j in range(bisect_right(lines, low), bisect_left(lines, high)):
            if j not in matched and _same(key, users[j][1]):
                echo = j
                break
        if echo is None:
            out[line] = prompt
        else:
            matched.add(echo)
    return out


def replay(rollout: Rollout) -> History:
    """The history Codex holds after reading ``rollout`` (before it adds synthetic
    outputs: see :func:`as_sent`), with the prompts only its UI shows (``unsent``)."""
    items: list[HistoryItem] = []
    compactions = rollbacks = 0
    unsent = unsent_prompts(rollout)
    for rec in rollout.records:
        if rec.line in unsent:
            items.append(HistoryItem(unsent[rec.line], rec.line, unsent=True))
        elif rec.type == "response_item":
            if isinstance(rec.payload.get("type"), str):
                items.append(HistoryItem(rec.payload, rec.line))
        elif rec.type == "compacted":
            compactions += 1
            replacement = rec.payload.get("replacement_history")
            if isinstance(replacement, list):
                items = [HistoryItem(i, rec.line) for i in replacement if isinstance(i, dict)]
            else:
                message = rec.payload.get("message")
                users = [
                    _user_text_item("".join(_texts(h.item)))
                    for h in items
                    if is_user_turn(h.item) and _texts(h.item) and not h.unsent
                ]
                summary = _user_text_item(message if isinstance(message, str) else "")
                items = [HistoryItem(i, rec.line) for i in users + [summary]]
        elif rec.type == "event_msg" and rec.payload.get("type") == "thread_rolled_back":
            turns = rec.payload.get("num_turns")
            if type(turns) is int:
                rollbacks += 1
                items = _rollback(items, turns)
    open_turn = _open_turn(rollout)
    sent = [h for h in items if not h.unsent]
    if open_turn is None and sent and sent[-1].item.get("type") in CALL_TYPES:
        open_turn = "the last tool call has no output"
    return History(tuple(items), compactions, rollbacks, open_turn)


def call_id(item: dict[str, Any]) -> str | None:
    value = item.get("call_id")
    if value is None and item.get("type") == "local_shell_call":
        value = item.get("id")
    return value if isinstance(value, str) else None


def as_sent(items: tuple[HistoryItem, ...]) -> list[tuple[int, HistoryItem]]:
    """The history items Codex sends, in order, each with its index in ``items``:
    hidden items left out, an ``"aborted"`` output after each call that has none
    (with its call's index), outputs with no call left out."""
    sent = [(i, h) for i, h in enumerate(items) if is_sent(h.item) and not h.unsent]
    calls = {call_id(h.item) for _, h in sent if h.item.get("type") in CALL_TYPES}
    answered = {call_id(h.item) for _, h in sent if h.item.get("type") in OUTPUT_TYPES}
    out: list[tuple[int, HistoryItem]] = []
    for i, h in sent:
        kind = h.item.get("type")
        if kind in OUTPUT_TYPES and call_id(h.item) not in calls:
            continue
        out.append((i, h))
        cid = call_id(h.item)
        if kind in CALL_TYPES and cid not in answered:
            output_type = (
                "custom_tool_call_output" if kind == "custom_tool_call" else "function_call_output"
            )
            aborted = {"type": output_type, "call_id": cid, "output": "aborted"}
            out.append((i, HistoryItem(aborted, h.line, synthetic=True)))
    return out

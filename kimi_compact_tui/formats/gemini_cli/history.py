"""The history Gemini CLI sends on resume, as Gemini ``Content`` turns.

From the loaded message records (:mod:`.records`), as Gemini CLI 0.61 does it:

1. ``info``, ``error`` and ``warning`` messages are dropped, and so are user
   messages whose text (non-text parts as ``[Function Response: x]`` tags) is
   empty or starts with ``/``, ``?``, ``<session_context>`` or ``<hook_context>``.
2. A user message is one user turn of its parts (a string content is one text
   part). A ``gemini`` message is one model turn: its parts as they are when they
   hold a ``functionCall`` or a thought; else its ``thoughts`` as thought parts,
   its text, and a ``functionCall`` per ``toolCalls`` entry. Its tool calls'
   ``result`` parts then follow as a user turn of their own (id ``<id>_response``).
   A model turn with no part is dropped (with its results).
3. A fresh ``<session_context>`` user turn goes first: the agent's own prefix,
   never read from the file (and not part of this tool's messages).
4. Calls and results with no id get stable synthetic ones.
5. Sent: a run of model turns holding an empty part or an empty text is dropped
   whole; thought parts are not sent; turns of the same role are merged; a tool id
   ``<name>__<id>`` is sent as ``<id>``; empty text parts are dropped.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.formats.gemini_cli.js import js_str, part_to_string, truthy
from kimi_compact_tui.formats.gemini_cli.records import is_ignored_user_text

DROPPED_TYPES = ("info", "error", "warning")


def stable_id(*parts: str) -> str:
    """Gemini CLI's ``deriveStableId``: sha256 of the sorted ids joined by ``|``."""
    return hashlib.sha256("|".join(sorted(parts)).encode("utf-8")).hexdigest()[:32]


PREFIX_ID = stable_id("environment-context")


@dataclass
class Turn:
    id: str
    role: str  # "user" | "model"
    parts: list[Any]
    owner: int  # index of the message record it comes from (-1: the agent's prefix)


def _own(part: Any) -> Any:
    """A part this module may change (a shallow copy; the record is never changed)."""
    return dict(part) if isinstance(part, dict) else part


def part_array(content: Any) -> list[Any]:
    """``ensurePartArray``: a list (strings as text parts), a string as one text part."""
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else _own(p) for p in content]
    if isinstance(content, str):
        return [{"text": content}]
    return [_own(content)]


def _is_dict_with(part: Any, key: str) -> bool:
    return isinstance(part, dict) and truthy(part.get(key))


def _model_turn(msg: dict[str, Any], index: int) -> list[Turn]:
    content = msg.get("content")
    content_parts = part_array(content) if truthy(content) else []
    tool_calls = msg.get("toolCalls")
    calls: list[Any] = tool_calls if isinstance(tool_calls, list) else []
    parts: list[Any] = []
    if any(_is_dict_with(p, "functionCall") or _is_dict_with(p, "thought") for p in content_parts):
        parts.extend(content_parts)
    else:
        thoughts = msg.get("thoughts")
        for thought in thoughts if isinstance(thoughts, list) else []:
            thought = thought if isinstance(thought, dict) else {}
            subject = thought.get("subject")
            description = js_str(thought.get("description"))
            text = f"**{js_str(subject)}** {description}" if truthy(subject) else description
            parts.append({"text": text, "thought": True})
        parts.extend(content_parts)
        for call in calls:
            call = call if isinstance(call, dict) else {}
            fc = {k: call[k] for k in ("id", "name", "args") if k in call}
            parts.append({"functionCall": fc})
    if not parts:
        return []
    turns = [Turn(msg["id"], "model", parts, index)]
    responses: list[Any] = []
    for call in calls:
        result = call.get("result") if isinstance(call, dict) else None
        if not truthy(result):
            continue
        if isinstance(result, str):
            fr = {"id": call.get("id"), "name": call.get("name"), "response": {"output": result}}
            responses.append({"functionResponse": fr})
        elif isinstance(result, list):
            responses.extend(part_array(result))
        else:
            responses.append(_own(result))
    if responses:
        turns.append(Turn(f"{msg['id']}_response", "user", responses, index))
    return turns


def client_history(messages: list[dict[str, Any]]) -> list[Turn]:
    """``convertSessionToClientHistory``: the turns resumed from the messages."""
    turns: list[Turn] = []
    for index, msg in enumerate(messages):
        kind = msg.get("type")
        if kind in DROPPED_TYPES:
            continue
        if kind == "user":
            if is_ignored_user_text(part_to_string(msg.get("content"))):
                continue
            turns.append(Turn(msg["id"], "user", part_array(msg.get("content")), index))
        elif kind == "gemini":
            turns.extend(_model_turn(msg, index))
    return turns


def _synth(kind: str, name: Any, turn_id: str, i: int, part_index: int) -> str:
    return f"{kind}_{js_str(name)}_{stable_id(turn_id, str(i), str(part_index))}"


def _inner(part: Any, key: str) -> dict[str, Any] | None:
    """``part[key]`` as a copy of this part's own (ids are set on it), or None."""
    inner = part.get(key) if isinstance(part, dict) else None
    if not isinstance(inner, dict):
        return None
    part[key] = inner = dict(inner)
    return inner


def ensure_stable_ids(history: list[Turn]) -> None:
    """``ensureStableToolIds``: give calls and results without an id a synthetic one
    (a call and the result that answers it the same)."""
    for i, turn in enumerate(history):
        for pi, part in enumerate(turn.parts):
            call = _inner(part, "functionCall")
            if call is not None and not truthy(call.get("id")):
                name = call.get("name")
                nxt = history[i + 1] if i + 1 < len(history) else None
                if nxt is not None and nxt.role == "user":
                    match = _unanswered(nxt.parts, "functionResponse", name)
                    if match is not None:
                        call["id"] = match["id"] = _synth("synth", name, turn.id, i, pi)
                if not truthy(call.get("id")):
                    call["id"] = _synth("synth", name, turn.id, i, pi)
            resp = _inner(part, "functionResponse")
            if resp is not None and not truthy(resp.get("id")):
                name = resp.get("name")
                prev = history[i - 1] if i > 0 else None
                if prev is not None and prev.role == "model":
                    match = _unanswered(prev.parts, "functionCall", name)
                    if match is not None:
                        resp["id"] = match["id"] = _synth("synth", name, prev.id, i - 1, pi)
                if not truthy(resp.get("id")):
                    resp["id"] = _synth("synth_orph", name, turn.id, i, pi)


def _unanswered(parts: list[Any], key: str, name: Any) -> dict[str, Any] | None:
    for part in parts:
        inner = part.get(key) if isinstance(part, dict) else None
        if isinstance(inner, dict) and inner.get("name") == name and not truthy(inner.get("id")):
            return _inner(part, key)
    return None


def _valid_content(turn: Turn) -> bool:
    if not turn.parts:
        return turn.role == "model"
    for part in turn.parts:
        if not isinstance(part, dict) or not part:
            return False
        others = [k for k in part if k not in ("text", "thought", "callIndex")]
        if not truthy(part.get("thought")) and part.get("text") == "" and not others:
            return False
    return True


def curated(history: list[Turn]) -> list[Turn]:
    """``extractCuratedHistory``: a run of model turns with an invalid one is dropped."""
    out: list[Turn] = []
    i = 0
    while i < len(history):
        if history[i].role == "user":
            out.append(history[i])
            i += 1
            continue
        run = []
        while i < len(history) and history[i].role == "model":
            run.append(history[i])
            i += 1
        if all(_valid_content(t) for t in run):
            out.extend(run)
    return out


def sent_part(part: Any) -> Any | None:
    """One part as it is sent (``stripToolCallIdPrefixes``); None: not sent."""
    if not isinstance(part, dict):
        return part
    part = dict(part)
    for key in ("functionCall", "functionResponse"):
        inner = part.get(key)
        if isinstance(inner, dict):
            name = inner.get("name")
            prefix = (name.strip() if isinstance(name, str) else "") or "generic_tool"
            ident = inner.get("id")
            if isinstance(ident, str) and ident.startswith(prefix + "__"):
                inner = dict(inner, id=ident[len(prefix) + 2 :])
                part[key] = inner
    others = [k for k in part if k not in ("text", "thought", "callIndex")]
    if part.get("text") == "":
        if others:
            del part["text"]
        else:
            return None
    return part


def resumed_turns(messages: list[dict[str, Any]]) -> list[Turn]:
    """The turns Gemini CLI resumes from ``messages`` and sends, its prefix left out:
    ids made stable, invalid model runs dropped, parts as sent (thoughts kept, as
    the engine's reasoning parts; Gemini CLI does not send them)."""
    history = [Turn(PREFIX_ID, "user", [{"text": ""}], -1), *client_history(messages)]
    ensure_stable_ids(history)
    out = []
    for turn in curated(history)[1:]:
        parts = [p for p in (sent_part(p) for p in turn.parts) if p is not None]
        out.append(Turn(turn.id, turn.role, parts, turn.owner))
    return out

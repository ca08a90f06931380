"""Anthropic Messages API streams for the loopback server (tests/loopback_server.py).

:func:`anthropic_sse` writes the event sequence the API documents for a
streamed message: ``message_start`` (with the input usage), a ``ping``, one
content block per thinking and text piece list (``content_block_start``,
deltas, ``content_block_stop``; a thinking block ends with a
``signature_delta``), ``message_delta`` (stop reason, output usage) and
``message_stop``. Each event is ``event: NAME`` plus one ``data:`` line.
:func:`anthropic_error` is the API's error body.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.loopback_server import Reply


def event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()


def anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def anthropic_sse(
    text: Sequence[str],
    *,
    thinking: Sequence[str] = (),
    stop_reason: str | None = "end_turn",
    model: str = "claude-loopback",
    input_tokens: int = 25,
    output_tokens: int = 15,
    error: dict[str, Any] | None = None,
    stop: bool = True,
    **reply_kwargs: Any,
) -> Reply:
    """One streamed message. ``error``: an ``error`` event after the text, and
    nothing after it; ``stop=False``: no ``message_stop`` (a cut stream)."""
    usage = {"input_tokens": input_tokens, "output_tokens": 1}
    message = {"id": "msg_loopback", "type": "message", "role": "assistant", "content": []}
    message.update({"model": model, "stop_reason": None, "stop_sequence": None, "usage": usage})
    pieces = [event("message_start", {"message": message}), event("ping", {})]
    index = 0
    if thinking:
        block = {"index": index, "content_block": {"type": "thinking", "thinking": ""}}
        pieces.append(event("content_block_start", block))
        for piece in thinking:
            delta = {"type": "thinking_delta", "thinking": piece}
            pieces.append(event("content_block_delta", {"index": index, "delta": delta}))
        signature = {"type": "signature_delta", "signature": "EqQBCgIYAhIM-signature"}
        pieces.append(event("content_block_delta", {"index": index, "delta": signature}))
        pieces.append(event("content_block_stop", {"index": index}))
        index += 1
    if text:
        block = {"index": index, "content_block": {"type": "text", "text": ""}}
        pieces.append(event("content_block_start", block))
        for piece in text:
            delta = {"type": "text_delta", "text": piece}
            pieces.append(event("content_block_delta", {"index": index, "delta": delta}))
        if error is None:
            pieces.append(event("content_block_stop", {"index": index}))
    if error is not None:
        pieces.append(event("error", {"error": error["error"]}))
    else:
        delta = {"stop_reason": stop_reason, "stop_sequence": None}
        pieces.append(
            event("message_delta", {"delta": delta, "usage": {"output_tokens": output_tokens}})
        )
        if stop:
            pieces.append(event("message_stop", {}))
    return Reply(headers={"Content-Type": "text/event-stream"}, pieces=pieces, **reply_kwargs)

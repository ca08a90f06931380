"""A fake OpenAI-compatible model on 127.0.0.1 for the real agents (kimi-cli, kimi-code).

Usage::

    with FakeModel(summary="SUMMARY") as fm:
        fm.script(tool_turn("echo hello"), text_turn("done"), text_turn("second answer"))
        # point an agent at fm.base_url ("http://127.0.0.1:PORT/v1")
        ...
        fm.requests          # every request, in order (path, headers, json body, kind)
        fm.turn_requests()   # the chat requests that were not compaction requests

Endpoints: ``POST .../chat/completions`` (streaming SSE when the body says
``"stream": true``, else one JSON completion) and ``GET .../models``. Anything
else gets a 404 (and is recorded).

Each chat request that is not a compaction request takes the next scripted turn
(first in, first out); with nothing left it gets :data:`DEFAULT_TEXT`. A
compaction request (see :func:`is_compaction_request`) is answered with the
given summary and does not take a scripted turn.

A tool-call turn names candidate tool names; the first one the request offers
in its ``tools`` list is called (kimi-cli calls its shell tool ``Shell``,
kimi-code ``Bash``), so the agent runs its real shell tool.

Bounded: the server stops when the ``with`` block ends and, whatever happens,
after ``lifetime`` seconds or ``max_requests`` requests.
"""

from __future__ import annotations

import hashlib
import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.fake_base import DEFAULT_TEXT, FakeHandler, FakeRequest, FakeServer, Turn

__all__ = [
    "DEFAULT_TEXT",
    "FakeModel",
    "FakeRequest",
    "Turn",
    "is_compaction_request",
    "message_text",
    "text_turn",
    "tool_turn",
]

SHELL_TOOL_NAMES = ("Shell", "Bash", "shell", "bash", "run_shell_command")

# What the agents send when they compact (facts read from their source):
# kimi-cli's system prompt for its compaction call, and kimi-code's instruction,
# the last user message of its compaction call.
COMPACTION_MARKERS = (
    "compacts conversation context",
    "You are about to run out of context",
)


def text_turn(text: str, reasoning: str = "") -> Turn:
    return Turn(text=text, reasoning=reasoning)


def tool_turn(command: str, text: str = "", names: tuple[str, ...] = SHELL_TOOL_NAMES) -> Turn:
    """A turn that calls the agent's shell tool with ``command``."""
    return Turn(text=text, tool_names=names, tool_args={"command": command})


def message_text(message: dict[str, Any]) -> str:
    """The text of one OpenAI-style message (string content or a list of parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def is_compaction_request(body: dict[str, Any]) -> bool:
    """True when a chat body is an agent's compaction call: a system message or
    the last user message carries one of :data:`COMPACTION_MARKERS`."""
    messages = body.get("messages") or []
    texts = [message_text(m) for m in messages if m.get("role") == "system"]
    users = [m for m in messages if m.get("role") == "user"]
    if users:
        texts.append(message_text(users[-1]))
    return any(marker in text for text in texts for marker in COMPACTION_MARKERS)


class FakeModel(FakeServer):
    url_suffix = "/v1"

    def __init__(
        self,
        summary: str = "FAKE SUMMARY",
        model: str = "fake-model",
        lifetime: float = 120.0,
        max_requests: int = 200,
    ) -> None:
        super().__init__(summary, lifetime, max_requests)
        self.model = model

    def make_handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def chat_requests(self) -> list[FakeRequest]:
        return [r for r in self.requests if r.kind in ("turn", "compaction")]

    def compaction_requests(self) -> list[FakeRequest]:
        return self.of_kind("compaction")

    def _next_turn(self, body: dict[str, Any]) -> tuple[str, Turn]:
        """The kind of a chat request and its answer (subclasses add kinds)."""
        if is_compaction_request(body):
            return "compaction", Turn(text=self.summary)
        return "turn", self.next_turn()


def _tool_call(turn: Turn, body: dict[str, Any]) -> dict[str, Any] | None:
    if not turn.tool_names:
        return None
    offered = [
        (t.get("function") or {}).get("name") or t.get("name")
        for t in body.get("tools") or []
        if isinstance(t, dict)
    ]
    name = next((n for n in turn.tool_names if n in offered), turn.tool_names[0])
    # The id depends on the conversation so far, not on the order of requests, so two
    # copies of one session that take the same turn get the same call id.
    history = json.dumps(body.get("messages") or [], sort_keys=True).encode()
    return {
        "id": f"call_fake_{hashlib.sha256(history).hexdigest()[:12]}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(turn.tool_args)},
    }


COMPLETION_TOKENS = 10  # the output tokens every answer reports


def _usage(body: dict[str, Any]) -> dict[str, int]:
    prompt = len(json.dumps(body.get("messages") or [])) // 4
    return {
        "prompt_tokens": prompt,
        "completion_tokens": COMPLETION_TOKENS,
        "total_tokens": prompt + COMPLETION_TOKENS,
    }


def _make_handler(fm: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(FakeHandler):
        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/").endswith("/models"):
                fm.record(FakeRequest("GET", self.path, self.lower_headers(), b"", "models"))
                self.send_json(
                    200,
                    {"object": "list", "data": [{"id": fm.model, "object": "model"}]},
                )
                return
            fm.record(FakeRequest("GET", self.path, self.lower_headers(), b"", "other"))
            self.send_json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:  # noqa: N802
            raw = self.read_body()
            if not self.route().endswith("/chat/completions"):
                fm.record(FakeRequest("POST", self.path, self.lower_headers(), raw, "other"))
                self.send_json(404, {"error": {"message": "not found"}})
                return
            try:
                body = json.loads(raw.decode("utf-8"))
            except ValueError:
                fm.record(FakeRequest("POST", self.path, self.lower_headers(), raw, "other"))
                self.send_json(400, {"error": {"message": "body is not JSON"}})
                return
            kind, turn = fm._next_turn(body)
            seq = fm.record(FakeRequest("POST", self.path, self.lower_headers(), raw, kind))
            call = _tool_call(turn, body)
            if body.get("stream"):
                self._stream(body, turn, call, seq)
            else:
                self._complete(body, turn, call, seq)

        def _complete(self, body: dict, turn: Turn, call: dict | None, seq: int) -> None:
            message: dict[str, Any] = {"role": "assistant", "content": turn.text}
            if turn.reasoning:
                message["reasoning_content"] = turn.reasoning
            if call:
                message["tool_calls"] = [call]
            self.send_json(
                200,
                {
                    "id": f"chatcmpl-fake-{seq}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model") or fm.model,
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": "tool_calls" if call else "stop",
                        }
                    ],
                    "usage": _usage(body),
                },
            )

        def _stream(self, body: dict, turn: Turn, call: dict | None, seq: int) -> None:
            self.start_sse()
            base = {
                "id": f"chatcmpl-fake-{seq}",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": body.get("model") or fm.model,
            }

            def chunk(delta: dict, finish: str | None = None) -> None:
                self.sse_data(
                    dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
                )

            chunk({"role": "assistant", "content": ""})
            if turn.reasoning:
                chunk({"reasoning_content": turn.reasoning})
            if turn.text:
                half = len(turn.text) // 2
                for piece in (turn.text[:half], turn.text[half:]):
                    if piece:
                        chunk({"content": piece})
            if call:
                chunk({"tool_calls": [dict(call, index=0)]})
            chunk({}, "tool_calls" if call else "stop")
            self.sse_data(dict(base, choices=[], usage=_usage(body)))
            self.sse_data("[DONE]")
            self.wfile.flush()

    return Handler

"""A fake Anthropic Messages API on 127.0.0.1 for the real Claude Code.

Usage::

    with FakeAnthropic(summary="SUMMARY") as fa:
        fa.script(tool_turn("echo hello"), text_turn("done"))
        # ANTHROPIC_BASE_URL=fa.base_url ("http://127.0.0.1:PORT")
        ...
        fa.requests          # every request, in order (path, headers, body, kind)
        fa.turn_requests()   # the conversation turns (not compactions, not side requests)

Endpoints: ``POST /v1/messages`` (SSE when the body says ``"stream": true``, else one
JSON message) and ``POST /v1/messages/count_tokens``. Anything else gets a 404 (and is
recorded).

Kinds of ``/v1/messages`` requests:

- ``compaction``: the agent's own compaction call (see :func:`is_compaction_request`),
  answered with the summary;
- ``turn``: a request offering tools: it takes the next scripted turn (first in, first
  out; with nothing left, :data:`DEFAULT_TEXT`);
- ``side``: anything else (a title, a topic check): answered with :data:`SIDE_TEXT`,
  no scripted turn taken.

A tool-call turn calls the first of its candidate tool names the request offers
(Claude Code's shell tool is ``Bash``), so the agent runs its real shell tool. The
tool-use id depends on the conversation so far, so two copies of one session taking
the same turn get the same id.

Bounded: the server stops when the ``with`` block ends and, whatever happens, after
``lifetime`` seconds or ``max_requests`` requests.
"""

from __future__ import annotations

import hashlib
import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.fake_base import DEFAULT_TEXT, FakeHandler, FakeRequest, FakeServer, Turn

__all__ = ["DEFAULT_TEXT", "SIDE_TEXT", "AnthropicRequest", "FakeAnthropic", "block_text"]

SIDE_TEXT = "Fake side answer"
# What Claude Code's own compaction call asks for (a fact read from its requests): the
# last user message asks for a summary of the conversation and no tool is to be used.
COMPACTION_MARKERS = ("summary of the conversation",)
AnthropicRequest = FakeRequest  # kind: "turn", "compaction", "side", "count_tokens" or "other"


def block_text(content: Any) -> str:
    """The text of an Anthropic message content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def is_compaction_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    if not messages or messages[-1].get("role") != "user":
        return False
    text = block_text(messages[-1].get("content")).lower()
    return any(marker in text for marker in COMPACTION_MARKERS)


class FakeAnthropic(FakeServer):
    def __init__(
        self,
        summary: str = "FAKE SUMMARY",
        model: str = "claude-fake-1",
        lifetime: float = 120.0,
        max_requests: int = 400,
    ) -> None:
        super().__init__(summary, lifetime, max_requests)
        self.model = model
        self.on_compaction: Any = None  # called (with the body) before a summary is sent

    def make_handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def _answer(self, body: dict[str, Any]) -> tuple[str, Turn]:
        if is_compaction_request(body):
            if self.on_compaction is not None:
                self.on_compaction(body)
            return "compaction", Turn(text=self.summary)
        if not body.get("tools"):
            return "side", Turn(text=SIDE_TEXT)
        return "turn", self.next_turn()


def _tool_use(turn: Turn, body: dict[str, Any]) -> dict[str, Any] | None:
    if not turn.tool_names:
        return None
    offered = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    name = next((n for n in turn.tool_names if n in offered), turn.tool_names[0])
    history = json.dumps(body.get("messages") or [], sort_keys=True).encode()
    digest = hashlib.sha256(history).hexdigest()[:16]
    return {"type": "tool_use", "id": f"toolu_fake_{digest}", "name": name, "input": turn.tool_args}


def _blocks(turn: Turn, call: dict[str, Any] | None) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.reasoning:
        blocks.append({"type": "thinking", "thinking": turn.reasoning, "signature": "fake-sig"})
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    if call:
        blocks.append(call)
    return blocks


def _usage(body: dict[str, Any]) -> dict[str, int]:
    return {
        "input_tokens": len(json.dumps(body.get("messages") or [])) // 4,
        "output_tokens": 10,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _make_handler(fa: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(FakeHandler):
        def _not_found(self, method: str, raw: bytes) -> None:
            fa.record(FakeRequest(method, self.path, self.lower_headers(), raw, "other"))
            error = {"type": "not_found_error", "message": "not found"}
            self.send_json(404, {"type": "error", "error": error})

        def do_GET(self) -> None:  # noqa: N802
            self._not_found("GET", b"")

        def do_HEAD(self) -> None:  # noqa: N802
            fa.record(FakeRequest("HEAD", self.path, self.lower_headers(), b"", "other"))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            raw = self.read_body()
            route = self.route()
            try:
                body = json.loads(raw.decode("utf-8"))
            except ValueError:
                body = None
            if route == "/v1/messages/count_tokens" and isinstance(body, dict):
                fa.record(FakeRequest("POST", self.path, self.lower_headers(), raw, "count_tokens"))
                self.send_json(200, {"input_tokens": _usage(body)["input_tokens"]})
                return
            if route != "/v1/messages" or not isinstance(body, dict):
                self._not_found("POST", raw)
                return
            kind, turn = fa._answer(body)
            seq = fa.record(FakeRequest("POST", self.path, self.lower_headers(), raw, kind))
            call = _tool_use(turn, body) if kind == "turn" else None
            message = {
                "id": f"msg_fake_{seq}",
                "type": "message",
                "role": "assistant",
                "model": body.get("model") or fa.model,
                "content": _blocks(turn, call),
                "stop_reason": "tool_use" if call else "end_turn",
                "stop_sequence": None,
                "usage": _usage(body),
            }
            if body.get("stream"):
                self._stream(message)
            else:
                self.send_json(200, message)

        def _stream(self, message: dict[str, Any]) -> None:
            self.start_sse()
            start = dict(message, content=[], stop_reason=None)
            start["usage"] = dict(message["usage"], output_tokens=1)
            self.sse_event("message_start", {"type": "message_start", "message": start})
            for index, block in enumerate(message["content"]):
                self._block(index, block)
            delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
            usage = {"output_tokens": message["usage"]["output_tokens"]}
            self.sse_event(
                "message_delta", {"type": "message_delta", "delta": delta, "usage": usage}
            )
            self.sse_event("message_stop", {"type": "message_stop"})
            self.wfile.flush()

        def _block(self, index: int, block: dict[str, Any]) -> None:
            kind = block["type"]
            if kind == "text":
                empty, deltas = {"type": "text", "text": ""}, []
                half = len(block["text"]) // 2
                for piece in (block["text"][:half], block["text"][half:]):
                    if piece:
                        deltas.append({"type": "text_delta", "text": piece})
            elif kind == "thinking":
                empty = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [
                    {"type": "thinking_delta", "thinking": block["thinking"]},
                    {"type": "signature_delta", "signature": block["signature"]},
                ]
            else:  # tool_use
                empty = dict(block, input={})
                deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
            self.sse_event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": empty},
            )
            for delta in deltas:
                self.sse_event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            self.sse_event("content_block_stop", {"type": "content_block_stop", "index": index})

    return Handler

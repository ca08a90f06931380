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
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.agents.fake_model import Turn

__all__ = ["DEFAULT_TEXT", "SIDE_TEXT", "AnthropicRequest", "FakeAnthropic", "block_text"]

DEFAULT_TEXT = "(fake model: no scripted turn left)"
SIDE_TEXT = "Fake side answer"
# What Claude Code's own compaction call asks for (a fact read from its requests): the
# last user message asks for a summary of the conversation and no tool is to be used.
COMPACTION_MARKERS = ("summary of the conversation",)


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


@dataclass
class AnthropicRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    kind: str  # "turn", "compaction", "side", "count_tokens" or "other"

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except ValueError:
            return None


class FakeAnthropic:
    def __init__(
        self,
        summary: str = "FAKE SUMMARY",
        model: str = "claude-fake-1",
        lifetime: float = 120.0,
        max_requests: int = 400,
    ) -> None:
        self.summary = summary
        self.model = model
        self.lifetime = lifetime
        self.max_requests = max_requests
        self.requests: list[AnthropicRequest] = []
        self.on_compaction: Any = None  # called (with the body) before a summary is sent
        self._turns: list[Turn] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None
        self._stopped = False
        self._seq = 0

    def script(self, *turns: Turn) -> None:
        with self._lock:
            self._turns.extend(turns)

    def pending(self) -> int:
        with self._lock:
            return len(self._turns)

    def of_kind(self, kind: str) -> list[AnthropicRequest]:
        return [r for r in self.requests if r.kind == kind]

    def turn_requests(self) -> list[AnthropicRequest]:
        return self.of_kind("turn")

    @property
    def base_url(self) -> str:
        assert self._server is not None, "FakeAnthropic is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeAnthropic:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _record(self, req: AnthropicRequest) -> int:
        with self._lock:
            self.requests.append(req)
            self._seq += 1
            over = len(self.requests) >= self.max_requests
            seq = self._seq
        if over:
            threading.Thread(target=self.stop, daemon=True).start()
        return seq

    def _answer(self, body: dict[str, Any]) -> tuple[str, Turn]:
        if is_compaction_request(body):
            if self.on_compaction is not None:
                self.on_compaction(body)
            return "compaction", Turn(text=self.summary)
        if not body.get("tools"):
            return "side", Turn(text=SIDE_TEXT)
        with self._lock:
            turn = self._turns.pop(0) if self._turns else Turn(text=DEFAULT_TEXT)
        return "turn", turn


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
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 30

        def log_message(self, *args: object) -> None:
            return

        def _headers(self) -> dict[str, str]:
            return {k.lower(): v for k, v in self.headers.items()}

        def _send_json(self, status: int, obj: Any) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _not_found(self, method: str, raw: bytes) -> None:
            fa._record(AnthropicRequest(method, self.path, self._headers(), raw, "other"))
            error = {"type": "not_found_error", "message": "not found"}
            self._send_json(404, {"type": "error", "error": error})

        def do_GET(self) -> None:  # noqa: N802
            self._not_found("GET", b"")

        def do_HEAD(self) -> None:  # noqa: N802
            fa._record(AnthropicRequest("HEAD", self.path, self._headers(), b"", "other"))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            route = self.path.split("?")[0].rstrip("/")
            try:
                body = json.loads(raw.decode("utf-8"))
            except ValueError:
                body = None
            if route == "/v1/messages/count_tokens" and isinstance(body, dict):
                fa._record(
                    AnthropicRequest("POST", self.path, self._headers(), raw, "count_tokens")
                )
                self._send_json(200, {"input_tokens": _usage(body)["input_tokens"]})
                return
            if route != "/v1/messages" or not isinstance(body, dict):
                self._not_found("POST", raw)
                return
            kind, turn = fa._answer(body)
            seq = fa._record(AnthropicRequest("POST", self.path, self._headers(), raw, kind))
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
                self._send_json(200, message)

        def _event(self, name: str, obj: dict[str, Any]) -> None:
            data = json.dumps(obj).encode()
            self.wfile.write(b"event: " + name.encode() + b"\ndata: " + data + b"\n\n")

        def _stream(self, message: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            start = dict(message, content=[], stop_reason=None)
            start["usage"] = dict(message["usage"], output_tokens=1)
            self._event("message_start", {"type": "message_start", "message": start})
            for index, block in enumerate(message["content"]):
                self._block(index, block)
            delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
            usage = {"output_tokens": message["usage"]["output_tokens"]}
            self._event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})
            self._event("message_stop", {"type": "message_stop"})
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
            self._event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": empty},
            )
            for delta in deltas:
                self._event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})

    return Handler

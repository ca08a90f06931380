"""A fake OpenAI Responses API (``POST /v1/responses``, SSE) on 127.0.0.1, for Codex.

Usage::

    with FakeResponses(summary="SUMMARY") as fm:
        fm.script(tool_turn("echo hello"), text_turn("done"))
        # point Codex at fm.base_url ("http://127.0.0.1:PORT/v1"), wire_api = "responses"
        fm.requests            # every request, in order (path, headers, json body, kind)

Each request that is not a compaction request takes the next scripted turn (first in,
first out); with nothing left it gets :data:`DEFAULT_TEXT`. A compaction request (its
last user message carries :data:`COMPACTION_MARKER`, a fact read from Codex's own
compaction prompt) is answered with the summary and takes no scripted turn.

A tool-call turn answers with one ``function_call`` output item naming the first of its
candidate tool names the request offers, so Codex runs its real shell tool. The call id
depends on the conversation so far, so two copies of one session get the same id.

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

from tests.agents.fake_model import DEFAULT_TEXT, FakeRequest, Turn, text_turn, tool_turn

__all__ = [
    "COMPACTION_MARKER",
    "DEFAULT_TEXT",
    "FakeResponses",
    "is_compaction_request",
    "text_turn",
    "tool_turn",
]

# The words Codex's local compaction prompt starts with (a fact about Codex, used to tell
# its compaction call from a turn).
COMPACTION_MARKER = "CONTEXT CHECKPOINT COMPACTION"
# Codex 0.171 offers its shell as ``exec_command`` (unified exec) or ``shell``.
CODEX_SHELL_TOOLS = ("exec_command", "shell_command", "shell", "local_shell")


def item_text(item: dict[str, Any]) -> str:
    """The text of one Responses ``message`` item (its text content parts joined)."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def is_compaction_request(body: dict[str, Any]) -> bool:
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    users = [i for i in items if i.get("type", "message") == "message" and i.get("role") == "user"]
    return bool(users) and COMPACTION_MARKER in item_text(users[-1])


@dataclass
class _Answer:
    kind: str
    turn: Turn


class FakeResponses:
    def __init__(
        self,
        summary: str = "FAKE SUMMARY",
        model: str = "fake-model",
        lifetime: float = 300.0,
        max_requests: int = 300,
    ) -> None:
        self.summary = summary
        self.model = model
        self.lifetime = lifetime
        self.max_requests = max_requests
        self.requests: list[FakeRequest] = []
        self._turns: list[Turn] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None
        self._stopped = False
        # Called with the body of each compaction request before it is answered.
        self.on_compaction: Any = None

    def script(self, *turns: Turn) -> None:
        with self._lock:
            self._turns.extend(turns)

    def pending(self) -> int:
        with self._lock:
            return len(self._turns)

    def turn_requests(self) -> list[FakeRequest]:
        return [r for r in self.requests if r.kind == "turn"]

    def compaction_requests(self) -> list[FakeRequest]:
        return [r for r in self.requests if r.kind == "compaction"]

    @property
    def base_url(self) -> str:
        assert self._server is not None, "FakeResponses is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeResponses:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            server = self._server
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        if server is not None:
            server.shutdown()
            server.server_close()

    def _record(self, req: FakeRequest) -> None:
        with self._lock:
            self.requests.append(req)
            over = len(self.requests) >= self.max_requests
        if over:
            threading.Thread(target=self.stop, daemon=True).start()

    def _answer(self, body: dict[str, Any]) -> _Answer:
        if is_compaction_request(body):
            if self.on_compaction is not None:
                self.on_compaction(body)
            return _Answer("compaction", Turn(text=self.summary))
        with self._lock:
            turn = self._turns.pop(0) if self._turns else Turn(text=DEFAULT_TEXT)
        return _Answer("turn", turn)


def _call_item(turn: Turn, body: dict[str, Any]) -> dict[str, Any] | None:
    if not turn.tool_names:
        return None
    offered = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    names = [n for n in CODEX_SHELL_TOOLS + turn.tool_names if n in offered]
    name = names[0] if names else turn.tool_names[0]
    args: dict[str, Any] = dict(turn.tool_args)
    if name in ("exec_command",):
        args = {"cmd": turn.tool_args.get("command", "")}
    elif name == "shell":
        args = {"command": ["bash", "-lc", turn.tool_args.get("command", "")]}
    history = json.dumps(body.get("input") or [], sort_keys=True).encode()
    digest = hashlib.sha256(history).hexdigest()[:12]
    return {
        "type": "function_call",
        "id": f"fc_fake_{digest}",
        "call_id": f"call_fake_{digest}",
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }


def _make_handler(fm: FakeResponses) -> type[BaseHTTPRequestHandler]:
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

        def do_GET(self) -> None:  # noqa: N802
            fm._record(FakeRequest("GET", self.path, self._headers(), b"", "other"))
            if self.path.split("?")[0].rstrip("/").endswith("/models"):
                self._send_json(200, {"object": "list", "data": []})
                return
            self._send_json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not self.path.split("?")[0].rstrip("/").endswith("/responses"):
                fm._record(FakeRequest("POST", self.path, self._headers(), raw, "other"))
                self._send_json(404, {"error": {"message": "not found"}})
                return
            try:
                body = json.loads(raw.decode("utf-8"))
            except ValueError:
                fm._record(FakeRequest("POST", self.path, self._headers(), raw, "other"))
                self._send_json(400, {"error": {"message": "body is not JSON"}})
                return
            answer = fm._answer(body)
            fm._record(FakeRequest("POST", self.path, self._headers(), raw, answer.kind))
            self._stream(body, answer.turn, len(fm.requests))

        def _stream(self, body: dict[str, Any], turn: Turn, seq: int) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            rid = f"resp_fake_{seq}"

            def event(kind: str, **data: Any) -> None:
                obj = {"type": kind, **data}
                self.wfile.write(f"event: {kind}\ndata: {json.dumps(obj)}\n\n".encode())

            response = {"id": rid, "object": "response", "model": fm.model, "status": "in_progress"}
            event("response.created", response=response)
            index = 0
            if turn.reasoning:
                item = {
                    "type": "reasoning",
                    "id": f"rs_fake_{seq}",
                    "summary": [{"type": "summary_text", "text": turn.reasoning}],
                }
                event("response.output_item.added", output_index=index, item=item)
                event("response.output_item.done", output_index=index, item=item)
                index += 1
            if turn.text:
                mid = f"msg_fake_{seq}"
                added = {"type": "message", "id": mid, "role": "assistant", "content": []}
                event("response.output_item.added", output_index=index, item=added)
                half = len(turn.text) // 2
                for piece in (turn.text[:half], turn.text[half:]):
                    if piece:
                        event(
                            "response.output_text.delta",
                            item_id=mid,
                            output_index=index,
                            content_index=0,
                            delta=piece,
                        )
                done = dict(
                    added,
                    status="completed",
                    content=[{"type": "output_text", "text": turn.text, "annotations": []}],
                )
                event("response.output_item.done", output_index=index, item=done)
                index += 1
            call = _call_item(turn, body)
            if call is not None:
                event("response.output_item.added", output_index=index, item=call)
                event("response.output_item.done", output_index=index, item=call)
            usage = {
                "input_tokens": 100,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 5,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 105,
            }
            event("response.completed", response=dict(response, status="completed", usage=usage))
            self.wfile.flush()

    return Handler

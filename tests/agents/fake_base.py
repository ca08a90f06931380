"""The common part of the fake model servers in ``tests/agents/``.

A fake is a threaded HTTP server on 127.0.0.1 (port 0: the kernel picks a free one)
that records every request, answers from a script of turns, and stops when its
``with`` block ends or, whatever happens, after ``lifetime`` seconds or
``max_requests`` requests. Each fake (``fake_model``, ``fake_anthropic``,
``fake_responses``, ``fake_gemini``) subclasses :class:`FakeServer` with its routes
(a :class:`FakeHandler` subclass) and its kinds of requests; this module knows no API.

Usage, for any fake::

    with FakeModel(summary="SUMMARY") as fake:
        fake.script(tool_turn("echo hello"), text_turn("done"))
        ...                     # point the agent at fake.base_url
        fake.requests           # every request, in order
        fake.of_kind("turn")    # the requests of one kind
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

__all__ = ["DEFAULT_TEXT", "FakeHandler", "FakeRequest", "FakeServer", "Turn"]

DEFAULT_TEXT = "(fake model: no scripted turn left)"


@dataclass
class Turn:
    """One scripted assistant reply: text, and optionally one tool call."""

    text: str = ""
    tool_names: tuple[str, ...] = ()
    tool_args: dict[str, Any] = field(default_factory=dict)
    reasoning: str = ""


@dataclass
class FakeRequest:
    """One request as the fake received it; ``kind`` is the fake's name for it
    ("turn", "compaction", "side", "models", "other", ...)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    kind: str

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except ValueError:
            return None


class FakeServer:
    """The server, the request log and the script. Subclasses set
    :attr:`url_suffix` and implement :meth:`make_handler`."""

    url_suffix: ClassVar[str] = ""  # what base_url adds after the port ("/v1", or nothing)

    def __init__(
        self,
        summary: str = "FAKE SUMMARY",
        lifetime: float = 120.0,
        max_requests: int = 200,
    ) -> None:
        self.summary = summary
        self.lifetime = lifetime
        self.max_requests = max_requests
        self.requests: list[FakeRequest] = []
        self._turns: list[Turn] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None
        self._calls = 0
        self._stopped = False
        self._closed = threading.Event()

    def make_handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    # --- script and records -----------------------------------------------------------------
    def script(self, *turns: Turn) -> None:
        with self._lock:
            self._turns.extend(turns)

    def pending(self) -> int:
        with self._lock:
            return len(self._turns)

    def next_turn(self) -> Turn:
        """The next scripted turn (first in, first out), or :data:`DEFAULT_TEXT`."""
        with self._lock:
            return self._turns.pop(0) if self._turns else Turn(text=DEFAULT_TEXT)

    def of_kind(self, kind: str) -> list[FakeRequest]:
        return [r for r in self.requests if r.kind == kind]

    def turn_requests(self) -> list[FakeRequest]:
        return self.of_kind("turn")

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def record(self, req: FakeRequest) -> int:
        """Log a request; returns how many are logged now (a sequence number for ids).
        The server stops (from another thread) once ``max_requests`` have come."""
        with self._lock:
            self.requests.append(req)
            self._calls += 1
            over = self._calls >= self.max_requests
            seq = len(self.requests)
        if over:
            threading.Thread(target=self.stop, daemon=True).start()
        return seq

    @property
    def base_url(self) -> str:
        assert self._server is not None, f"{type(self).__name__} is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.url_suffix}"

    # --- lifecycle --------------------------------------------------------------------------
    def __enter__(self) -> Any:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self.make_handler())
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
        self._closed.set()

    def wait_stopped(self, timeout: float) -> bool:
        """Wait until the server has stopped and closed its port (its lifetime or its
        request budget ran out, or :meth:`stop`); False if it is still up."""
        return self._closed.wait(timeout)


class FakeHandler(BaseHTTPRequestHandler):
    """Request helpers shared by the fakes' handlers: quiet, JSON replies, the body,
    and server-sent events."""

    protocol_version = "HTTP/1.1"
    timeout = 30

    def log_message(self, *args: object) -> None:  # quiet
        return

    def lower_headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def route(self) -> str:
        """The path without its query and trailing slashes."""
        return self.path.split("?")[0].rstrip("/")

    def send_json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self) -> None:
        """Headers of an event stream; the connection closes when the stream ends."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse_data(self, obj: Any, end: bytes = b"\n\n") -> None:
        """One ``data:`` event holding ``obj`` as JSON (a string is sent as it is)."""
        data = obj.encode() if isinstance(obj, str) else json.dumps(obj).encode()
        self.wfile.write(b"data: " + data + end)

    def sse_event(self, name: str, obj: Any) -> None:
        """One named event: ``event: NAME`` and its ``data:`` line."""
        self.wfile.write(
            b"event: " + name.encode() + b"\ndata: " + json.dumps(obj).encode() + b"\n\n"
        )

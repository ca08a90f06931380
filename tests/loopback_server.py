"""A real HTTP server on 127.0.0.1 for provider tests, scripted reply by reply.

Usage::

    from tests.loopback_server import LoopbackServer, openai_sse, Reply

    with LoopbackServer() as srv:
        srv.script([Reply.error(429, {"error": {"message": "slow down"}}, retry_after="0"),
                    openai_sse(["Hello", " world"])])
        config = ProviderConfig(kind="openai", base_url=srv.base_url, model="m")
        ...
        assert srv.requests[-1].json["stream"] is True

Each request takes the next scripted :class:`Reply` (first in, first out); with
nothing left it gets a 500. Replies are written with raw socket writes, so a
body can be split at any byte offset (``split_every`` / ``split_at``), paused
(``gap``, ``stall``) or cut (``cut``: close without the end of the body).
Bodies are close-delimited by default (``Connection: close``, no length), or
HTTP/1.1 chunked with ``chunked=True``.

Every request is recorded (:class:`Recorded`: method, path, headers with
lower-case names, raw body and parsed JSON). The server stops when the ``with``
block ends and, whatever happens, after ``lifetime`` seconds.

Builders for each wire format: :func:`openai_sse` (OpenAI, with a trailing usage
chunk), :func:`moonshot_sse` (``reasoning_content``, usage inside the finishing
choice), :func:`ollama_v1_sse` (``delta.reasoning``), :func:`ollama_ndjson`
(native ``/api/chat``), :func:`Reply.error` (an HTTP error with a provider body)
and :func:`Reply.from_file` (replay a recorded stream).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "LoopbackServer",
    "Recorded",
    "Reply",
    "moonshot_sse",
    "ollama_ndjson",
    "ollama_v1_sse",
    "openai_sse",
    "sse_events",
]

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}


@dataclass
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except ValueError:
            return None


@dataclass
class Reply:
    """One scripted response.

    ``pieces`` are written one socket write each, ``gap`` seconds apart. With
    ``split_every`` or ``split_at`` the joined body is re-cut at those byte
    offsets instead. ``stall`` seconds of silence happen after piece number
    ``stall_after`` (default: before the first body byte). ``cut`` closes the
    connection early: after piece ``cut_after`` (default: all pieces) without
    sending the chunked terminator, so the body never ends properly.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    pieces: list[bytes] = field(default_factory=list)
    split_every: int | None = None
    split_at: Sequence[int] | None = None
    gap: float = 0.0
    stall: float = 0.0
    stall_after: int = 0
    cut: bool = False
    cut_after: int | None = None
    chunked: bool = False

    @property
    def body(self) -> bytes:
        return b"".join(self.pieces)

    def writes(self) -> list[bytes]:
        data = self.body
        if self.split_every:
            n = self.split_every
            return [data[i : i + n] for i in range(0, len(data), n)]
        if self.split_at is not None:
            cuts = sorted({0, *[c for c in self.split_at if 0 < c < len(data)], len(data)})
            return [data[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
        return list(self.pieces)

    @classmethod
    def error(
        cls,
        status: int,
        body: Any,
        *,
        retry_after: str | None = None,
        retry_after_ms: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        if retry_after is not None:
            hdrs["Retry-After"] = retry_after
        if retry_after_ms is not None:
            hdrs["retry-after-ms"] = retry_after_ms
        return cls(status=status, headers=hdrs, pieces=[raw])

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> Reply:
        path = Path(path)
        ctype = "application/x-ndjson" if path.suffix == ".ndjson" else "text/event-stream"
        return cls(headers={"Content-Type": ctype}, pieces=[path.read_bytes()], **kwargs)


# ----------------------------------------------------------------------------- wire builders


def sse_events(
    objects: Iterable[Any],
    *,
    done: bool = True,
    crlf: bool = False,
    comments: bool = False,
    multiline: bool = False,
) -> list[bytes]:
    """Encode JSON objects (or raw strings, sent as-is) as SSE ``data:`` events."""
    nl = "\r\n" if crlf else "\n"
    out: list[bytes] = []
    if comments:
        out.append(f": keep-alive{nl}{nl}".encode())
    for obj in objects:
        data = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
        if multiline and not isinstance(obj, str):
            # Pretty JSON over several data: lines; the receiver joins them with "\n".
            lines = json.dumps(obj, ensure_ascii=False, indent=1).split("\n")
        else:
            lines = [data]
        text = "".join(f"data: {line}{nl}" for line in lines) + nl
        if comments:
            text = f": ping{nl}" + text
        out.append(text.encode())
    if done:
        out.append(f"data: [DONE]{nl}{nl}".encode())
    return out


def _chunk(model: str, delta: dict[str, Any] | None, finish: str | None = None, **extra: Any):
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    obj = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [choice],
    }
    obj.update(extra)
    return obj, choice


def openai_sse(
    text: Sequence[str],
    *,
    reasoning: Sequence[str] = (),
    reasoning_field: str = "reasoning_content",
    finish: str | None = "stop",
    usage: dict[str, Any] | None = None,
    usage_in_choice: bool = False,
    model: str = "loopback-model",
    extra_events: Sequence[Any] = (),
    done: bool = True,
    crlf: bool = False,
    comments: bool = False,
    multiline: bool = False,
    **reply_kwargs: Any,
) -> Reply:
    """An OpenAI-style chat completion stream: role chunk, reasoning, text, finish, usage."""
    events: list[Any] = [_chunk(model, {"role": "assistant", "content": ""})[0]]
    events += [_chunk(model, {reasoning_field: r})[0] for r in reasoning]
    events += [_chunk(model, {"content": t})[0] for t in text]
    events += list(extra_events)
    if finish is not None:
        obj, choice = _chunk(model, {}, finish)
        if usage is not None and usage_in_choice:
            choice["usage"] = usage
        events.append(obj)
    if usage is not None and not usage_in_choice:
        events.append({"id": "chatcmpl-loopback", "model": model, "choices": [], "usage": usage})
    pieces = sse_events(events, done=done, crlf=crlf, comments=comments, multiline=multiline)
    return Reply(headers={"Content-Type": "text/event-stream"}, pieces=pieces, **reply_kwargs)


def moonshot_sse(text: Sequence[str], *, reasoning: Sequence[str] = (), **kw: Any) -> Reply:
    """Moonshot/Kimi: ``reasoning_content`` deltas, usage inside the finishing choice."""
    kw.setdefault("usage", {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    kw.setdefault("model", "kimi-k2-thinking")
    return openai_sse(text, reasoning=reasoning, usage_in_choice=True, **kw)


def ollama_v1_sse(text: Sequence[str], *, reasoning: Sequence[str] = (), **kw: Any) -> Reply:
    """Ollama's OpenAI-compatible ``/v1``: reasoning in ``delta.reasoning``."""
    kw.setdefault("model", "qwen3:8b")
    return openai_sse(text, reasoning=reasoning, reasoning_field="reasoning", **kw)


def ollama_ndjson(
    text: Sequence[str],
    *,
    thinking: Sequence[str] = (),
    done: bool = True,
    done_reason: str = "stop",
    model: str = "qwen3:8b",
    prompt_eval_count: int = 20,
    eval_count: int = 7,
    extra_lines: Sequence[Any] = (),
    **reply_kwargs: Any,
) -> Reply:
    """Ollama native ``/api/chat``: one JSON object per line, ending with ``done: true``."""
    lines: list[Any] = []
    for t in thinking:
        lines.append(
            {"model": model, "message": {"role": "assistant", "content": "", "thinking": t}}
        )
    for t in text:
        lines.append({"model": model, "message": {"role": "assistant", "content": t}})
    lines += list(extra_lines)
    for line in lines:
        if isinstance(line, dict):
            line.setdefault("done", False)
    if done:
        lines.append(
            {
                "model": model,
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "done_reason": done_reason,
                "prompt_eval_count": prompt_eval_count,
                "eval_count": eval_count,
            }
        )
    pieces = [
        (line if isinstance(line, str) else json.dumps(line)).encode() + b"\n" for line in lines
    ]
    return Reply(headers={"Content-Type": "application/x-ndjson"}, pieces=pieces, **reply_kwargs)


# ----------------------------------------------------------------------------- the server


class LoopbackServer:
    """A threaded raw-socket HTTP/1.1 server on 127.0.0.1 with a random free port."""

    def __init__(self, lifetime: float = 120.0) -> None:
        self.lifetime = lifetime
        self.requests: list[Recorded] = []
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._workers: list[threading.Thread] = []
        self.port = 0

    # -- public API

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (OpenAI-style). :attr:`root_url` has no ``/v1``."""
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, replies: Iterable[Reply]) -> None:
        """Queue replies; each request takes the next one."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def start(self) -> LoopbackServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        sock.settimeout(0.05)
        self._sock = sock
        self.port = sock.getsockname()[1]
        self._deadline = time.monotonic() + self.lifetime
        self._thread = threading.Thread(target=self._serve, name="loopback-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for worker in list(self._workers):
            worker.join(timeout=5)
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals

    def _serve(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set() and time.monotonic() < self._deadline:
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            worker = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            self._workers.append(worker)
            worker.start()
        self._stop.set()

    def _read_request(self, conn: socket.socket) -> Recorded | None:
        conn.settimeout(5)
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = conn.recv(65536)
            if not data:
                return None
            buf += data
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        while len(rest) < length:
            data = conn.recv(65536)
            if not data:
                break
            rest += data
        return Recorded(method=method, path=path, headers=headers, body=rest[:length])

    def _handle(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            req = self._read_request(conn)
            if req is None:
                return
            with self._lock:
                self.requests.append(req)
                reply = self._queue.pop(0) if self._queue else None
            if reply is None:
                reply = Reply.error(500, {"error": {"message": "loopback: no scripted reply"}})
            self._write(conn, reply)
        except OSError:
            pass
        finally:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def _wait(self, seconds: float) -> bool:
        """Sleep, but wake when the server stops. True if still running."""
        if seconds > 0:
            self._stop.wait(seconds)
        return not self._stop.is_set()

    def _write(self, conn: socket.socket, reply: Reply) -> None:
        reason = _REASONS.get(reply.status, "Status")
        head = [f"HTTP/1.1 {reply.status} {reason}", "Connection: close"]
        headers = dict(reply.headers)
        if reply.chunked:
            headers["Transfer-Encoding"] = "chunked"
        elif reply.status >= 400 and not reply.cut:
            headers["Content-Length"] = str(len(reply.body))
        head += [f"{k}: {v}" for k, v in headers.items()]
        conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        writes = reply.writes()
        limit = len(writes) if reply.cut_after is None else reply.cut_after
        for i, piece in enumerate(writes):
            if i == reply.stall_after and reply.stall and not self._wait(reply.stall):
                return
            if i >= limit:
                return
            if i and reply.gap and not self._wait(reply.gap):
                return
            if reply.chunked:
                piece = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
            conn.sendall(piece)
        if reply.stall and reply.stall_after >= len(writes) and not self._wait(reply.stall):
            return
        if reply.chunked and not reply.cut:
            conn.sendall(b"0\r\n\r\n")

"""A fake Gemini API (``generativelanguage`` v1beta) on 127.0.0.1 for the real Gemini CLI.

Usage::

    with FakeGemini(summary="SUMMARY") as fg:
        fg.script(tool_turn("echo hello"), text_turn("done"))
        # GOOGLE_GEMINI_BASE_URL=fg.base_url ("http://127.0.0.1:PORT")
        ...
        fg.requests          # every request, in order (method, path, headers, body, kind)
        fg.turn_requests()   # the conversation turns (not compressions, not side calls)

Endpoints: ``POST /v1beta/models/<model>:streamGenerateContent`` (SSE, ``alt=sse``),
``POST /v1beta/models/<model>:generateContent`` (one JSON response) and
``POST /v1beta/models/<model>:countTokens``. Anything else gets a 404 (and is recorded).

Kinds of generate requests:

- ``compression``: Gemini CLI's own compression calls (its system instruction asks for a
  ``<state_snapshot>``; it makes two: the summary and a check of it), answered with the
  summary;
- ``turn``: a request offering function declarations: it takes the next scripted turn
  (first in, first out; with nothing left, :data:`DEFAULT_TEXT`);
- ``json``: a tool-less request asking for JSON (a ``responseJsonSchema``, e.g. the
  next-speaker check): answered with a small object saying the user speaks next;
- ``side``: anything else, answered with :data:`SIDE_TEXT`.

A tool-call turn calls the first of its candidate names the request declares (Gemini
CLI's shell tool is ``run_shell_command``), so the agent runs its real shell tool. A
turn with ``reasoning`` streams it first as a thought part. ``usageMetadata`` counts a
quarter of the request body's bytes as prompt tokens (so a compression really shrinks
the count), ``countTokens`` the same.

Bounded: the server stops when the ``with`` block ends and, whatever happens, after
``lifetime`` seconds or ``max_requests`` requests.
"""

from __future__ import annotations

import json
import re
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.fake_base import DEFAULT_TEXT, FakeHandler, FakeRequest, FakeServer, Turn

__all__ = ["DEFAULT_TEXT", "SIDE_TEXT", "FakeGemini", "GeminiRequest", "content_text"]

SIDE_TEXT = "Fake side answer"
GeminiRequest = FakeRequest  # kind: "turn", "compression", "json", "side", "count_tokens", "other"
# What Gemini CLI's compression asks for (a fact read from its requests and source).
COMPRESSION_MARKER = "<state_snapshot>"
_ROUTE = re.compile(
    r"^/v1beta/models/([^/:]+):(streamGenerateContent|generateContent|countTokens)$"
)


def content_text(content: dict[str, Any]) -> str:
    """The text parts of one Gemini ``Content``, joined."""
    return "".join(p.get("text", "") for p in content.get("parts") or [] if isinstance(p, dict))


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("systemInstruction") or {}
    if isinstance(system, dict):
        return content_text(system)
    return ""


def _declared(body: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for tool in body.get("tools") or []:
        for decl in (tool or {}).get("functionDeclarations") or []:
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                names.append(decl["name"])
    return names


class FakeGemini(FakeServer):
    def __init__(
        self,
        summary: str = "FAKE SUMMARY",
        lifetime: float = 120.0,
        max_requests: int = 400,
    ) -> None:
        super().__init__(summary, lifetime, max_requests)

    def make_handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def _answer(self, body: dict[str, Any]) -> tuple[str, Turn]:
        if COMPRESSION_MARKER in _system_text(body):
            return "compression", Turn(text=self.summary)
        if _declared(body):
            return "turn", self.next_turn()
        config = body.get("generationConfig") or {}
        if config.get("responseJsonSchema") or config.get("responseSchema"):
            return "json", Turn(text=json.dumps(_json_answer(config)))
        return "side", Turn(text=SIDE_TEXT)


def _json_answer(config: dict[str, Any]) -> dict[str, Any]:
    """A small object for a JSON-schema request: the user speaks next; numbers at their
    minimum, the first of an enum, any other string a short text."""
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        kind = str((prop or {}).get("type", "string")).lower()
        if name == "next_speaker":
            out[name] = "user"
        elif prop and prop.get("enum"):
            out[name] = prop["enum"][0]
        elif kind in ("number", "integer"):
            out[name] = prop.get("minimum", 0)
        elif kind == "boolean":
            out[name] = False
        else:
            out[name] = "fake"
    return out


def _parts(turn: Turn, body: dict[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if turn.reasoning:
        parts.append({"text": turn.reasoning, "thought": True})
    if turn.text:
        parts.append({"text": turn.text})
    if turn.tool_names:
        offered = _declared(body)
        name = next((n for n in turn.tool_names if n in offered), turn.tool_names[0])
        parts.append({"functionCall": {"name": name, "args": turn.tool_args}})
    return parts


def _usage(raw: bytes) -> dict[str, int]:
    prompt = max(1, len(raw) // 4)
    return {"promptTokenCount": prompt, "candidatesTokenCount": 5, "totalTokenCount": prompt + 5}


def _make_handler(fg: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(FakeHandler):
        def _not_found(self, method: str, raw: bytes) -> None:
            fg.record(FakeRequest(method, self.path, self.lower_headers(), raw, "other"))
            error = {"code": 404, "message": "not found", "status": "NOT_FOUND"}
            self.send_json(404, {"error": error})

        def do_GET(self) -> None:  # noqa: N802
            self._not_found("GET", b"")

        def do_POST(self) -> None:  # noqa: N802
            raw = self.read_body()
            match = _ROUTE.match(self.path.split("?")[0])
            try:
                body = json.loads(raw.decode("utf-8"))
            except ValueError:
                body = None
            if match is None or not isinstance(body, dict):
                self._not_found("POST", raw)
                return
            model, method = match.groups()
            if method == "countTokens":
                fg.record(FakeRequest("POST", self.path, self.lower_headers(), raw, "count_tokens"))
                self.send_json(200, {"totalTokens": _usage(raw)["promptTokenCount"]})
                return
            kind, turn = fg._answer(body)
            fg.record(FakeRequest("POST", self.path, self.lower_headers(), raw, kind))
            parts = _parts(turn, body) if kind == "turn" else [{"text": turn.text}]
            if method == "generateContent":
                self.send_json(200, _response(parts, raw, model, final=True))
                return
            self._stream(parts, raw, model)

        def _stream(self, parts: list[dict[str, Any]], raw: bytes, model: str) -> None:
            self.start_sse()
            for i, part in enumerate(parts):
                chunk = _response([part], raw, model, final=i == len(parts) - 1)
                self.sse_data(chunk, end=b"\r\n\r\n")
            self.wfile.flush()

    return Handler


def _response(parts: list[dict[str, Any]], raw: bytes, model: str, final: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if final:
        candidate["finishReason"] = "STOP"
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
    if final:
        out["usageMetadata"] = _usage(raw)
    return out

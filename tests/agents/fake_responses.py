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
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.fake_base import FakeHandler, FakeServer
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


class FakeResponses(FakeServer):
    url_suffix = "/v1"

    def __init__(
        self,
        summary: str = "FAKE SUMMARY",
        model: str = "fake-model",
        lifetime: float = 300.0,
        max_requests: int = 300,
    ) -> None:
        super().__init__(summary, lifetime, max_requests)
        self.model = model
        # Called with the body of each compaction request before it is answered.
        self.on_compaction: Any = None

    def make_handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def compaction_requests(self) -> list[FakeRequest]:
        return self.of_kind("compaction")

    def _answer(self, body: dict[str, Any]) -> _Answer:
        if is_compaction_request(body):
            if self.on_compaction is not None:
                self.on_compaction(body)
            return _Answer("compaction", Turn(text=self.summary))
        return _Answer("turn", self.next_turn())


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
    class Handler(FakeHandler):
        def do_GET(self) -> None:  # noqa: N802
            fm.record(FakeRequest("GET", self.path, self.lower_headers(), b"", "other"))
            if self.route().endswith("/models"):
                self.send_json(200, {"object": "list", "data": []})
                return
            self.send_json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:  # noqa: N802
            raw = self.read_body()
            if not self.route().endswith("/responses"):
                fm.record(FakeRequest("POST", self.path, self.lower_headers(), raw, "other"))
                self.send_json(404, {"error": {"message": "not found"}})
                return
            try:
                body = json.loads(raw.decode("utf-8"))
            except ValueError:
                fm.record(FakeRequest("POST", self.path, self.lower_headers(), raw, "other"))
                self.send_json(400, {"error": {"message": "body is not JSON"}})
                return
            answer = fm._answer(body)
            seq = fm.record(FakeRequest("POST", self.path, self.lower_headers(), raw, answer.kind))
            self._stream(body, answer.turn, seq)

        def _stream(self, body: dict[str, Any], turn: Turn, seq: int) -> None:
            self.start_sse()
            rid = f"resp_fake_{seq}"

            def event(kind: str, **data: Any) -> None:
                self.sse_event(kind, {"type": kind, **data})

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

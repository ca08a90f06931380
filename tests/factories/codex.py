"""Codex rollouts shaped like the ones Codex 0.171.0 writes, built in tests.

    r = Rollout()               # session_meta + Codex's context (developer, environment)
    r.turn("run echo", call=("echo hi", "hi\\n"), reply="done")
    data = r.bytes()

Records are compact JSON lines ``{"timestamp", "ordinal", "type", "payload"}``;
``paginated=False`` gives an older rollout (no ``ordinal``, no ``history_mode``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.base import Session, state_of
from kimi_compact_tui.formats.codex import FORMAT, CodexState

FMT = FORMAT
SID = "01a2323e-dfe4-7451-9203-731bea4ec5dd"
NAME = f"rollout-2026-12-01T15-35-11-{SID}.jsonl"
BASE = "You are a coding agent (base instructions)."
ENV = "<environment_context>\n  <cwd>/work</cwd>\n</environment_context>"


def text_item(role: str, text: str, **extra: Any) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}], **extra}


class Rollout:
    def __init__(self, paginated: bool = True, context: bool = True) -> None:
        self.paginated = paginated
        self.records: list[dict[str, Any]] = []
        self.turns = 0
        self.calls = 0
        meta: dict[str, Any] = {
            "id": SID,
            "timestamp": "2026-12-01T15:35:11.083Z",
            "cwd": "/work",
            "cli_version": "0.171.0",
            "base_instructions": {"text": BASE},
        }
        if paginated:
            meta["history_mode"] = "paginated"
        self.add("session_meta", meta)
        if context:
            self.item(text_item("developer", "<permissions instructions>\nnever\n"))
            harness = {"content_item_metadata": [{"provenance": {"type": "harness"}}]}
            self.item(text_item("user", ENV, internal_chat_message_metadata_passthrough=harness))
            self.add("world_state", {"full": True, "state": {}})

    def add(self, kind: str, payload: Any, **extra: Any) -> Rollout:
        record: dict[str, Any] = {"timestamp": f"2026-12-01T15:35:{len(self.records):02d}.000Z"}
        if self.paginated:
            record["ordinal"] = len(self.records)
        record.update(type=kind, payload=payload, **extra)
        self.records.append(record)
        return self

    def item(self, item: dict[str, Any]) -> Rollout:
        return self.add("response_item", item)

    def event(self, kind: str, **fields: Any) -> Rollout:
        return self.add("event_msg", {"type": kind, **fields})

    def call(self, command: str, output: str | None = None, call_id: str | None = None) -> str:
        self.calls += 1
        cid = call_id or f"call_{self.calls}"
        args = json.dumps({"cmd": command})
        self.item(
            {"type": "function_call", "name": "exec_command", "arguments": args, "call_id": cid}
        )
        if output is not None:
            self.item({"type": "function_call_output", "call_id": cid, "output": output})
        return cid

    def turn(
        self,
        prompt: str,
        *,
        call: tuple[str, str] | None = None,
        reply: str | None = "ok",
        reasoning: str | None = None,
        complete: bool = True,
        sent: bool = True,
        ui: str | None = None,
    ) -> Rollout:
        """One turn. ``ui``: the UI event that shows the prompt too (``"user_message"``,
        as older Codex and Codex Desktop write it, or ``"item_completed"``, as Codex
        0.171 does); ``sent=False``: the prompt is only that event (no response item)."""
        self.turns += 1
        turn_id = f"turn-{self.turns}"
        self.event("task_started", turn_id=turn_id)
        self.add("turn_context", {"turn_id": turn_id, "model": "fake-model"})
        if sent:
            self.item(text_item("user", prompt))
        if ui is not None or not sent:
            self.ui_prompt(prompt, ui or "user_message", turn_id)
        if reasoning is not None:
            summary = [{"type": "summary_text", "text": reasoning}]
            self.item({"type": "reasoning", "id": f"rs_{self.turns}", "summary": summary})
        if call is not None:
            self.call(*call)
        if reply is not None:
            self.item(text_item("assistant", reply))
        self.event("token_count", info={"last_token_usage": {"total_tokens": 100 * self.turns}})
        if complete:
            self.event("task_complete", turn_id=turn_id)
        return self

    def ui_prompt(self, prompt: str, kind: str = "user_message", turn_id: str = "") -> Rollout:
        """The UI event of a prompt (what Codex shows the person, not the model)."""
        if kind == "user_message":
            return self.event(kind, message=prompt, images=[], local_images=[], text_elements=[])
        item = {"type": "UserMessage", "id": f"um-{len(self.records)}"}
        item["content"] = [{"type": "text", "text": prompt, "text_elements": []}]
        return self.event(kind, turn_id=turn_id, item=item)

    def bytes(self) -> bytes:
        return b"".join(
            json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for r in self.records
        )

    def write(self, folder: Path) -> Path:
        path = folder / "sessions" / "2026" / "12" / "01" / NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.bytes())
        return path


def conversation(**kw: Any) -> Rollout:
    """Three turns; the first and third run a shell command."""
    return (
        Rollout(**kw)
        .turn("run echo hello", call=("echo hello", "hello\n"), reply="It printed hello.")
        .turn("two plus two?", reply="Four.", reasoning="2 + 2")
        .turn("run echo world", call=("echo world", "world\n"), reply="It printed world.")
    )


def parse(data: bytes, name: str = NAME) -> Session:
    return FMT.parse(data, Path("/codex/sessions") / name)


def codex_state(session: Session) -> CodexState:
    return state_of(session, CodexState)


def summary(session: Session) -> list[tuple]:
    return [
        (m.role, m.text(), [c["id"] for c in m.tool_calls], m.tool_call_id)
        for m in session.messages
    ]

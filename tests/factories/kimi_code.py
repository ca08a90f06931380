"""kimi-code 2.1 journals (``agents/<id>/wire.jsonl``) built record by record in
the shape kimi-code 2.1.0 writes (key order, fields and the records around the
history, as observed in journals the real kimi-code wrote on this machine);
tests/agents/ checks the same against the real agent.

    j = Journal()
    j.prompt("first prompt")
    j.tool_turn("call_1", "echo hello", "hello\n")
    j.answer("done", think="thinking")
    path = write_session_folder(tmp_path, j.bytes())
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.kimi_code.plugin import KimiCodeFormat

T0 = 1796115606402


class Journal:
    """A kimi-code 2.1 journal, record by record (see the module docstring)."""

    def __init__(self, agent: str = "main") -> None:
        self.agent = agent
        self.time = T0
        self.records: list[dict[str, Any]] = [
            {"type": "metadata", "protocol_version": "1.5", "created_at": T0}
        ]
        self.n = 0
        self.add("runtime.set_binding", workspaceId="wd_work_d7a539110fa4", runtimeId="local")
        self.add("profile.bind", modelAlias="fake", profileName="agent", systemPrompt="SYSTEM")

    def add(self, record_type: str, /, **payload: Any) -> dict[str, Any]:
        self.time += 7
        record = {"type": record_type, "agentId": self.agent, **payload, "time": self.time}
        self.records.append(record)
        return record

    def uid(self, prefix: str = "u") -> str:
        self.n += 1
        return f"{prefix}-{self.n:04d}"

    def append_message(self, message: dict[str, Any]) -> None:
        self.add("context.append_message", message=message)

    def prompt(self, text: str, content: list | None = None, owned: str | None = None) -> str:
        """A user prompt; ``owned``: a reminder injected just before it, owned by it."""
        pid = self.uid("msg")
        parts = content if content is not None else [{"type": "text", "text": text}]
        self.add("turn.prompt", input=parts, origin={"kind": "user"}, promptId=pid, turnId=self.n)
        if owned:
            self.reminder(owned, owner=pid)
        self.append_message(
            {
                "role": "user",
                "content": parts,
                "id": pid,
                "toolCalls": [],
                "origin": {"kind": "user"},
            }
        )
        # the UI record kimi-code writes beside it (no agentId, "kind": "event")
        self.records.append(
            {
                "message": {"message": {"role": "user", "content": parts}, "meta": {}},
                "type": "agent.message.appended",
                "time": self.time,
                "kind": "event",
            }
        )
        return pid

    def reminder(self, text: str, owner: str | None = None) -> None:
        origin: dict[str, Any] = {"kind": "injection", "variant": "permission_mode"}
        if owner:
            origin["ownerPromptId"] = owner
        self.append_message(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"<system-reminder>\n{text}\n</system-reminder>"}
                ],
                "toolCalls": [],
                "origin": origin,
            }
        )

    def loop(self, event: dict[str, Any]) -> None:
        self.add("context.append_loop_event", event=event)

    def begin(self) -> str:
        step = self.uid("step")
        self.loop({"type": "step.begin", "uuid": step, "turnId": "0", "step": 1})
        self.add("llm.request", kind="loop", provider="openai", model="fake-model")
        self.add("usage.record", model="fake", usage={"inputOther": 10, "output": 10})
        return step

    def part(self, step: str, part: dict[str, Any]) -> None:
        self.loop({"type": "content.part", "uuid": self.uid(), "stepUuid": step, "part": part})

    def call(self, step: str, call_id: str, command: str) -> None:
        self.loop(
            {
                "type": "tool.call",
                "uuid": self.uid(),
                "stepUuid": step,
                "toolCallId": call_id,
                "name": "Bash",
                "args": {"command": command},
                "display": {"kind": "command", "command": command},
            }
        )

    def result(self, call_id: str, output: Any, **extra: Any) -> None:
        self.loop(
            {
                "type": "tool.result",
                "parentUuid": self.uid(),
                "toolCallId": call_id,
                "result": {"output": output, **extra},
            }
        )

    def end(self, step: str, finish: str = "end_turn") -> None:
        self.loop(
            {"type": "step.end", "uuid": step, "turnId": "0", "step": 1, "finishReason": finish}
        )

    def answer(self, text: str, think: str | None = None) -> None:
        step = self.begin()
        if think:
            self.part(step, {"type": "think", "think": think, "reasoningKey": "reasoning_content"})
        self.part(step, {"type": "text", "text": text})
        self.end(step)
        self.add("turn.ended", turnId=self.n, reason="completed", durationMs=175)
        self.add("token_counting.turn_recorded", turnId=self.n, length=0, tokens=2396)

    def tool_turn(self, call_id: str, command: str, output: str) -> None:
        step = self.begin()
        self.part(step, {"type": "text", "text": "running"})
        self.call(step, call_id, command)
        self.result(call_id, output, durationMs=20)
        self.end(step, "tool_use")

    def bytes(self) -> bytes:
        return b"".join(
            json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for r in self.records
        )


def conversation() -> Journal:
    j = Journal()
    j.prompt("first prompt")
    j.reminder("Auto permission mode is active.")
    j.tool_turn("call_1", "echo hello", "hello\n")
    j.answer("done one", think="thinking a")
    j.prompt("second prompt")
    j.answer("answer two")
    return j


WORK_DIR = "wd_work_d7a539110fa4"


def write_home(root: Path, journal: bytes, session_id: str = "session_x1") -> Path:
    """A kimi-code home (``KIMI_CODE_HOME``) at ``root`` holding one session with its
    ``state.json`` and an index line, as kimi-code lays them out. Returns the
    session folder (what a user opens; its id opens it too)."""
    folder = root / "sessions" / WORK_DIR / session_id
    (folder / "agents" / "main").mkdir(parents=True)
    (folder / "agents" / "main" / "wire.jsonl").write_bytes(journal)
    (folder / "state.json").write_text(json.dumps({"cwd": "/w", "updatedAt": 1796115608034}))
    index = {"sessionId": session_id, "sessionDir": str(folder), "workDir": "/w"}
    with open(root / "session_index.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(index) + "\n")
    return folder


FMT = KimiCodeFormat()


def parse(data: bytes, path: Path = Path("/s/agents/main/wire.jsonl")) -> Session:
    """A journal's bytes read as the kimi-code format reads them."""
    return FMT.parse(data, path)


def summary(session: Session) -> list[tuple[str, str]]:
    """Each message's role and text."""
    return [(m.role, m.text()) for m in session.messages]

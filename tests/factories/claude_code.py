"""Claude Code transcripts for the tests, written line by line in the agent's shapes
(record envelopes as Claude Code 2.1 writes them; ``version`` says which).

    t = Transcript()
    t.user("Run echo hi")
    t.assistant([text("Running."), tool_use("toolu_1", "Bash", {"command": "echo hi"})])
    t.result("toolu_1", "hi")
    t.assistant([text("It printed hi.")])
    path = t.write(tmp_path)
"""

from __future__ import annotations

import json
import uuid as uuidlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

SID = "3f2b8c1e-0d4a-4c5e-9b7a-1a2b3c4d5e6f"
LAST = object()  # parentUuid: the last transcript record written


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": "sig"}


def tool_use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def image(data: str = "iVBORw0KGgo=", media_type: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


class Transcript:
    def __init__(self, sid: str = SID, cwd: str = "/work/project", version: str = "2.1.197"):
        self.sid, self.cwd, self.version = sid, cwd, version
        self.lines: list[dict[str, Any]] = []
        self.last: str | None = None
        self.clock = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
        self.count = 0

    def _uuid(self) -> str:
        self.count += 1
        return str(uuidlib.UUID(int=self.count))

    def _stamp(self) -> str:
        self.clock += timedelta(seconds=1)
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def record(self, kind: str, parent: Any = LAST, **fields: Any) -> str:
        uuid = fields.pop("uuid", None) or self._uuid()
        stamp = fields.pop("timestamp", None) or self._stamp()
        rec = {
            "parentUuid": self.last if parent is LAST else parent,
            "isSidechain": fields.pop("isSidechain", False),
            "type": kind,
            **fields,
            "uuid": uuid,
            "timestamp": stamp,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": "main",
        }
        if self.version.startswith(("1.", "2.0.")):  # older versions: the envelope first
            head = ("parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version")
            rec = {**{k: rec[k] for k in head}, **rec}
        self.lines.append(rec)
        if not rec["isSidechain"]:
            self.last = uuid
        return uuid

    def meta(self, **fields: Any) -> None:
        """A metadata line (``type`` given in ``fields``)."""
        self.lines.append(fields)

    def user(self, content: Any, parent: Any = LAST, **fields: Any) -> str:
        return self.record("user", parent, message={"role": "user", "content": content}, **fields)

    def assistant(self, blocks: list[dict[str, Any]], mid: str | None = None, **fields: Any):
        """One record per block, all with one ``message.id`` (as the agent writes a reply)."""
        mid = mid or f"msg_{self.count + 1:04d}"
        out = []
        for block in blocks:
            message = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [block],
                "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
                "usage": {"input_tokens": 100, "output_tokens": 10},
            }
            out.append(self.record("assistant", message=message, **fields))
        return out

    def result(self, call_id: str, output: Any, is_error: bool = False, **fields: Any) -> str:
        block = {"tool_use_id": call_id, "type": "tool_result", "content": output}
        block["is_error"] = is_error
        return self.user([block], toolUseResult={"stdout": output}, **fields)

    def attachment(self, attachment: dict[str, Any], **fields: Any) -> str:
        return self.record("attachment", attachment=attachment, **fields)

    def last_prompt(self, leaf: str, **fields: Any) -> None:
        self.meta(type="last-prompt", leafUuid=leaf, sessionId=self.sid, **fields)

    def data(self) -> bytes:
        return b"".join(
            json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for r in self.lines
        )

    def write(self, folder: Path, project: str = "-work-project") -> Path:
        path = folder / "projects" / project / f"{self.sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data())
        return path


def two_turns() -> Transcript:
    """Two prompts, one real tool call with its result, one thinking reply."""
    t = Transcript()
    t.meta(type="queue-operation", operation="enqueue", content="Run echo hi", sessionId=SID)
    t.user("Run echo hi")
    t.attachment({"type": "skill_listing", "content": "- verify: check things", "isInitial": True})
    t.assistant([text("Running it."), tool_use("toolu_1", "Bash", {"command": "echo hi"})])
    t.result("toolu_1", "hi")
    t.assistant([text("It printed hi.")])
    t.last_prompt(t.last)
    t.user("What is 2 + 2?")
    t.assistant([thinking("2 + 2 = 4"), text("Four.")])
    t.last_prompt(t.last, lastPrompt="What is 2 + 2?")
    return t


# Our own wording in the shapes Claude Code writes (a command's caveat and echoes).
CAVEAT = (
    "<local-command-caveat>Caveat: what follows came from local commands the user ran; "
    "answer it only if asked.</local-command-caveat>"
)
TASK = (
    "Add a --since flag to the history command in src/history.py. "
    "Always keep history.jsonl append-only."
)


def command_echo(t: Transcript, name: str, stdout: str) -> None:
    """A local command's records: the caveat (``isMeta``), the command, its output."""
    t.user(CAVEAT, isMeta=True)
    t.user(f"<command-name>/{name}</command-name>\n<command-message>{name}</command-message>\n"
           "<command-args></command-args>")  # fmt: skip
    t.user(f"<local-command-stdout>{stdout}</local-command-stdout>")


def todos(*items: tuple[str, str]) -> dict[str, Any]:
    return {"todos": [{"content": c, "status": s, "activeForm": c} for c, s in items]}


def planned_session(*, compact_echo: bool = True) -> Transcript:
    """A session as a real one goes: it starts with ``/clear``'s records, the task,
    a TodoWrite plan, a grep whose output names many files, an Edit, a failing
    test run, a checklist the assistant only proposes in prose, a prompt with a
    ``<system-reminder>`` inside, the plan updated, a thanks; and (``compact_echo``)
    ends with ``/compact``'s records."""
    t = Transcript()
    command_echo(t, "clear", "")
    t.user(TASK)
    plan = todos(
        ("Add the --since flag", "in_progress"),
        ("Write tests for --since", "pending"),
        ("Update the README", "pending"),
    )
    t.assistant([text("Planning it."), tool_use("toolu_1", "TodoWrite", plan)])
    t.result("toolu_1", "Todos have been modified successfully.")
    t.assistant([tool_use("toolu_2", "Bash", {"command": "grep -rn history.jsonl ."})])
    grep = "\n".join(
        f"./src/{name}.py:{n}:def read_{name}(path='history.jsonl'):"
        for n, name in enumerate(("history", "store", "export", "sync", "backup", "audit"), 3)
    )
    t.result("toolu_2", grep)
    edit = {"file_path": "/work/project/src/history.py", "old_string": "a", "new_string": "b"}
    t.assistant([text("Editing it."), tool_use("toolu_3", "Edit", edit)])
    t.result("toolu_3", "The file has been updated.")
    t.assistant([tool_use("toolu_4", "Bash", {"command": "pytest -q tests/test_history.py"})])
    t.result(
        "toolu_4",
        "FAILED tests/test_history.py::test_since - AssertionError: 2 != 3\n1 failed, 4 passed",
        is_error=True,
    )
    t.assistant([text("Next steps:\n- [ ] Verify CI passes\n- [ ] All tests pass")])
    t.user("ok, go on<system-reminder>The todo list changed.</system-reminder>")
    plan = todos(
        ("Add the --since flag", "completed"),
        ("Write tests for --since", "in_progress"),
        ("Update the README", "pending"),
    )
    t.assistant([tool_use("toolu_5", "TodoWrite", plan)])
    t.result("toolu_5", "Todos have been modified successfully.")
    t.user("thanks")
    t.assistant([text("You're welcome.")])
    if compact_echo:
        command_echo(t, "compact", "Compacted")
    return t

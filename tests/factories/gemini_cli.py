"""Gemini CLI session files built for tests, in the record shapes Gemini CLI 0.61
writes (``JSON.stringify`` lines: a header, ``$set`` records, messages replaced by
id). The real agent's files are in tests/agents (the proof); these cover cases a
short run does not produce."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "5f0c3a52-8d6e-4e4b-9d3c-0c6f1a2b3c4d"
PROJECT_HASH = "ab" * 32
CTX = "<session_context>\nThis is a test environment.\n</session_context>"


def js(record: Any) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def header(sid: str = SID, when: str = "2026-01-01T10:00:00.000Z", kind: str = "main") -> dict:
    return {
        "sessionId": sid,
        "projectHash": PROJECT_HASH,
        "startTime": when,
        "lastUpdated": when,
        "kind": kind,
    }


def user(mid: str, content: Any) -> dict:
    if isinstance(content, str):
        content = [{"text": content}]
    return {"id": mid, "timestamp": "2026-01-01T10:00:01.000Z", "type": "user", "content": content}


def call(cid: str, command: str, output: str | None) -> dict:
    out: dict[str, Any] = {"id": cid, "name": "run_shell_command", "args": {"command": command}}
    if output is not None:
        resp = {"id": cid, "name": "run_shell_command", "response": {"output": output}}
        out["result"] = [{"functionResponse": resp}]
        out["status"] = "success"
    return out


def gemini(mid: str, text: Any = "", calls: list | None = None, thoughts: list | None = None):
    msg: dict[str, Any] = {
        "id": mid,
        "timestamp": "2026-01-01T10:00:02.000Z",
        "type": "gemini",
        "content": text,
        "thoughts": thoughts or [],
        "tokens": {"input": 100, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 105},
        "model": "gemini-fake",
    }
    if calls:
        msg["toolCalls"] = calls
    return msg


def responses(mid: str, msg: dict) -> dict:
    """The user message Gemini CLI records with a reply's tool results."""
    parts = [p for c in msg.get("toolCalls", []) for p in c.get("result", [])]
    return user(mid, parts)


def conversation() -> list[dict]:
    """Records of a small session: a shell call and its result (recorded twice, as
    Gemini CLI does), a thinking reply, a second prompt."""
    reply = gemini("m2", "", [call("run_shell_command__c1", "echo hi", "hi")])
    return [
        header(),
        {"$set": {"messages": [user("ctx", CTX)], "lastUpdated": "2026-01-01T10:00:00.001Z"}},
        user("m1", "run echo hi"),
        {"$set": {"lastUpdated": "2026-01-01T10:00:01.000Z"}},
        gemini("m2", ""),
        reply,  # the same id again: replaces the line above, in place
        responses("m3", reply),
        gemini("m4", "It printed hi.", thoughts=[{"subject": "Plan", "description": "say it"}]),
        user("m5", "thanks, and 2+2?"),
        gemini("m6", "4."),
        {"$set": {"lastUpdated": "2026-01-01T10:00:09.000Z"}},
    ]


def chats_folder(home: Path, project: str = "proj", work: str = "/work/proj") -> Path:
    chats = home / ".gemini" / "tmp" / project / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    (chats.parent / ".project_root").write_text(work, encoding="utf-8")
    return chats


def write(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(js(r) + "\n" for r in records).encode("utf-8"))
    return path


def session_file(
    home: Path, records: list[Any] | None = None, sid: str = SID, minute: str = "10-00"
) -> Path:
    name = f"session-2026-01-01T{minute}-{sid[:8]}.jsonl"
    return write(chats_folder(home) / name, records if records is not None else conversation())

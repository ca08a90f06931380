"""Shared session factories for the tests: one writer per session format and a
few message builders, so a test says what session it needs, not how a file is
laid out.

``write_session(folder, fmt, messages)`` writes ``messages`` (OpenAI-style
dicts) in any of :data:`FORMATS`; the ``session_format`` fixture in
``conftest.py`` runs a test once per format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Every session format the tool reads and writes.
FORMATS = ("kimi", "openai-json", "openai-jsonl")


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def write_kimi(
    folder: Path,
    messages: list[dict[str, Any]],
    *,
    system_prompt: str | None = "You are kimi.",
    usage: int | None = 4242,
    checkpoint: bool = True,
) -> Path:
    """A kimi-cli session folder holding ``context.jsonl``: an optional
    ``_system_prompt`` record, a ``_checkpoint``, the messages and a final
    ``_usage`` record. Returns the ``context.jsonl`` path."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    if system_prompt is not None:
        lines.append(_line({"role": "_system_prompt", "content": system_prompt}))
    if checkpoint:
        lines.append(_line({"role": "_checkpoint", "id": 0}))
    lines += [_line(m) for m in messages]
    if usage is not None:
        lines.append(_line({"role": "_usage", "token_count": usage}))
    path = folder / "context.jsonl"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    return path


def write_openai_json(path: Path, messages: list[dict[str, Any]], **extra: Any) -> Path:
    """An OpenAI-style ``.json``: a bare list, or ``{"messages": [...], **extra}``."""
    data: Any = {"messages": messages, **extra} if extra else messages
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def write_openai_jsonl(path: Path, messages: list[dict[str, Any]]) -> Path:
    """An OpenAI-style ``.jsonl``: one message per line."""
    path.write_bytes("".join(_line(m) + "\n" for m in messages).encode("utf-8"))
    return path


def write_session(
    folder: Path, fmt: str, messages: list[dict[str, Any]], name: str = "session"
) -> Path:
    """``messages`` written under ``folder`` in format ``fmt`` (one of :data:`FORMATS`).
    The path returned is what a user passes as SESSION."""
    if fmt == "kimi":
        return write_kimi(folder / name, messages)
    if fmt == "openai-json":
        return write_openai_json(folder / f"{name}.json", messages)
    if fmt == "openai-jsonl":
        return write_openai_jsonl(folder / f"{name}.jsonl", messages)
    raise ValueError(f"unknown test session format {fmt!r} (expected one of {FORMATS})")


# ----------------------------------------------------------------------------- messages


def conversation(n: int, *, system: str | None = "sys") -> list[dict[str, Any]]:
    """An optional system message, then ``n`` alternating user/assistant turns."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        out.append({"role": role, "content": f"{role} turn {i} ünïcode"})
    return out


def tool_call(call_id: str, name: str = "shell", text: str = "") -> dict[str, Any]:
    """An assistant message calling one tool."""
    return {
        "role": "assistant",
        "content": text,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps({"cmd": "ls"})},
            }
        ],
    }


def tool_result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def tool_session() -> list[dict[str, Any]]:
    """A session with two tool exchanges (messages are 1-based below):
    1 system, 2 user, 3 assistant calls c1, 4 result c1, 5 assistant,
    6 user, 7 assistant calls c2, 8 result c2, 9 assistant, 10 user, 11 assistant."""
    return [
        {"role": "system", "content": "You are a careful engineer."},
        {"role": "user", "content": "List the files."},
        tool_call("c1"),
        tool_result("c1", "a.py b.py"),
        {"role": "assistant", "content": "Two files: a.py and b.py."},
        {"role": "user", "content": "Run the tests."},
        tool_call("c2", text="Running them."),
        tool_result("c2", "2 passed"),
        {"role": "assistant", "content": "Both tests pass."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "You're welcome."},
    ]


# ----------------------------------------------------------------------------- the console entry

ROOT = Path(__file__).resolve().parents[1]


def run_cli(
    *args: str,
    cwd: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
):
    """``python -m kimi_compact_tui ARGS`` in a subprocess, as a user runs it:
    no user config, no API keys from the caller, stdin closed unless given."""
    import os
    import subprocess
    import sys

    from tests import procs

    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    base.pop("KIMI_COMPACT_TUI_CONFIG", None)
    base["XDG_CONFIG_HOME"] = str((cwd or ROOT) / "no-config")
    base.update(env or {})
    return procs.run(
        [sys.executable, "-m", "kimi_compact_tui", *args],
        capture_output=True,
        text=True,
        env=base,
        cwd=cwd or ROOT,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        timeout=timeout,
    )

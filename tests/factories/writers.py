"""One writer per registered session format (:data:`FORMAT_WRITERS`, keyed by the
format's ``name``): each writes a realistic session (prompts, replies, a tool call
and its result, thinking where the format has it) under a tmp folder laid out as
the agent lays it out, and returns the path a user would open (a file, or the
session folder when that is how the agent's sessions are opened).

``tests/formats/test_every_format.py`` runs the round trip, the plan, the write, undo,
the diff and retention over every format of ``formats.registry.FORMATS`` with
these writers, and fails when a registered format has none: a new format gets
those tests by adding its writer here.

Every session ends at rest (the agent's last turn finished), its last four
messages are ``user, assistant, user, assistant`` with nothing injected, and an
earlier tool call has its result, so the default preserved tail and the
boundaries the tests pick are the same for every format.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.factories import claude_code, codex, gemini_cli, kimi_code, opencode
from tests.factories.messages import tool_call, tool_result
from tests.factories.plain import write_kimi, write_openai_json, write_openai_jsonl

#: Writes a session under the folder given; returns the path a user opens.
Writer = Callable[[Path], Path]

KIMI_SESSION_ID = "6b1f0c2e-5a7d-4e3b-8c9a-0d1e2f3a4b5c"
WORK_DIR = "/work/project"


def openai_messages() -> list[dict[str, Any]]:
    """An OpenAI-style conversation: a system prompt, a tool exchange, a reply
    with its reasoning, and two more plain turns."""
    answer = {
        "role": "assistant",
        "content": "Two files: parser.py and test_parser.py.",
        "reasoning_content": "The listing shows two Python files.",
    }
    return [
        {"role": "system", "content": "You are a careful engineer in /work/project."},
        {"role": "user", "content": "List the files in /work/project."},
        tool_call("call_1", text="Listing them."),
        tool_result("call_1", "parser.py\ntest_parser.py"),
        answer,
        {"role": "user", "content": "Why does parser.py fail?"},
        {"role": "assistant", "content": "Line 12 raises KeyError('id') on empty input."},
        {"role": "user", "content": "Fix it, please."},
        {"role": "assistant", "content": "Fixed: parser.py now checks for 'id' first."},
    ]


def kimi_cli_messages() -> list[dict[str, Any]]:
    """kimi-cli's message shapes: text parts, a ``think`` part, a tool call."""
    messages = openai_messages()
    messages[4] = {
        "role": "assistant",
        "content": [
            {"type": "think", "think": "The listing shows two Python files."},
            {"type": "text", "text": "Two files: parser.py and test_parser.py."},
        ],
    }
    return messages


def write_kimi_cli(folder: Path) -> Path:
    """``~/.kimi/sessions/<md5 of the work folder>/<session id>/context.jsonl``;
    the session folder is returned."""
    digest = hashlib.md5(WORK_DIR.encode()).hexdigest()
    session = folder / ".kimi" / "sessions" / digest / KIMI_SESSION_ID
    write_kimi(session, kimi_cli_messages(), system_prompt="You are kimi.", usage=812)
    return session


def write_kimi_code(folder: Path) -> Path:
    """A kimi-code home with one session (``agents/main/wire.jsonl``, ``state.json``,
    the index line); the session folder is returned."""
    j = kimi_code.Journal()
    j.prompt("List the files in /work/project.")
    j.reminder("Auto permission mode is active.")
    j.tool_turn("call_1", "ls /work/project", "parser.py\ntest_parser.py\n")
    j.answer("Two files: parser.py and test_parser.py.", think="two Python files")
    j.prompt("Why does parser.py fail?")
    j.answer("Line 12 raises KeyError('id') on empty input.")
    j.prompt("Fix it, please.")
    j.answer("Fixed: parser.py now checks for 'id' first.")
    return kimi_code.write_home(folder / ".kimi-code", j.bytes())


def write_claude_code(folder: Path) -> Path:
    """``~/.claude/projects/<project>/<session id>.jsonl``: two prompts (a tool
    call, a thinking reply), then one more turn."""
    t = claude_code.two_turns()
    t.user("Thanks. Anything else?")
    t.assistant([claude_code.text("No, that is all.")])
    t.last_prompt(t.last, lastPrompt="Thanks. Anything else?")
    return t.write(folder / ".claude")


def write_codex(folder: Path) -> Path:
    """``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``: five turns,
    two shell calls, a reasoning item."""
    rollout = codex.conversation().turn("what did it print?", reply="world")
    rollout.turn("thanks, anything else?", reply="No, that is all.")
    return rollout.write(folder / ".codex")


def write_gemini_cli(folder: Path) -> Path:
    """``~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl``: a shell call and
    its result, a reply with thoughts, two more prompts."""
    records = gemini_cli.conversation()
    records += [
        gemini_cli.user("m7", "thanks, anything else?"),
        gemini_cli.gemini("m8", "No, that is all."),
        {"$set": {"lastUpdated": "2026-01-01T10:00:12.000Z"}},
    ]
    return gemini_cli.session_file(folder, records)


def write_opencode(folder: Path) -> Path:
    """``~/.local/share/opencode/opencode.db`` (WAL mode) holding two sessions: one
    with a real-shaped tool call and its result (one assistant row), then three
    more turns, and another session beside it. Returns ``DB#ses_…`` (a database
    holds many sessions; this is how one is named)."""
    where = folder / ".local" / "share" / "opencode"
    where.mkdir(parents=True)
    db = opencode.OpencodeDb(where / "opencode.db")
    o = opencode
    sid = db.session("Fix the parser", directory=WORK_DIR)
    u = db.user(sid, "List the files in /work/project.")
    listing = o.tool("call_1", "ls /work/project", "parser.py\ntest_parser.py\n")
    db.assistant(
        sid,
        u,
        [o.step_start(), o.text("Listing them."), listing, o.step_finish("tool-calls")],
        finish="tool-calls",
    )
    db.assistant(
        sid,
        u,
        [
            o.step_start(),
            o.reasoning("The listing shows two Python files."),
            o.text("Two files: parser.py and test_parser.py."),
            o.step_finish(),
        ],
    )
    u = db.user(sid, "Why does parser.py fail?")
    db.assistant(
        sid, u, [o.step_start(), o.text("Line 12 raises KeyError('id')."), o.step_finish()]
    )
    u = db.user(sid, "Fix it, please.")
    db.assistant(
        sid, u, [o.step_start(), o.text("Fixed: parser.py checks for 'id' first."), o.step_finish()]
    )
    other = db.session("Another session", directory=WORK_DIR)
    db.assistant(other, db.user(other, "Hello"), [o.step_start(), o.text("Hi."), o.step_finish()])
    db.close()
    return Path(f"{db.path}#{sid}")


def write_openai_jsonl_session(folder: Path) -> Path:
    return write_openai_jsonl(folder / "chat.jsonl", openai_messages())


def write_openai_json_session(folder: Path) -> Path:
    return write_openai_json(folder / "chat.json", openai_messages(), model="gpt-test")


FORMAT_WRITERS: dict[str, Writer] = {
    "kimi": write_kimi_cli,
    "kimi-code": write_kimi_code,
    "claude-code": write_claude_code,
    "codex": write_codex,
    "gemini-cli": write_gemini_cli,
    "opencode": write_opencode,
    "openai-jsonl": write_openai_jsonl_session,
    "openai-json": write_openai_json_session,
}

"""Tool results read as each agent recorded them (issue 31, items 3, 5 and 6).

Each session is written in the agent's own shapes (the factories) and loaded
by its format, so the extractor sees exactly what a real session gives it:
kimi-cli's success note, Claude Code's ``is_error`` (absent or false is a
success; a rejected write is never an edit), Codex's ``exec_command`` whose
exit arrives in a later ``write_stdin`` output, and opencode's metadata.
"""

from __future__ import annotations

import json
from pathlib import Path

from kimi_compact_tui.formats import load_session
from kimi_compact_tui.formats.kimi_cli.plugin import KimiCliFormat
from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics import COMMANDS, EDITED_FILES, USER_REQUESTS, Specifics, extract
from kimi_compact_tui.specifics.extractor import failed, succeeded
from tests.factories import claude_code as cc
from tests.factories import codex as cx
from tests.factories import opencode as oc

KIMI_OK = "<system>Command executed successfully.</system>"
CLAUDE_REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file). STOP what "
    "you are doing and wait for the user to tell you how to proceed."
)


def specifics_of(path: Path | str) -> Specifics:
    session = load_session(path)
    return extract(session.messages, range(len(session.messages)), session.format.vocabulary())


def status(found: Specifics, command: str) -> str | None:
    item = next(i for i in found.of(COMMANDS) if i.text == command)
    return item.status


def kimi_call(cid: str, name: str, args: dict) -> Message:
    call = {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return Message.make("assistant", "", tool_calls=[call])


def test_kimi_cli_success_note_is_a_success_and_its_error_note_a_failure():
    messages = [
        Message.make("user", "Build it and list the files."),
        kimi_call("c1", "Shell", {"command": "make build"}),
        Message.make(
            "tool",
            [{"type": "text", "text": KIMI_OK}, {"type": "text", "text": "built\n"}],
            tool_call_id="c1",
        ),
        kimi_call("c2", "Shell", {"command": "ls missing"}),
        Message.make(
            "tool",
            "<system>ERROR: Command failed with exit code: 2.</system>ls: missing: No such file",
            tool_call_id="c2",
        ),
    ]
    found = extract(messages, range(len(messages)), KimiCliFormat().vocabulary())
    assert succeeded(status(found, "make build"))
    assert failed(status(found, "ls missing"))


def claude_session(tmp_path: Path) -> Path:
    t = cc.Transcript()
    t.user("Run the tests, then write notes.md and fix app.py.")
    t.assistant([cc.tool_use("toolu_1", "Bash", {"command": "pytest -q"})])
    t.result("toolu_1", "12 tests ok")  # is_error false, no exit code: a success
    t.assistant([cc.tool_use("toolu_2", "Bash", {"command": "make lint"})])
    t.result("toolu_2", "Exit code 2\nlint: 3 problems", is_error=True)
    t.assistant(
        [cc.tool_use("toolu_3", "Write", {"file_path": "/work/project/notes.md", "content": "x"})]
    )
    t.result("toolu_3", CLAUDE_REJECTED, is_error=True)
    t.user("[Request interrupted by user for tool use]")
    t.assistant(
        [
            cc.tool_use(
                "toolu_4",
                "Edit",
                {"file_path": "/work/project/app.py", "old_string": "a", "new_string": "b"},
            )
        ]
    )
    t.result("toolu_4", "The file /work/project/app.py has been updated.")
    t.assistant([cc.text("Done.")])
    return t.write(tmp_path)


def test_claude_code_results_without_an_exit_code_and_is_error(tmp_path):
    found = specifics_of(claude_session(tmp_path))
    assert succeeded(status(found, "pytest -q"))
    assert failed(status(found, "make lint"))


def test_a_rejected_write_is_never_an_edited_file(tmp_path):
    found = specifics_of(claude_session(tmp_path))
    edited = [i.text for i in found.of(EDITED_FILES)]
    assert edited == ["app.py"]


def test_claude_codes_interruption_note_is_not_a_user_request(tmp_path):
    found = specifics_of(claude_session(tmp_path))
    texts = [i.text for i in found.of(USER_REQUESTS)]
    assert texts == ["Run the tests, then write notes.md and fix app.py."]


def codex_session(tmp_path: Path) -> Path:
    r = cx.Rollout()
    r.event("task_started", turn_id="turn-1")
    r.item(cx.text_item("user", "Run the build and the tests."))
    running = "Chunk ID: a1\nWall time: 10.0 seconds\nProcess running with session ID {}\nOriginal token count: 3\nOutput:\nworking\n"
    r.call("npm run build", running.format(42), call_id="exec_1")
    poll = json.dumps({"session_id": 42, "chars": "", "yield_time_ms": 1000})
    r.item({"type": "function_call", "name": "write_stdin", "arguments": poll, "call_id": "poll_1"})
    r.item({"type": "function_call_output", "call_id": "poll_1", "output": running.format(42)})
    r.item({"type": "function_call", "name": "write_stdin", "arguments": poll, "call_id": "poll_2"})
    done = "Chunk ID: a3\nWall time: 3.5 seconds\nProcess exited with code 0\nOriginal token count: 2\nOutput:\nbuilt\n"
    r.item({"type": "function_call_output", "call_id": "poll_2", "output": done})
    r.call("npm test", running.format(43), call_id="exec_2")
    poll2 = json.dumps({"session_id": 43, "chars": ""})
    r.item(
        {"type": "function_call", "name": "write_stdin", "arguments": poll2, "call_id": "poll_3"}
    )
    failing = "Chunk ID: a4\nWall time: 2.0 seconds\nProcess exited with code 1\nOriginal token count: 2\nOutput:\n1 failing\n"
    r.item({"type": "function_call_output", "call_id": "poll_3", "output": failing})
    r.item(cx.text_item("assistant", "The build passes; one test fails."))
    r.event("task_complete", turn_id="turn-1")
    return r.write(tmp_path)


def test_codex_exec_command_results_polled_by_write_stdin_are_its_results(tmp_path):
    found = specifics_of(codex_session(tmp_path))
    assert status(found, "npm run build") == "exit 0"
    assert status(found, "npm test") == "exit 1"
    assert [i.text for i in found.of(COMMANDS)] == ["npm run build", "npm test"]


def opencode_session(tmp_path: Path) -> str:
    db = oc.OpencodeDb(tmp_path / "opencode.db")
    sid = db.session("Work")
    u = db.user(sid, "List the files, run the check, and write the notes.")
    ok = oc.tool("c1", "ls", "a.py\nb.py\n")
    ok["state"]["metadata"] = {"output": "a.py\nb.py\n", "exit": 0, "description": "list"}
    bad = oc.tool("c2", "make check", "check: 2 problems\n")
    bad["state"]["metadata"] = {"output": "check: 2 problems\n", "exit": 2, "description": "check"}
    plain = oc.tool("c3", "echo hi", "hi\n")  # output, no exit code in its metadata
    write = {
        "type": "tool",
        "tool": "write",
        "callID": "c4",
        "state": {
            "status": "error",
            "input": {"filePath": "/work/notes.md", "content": "x"},
            "error": "The user rejected permission to use this specific tool call.",
            "time": {"start": 1, "end": 2},
        },
    }
    db.assistant(sid, u, [oc.step_start(), ok, bad, plain, write, oc.step_finish()])
    db.close()
    return f"{tmp_path / 'opencode.db'}#{sid}"


def test_opencode_results_read_with_their_metadata(tmp_path):
    found = specifics_of(opencode_session(tmp_path))
    assert succeeded(status(found, "ls"))
    assert failed(status(found, "make check"))
    assert succeeded(status(found, "echo hi"))
    assert found.of(EDITED_FILES) == []


def offline_of(path: Path | str) -> str:
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.job import prepare_compaction
    from kimi_compact_tui.providers.offline import offline_summary

    session = load_session(path)
    prep = prepare_compaction(session, AppConfig(), up_to=len(session.messages))
    assert prep.request is not None
    return offline_summary(prep.request)


def test_the_offline_summary_states_results_as_recorded_and_no_refused_write(tmp_path):
    for path in (claude_session(tmp_path / "c"), codex_session(tmp_path / "x")):
        text = offline_of(path)
        assert "no result recorded" not in text
    text = offline_of(claude_session(tmp_path / "c2"))
    written = text.split("Files written or edited:")[1].split("</code_state>")[0]
    assert "app.py" in written and "notes.md" not in written
    assert "[Request interrupted" not in text


def test_a_command_with_no_result_at_all_says_so(tmp_path):
    t = cc.Transcript()
    t.user("Start the server and wait for my word before anything else, please.")
    t.assistant([cc.tool_use("toolu_1", "Bash", {"command": "make serve"})])
    found = specifics_of(t.write(tmp_path))
    assert status(found, "make serve") is None

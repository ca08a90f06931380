"""Noise is not a specific (issue 31, item 9): each case is a shape a real
session had, and each test failed on the extractor before the fix."""

from __future__ import annotations

import json

from kimi_compact_tui.formats.codex.plugin import CodexFormat
from kimi_compact_tui.formats.kimi_cli.plugin import KimiCliFormat
from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics import (
    COMMANDS,
    ERRORS,
    FILE_PATHS,
    NUMBERS,
    OPEN_TASKS,
    extract,
)
from kimi_compact_tui.specifics.extractor import succeeded
from kimi_compact_tui.specifics.patterns import numbers_in, paths_in


def call(cid: str, name: str, arguments: str) -> Message:
    fn = {"name": name, "arguments": arguments}
    return Message.make(
        "assistant", "", tool_calls=[{"id": cid, "type": "function", "function": fn}]
    )


def texts(found, kind: str) -> list[str]:
    return [i.text for i in found.of(kind)]


def test_a_number_with_thousands_separators_is_one_number():
    keys = [k for k, _ in numbers_in("the window is 200,000 tokens")]
    assert keys == ["200000tokens"]
    shown = [
        s for _, s in numbers_in("a 1,048,576 bytes buffer".lower(), "a 1,048,576 bytes buffer")
    ]
    assert shown == ["1,048,576 bytes"]


def test_wall_times_and_versions_in_tool_output_are_not_figures():
    output = (
        "Chunk ID: a1\nWall time: 10.0 seconds\nProcess exited with code 0\nOutput:\n"
        "+ left-pad@1.3.0\n+ react v18.2.0\nadded 2 packages in 3s\n"
    )
    messages = [
        Message.make("user", "Install the deps; the timeout is 30 s."),
        call("c1", "exec_command", json.dumps({"cmd": "npm install"})),
        Message.make("tool", output, tool_call_id="c1"),
    ]
    found = extract(messages, range(3), CodexFormat().vocabulary())
    assert texts(found, NUMBERS) == ["30 s"]


def test_globs_shell_variables_and_placeholders_are_not_paths():
    text = (
        "Search **/*.test.ts and .env* files, then read $TASK_DIR/spec.json and "
        "${OUT}/report.md. If another process holds X.lock we wait. Edit src/app.ts."
    )
    assert paths_in(text) == ["src/app.ts"]


def test_a_quoted_path_with_spaces_is_whole():
    assert paths_in('open "/work/My Project/design notes.md" now') == [
        "/work/My Project/design notes.md"
    ]
    assert paths_in("cat 'docs/release plan.md'") == ["docs/release plan.md"]


def test_a_search_that_finds_nothing_is_no_error():
    messages = [
        Message.make("user", "Is the old flag still used anywhere?"),
        call("c1", "Shell", json.dumps({"command": "rg -n old_flag src"})),
        Message.make(
            "tool", "<system>ERROR: Command failed with exit code: 1.</system>", tool_call_id="c1"
        ),
        Message.make("assistant", "No: nothing uses it."),
    ]
    found = extract(messages, range(4), KimiCliFormat().vocabulary())
    assert succeeded(found.of(COMMANDS)[0].status)
    assert found.of(ERRORS) == []


def test_truncated_tool_argument_json_is_never_the_command():
    cut = '{"cmd": "SMOKE_DIR=/tmp/smoke ./run-smoke.sh --all --verb'
    messages = [
        Message.make("user", "Run the smoke tests."),
        call("c1", "exec_command", cut),
        call("c2", "exec_command", '{"yield_time_ms": 10'),
    ]
    found = extract(messages, range(3), CodexFormat().vocabulary())
    commands = texts(found, COMMANDS)
    assert commands == ["SMOKE_DIR=/tmp/smoke ./run-smoke.sh --all --verb …"]
    assert not any("{" in c for c in commands)


def test_a_todo_line_in_a_request_is_an_open_task():
    request = "Fix the parser.\nTODO: add a test for empty input\nTODO: update the changelog"
    found = extract([Message.make("user", request)], range(1), KimiCliFormat().vocabulary())
    assert texts(found, OPEN_TASKS) == ["add a test for empty input", "update the changelog"]


def test_paths_in_tool_output_lines_still_do_not_count():
    messages = [
        Message.make("user", "List it."),
        call("c1", "Shell", json.dumps({"command": "ls"})),
        Message.make("tool", "a.py\nb.py\n", tool_call_id="c1"),
    ]
    found = extract(messages, range(3), KimiCliFormat().vocabulary())
    assert texts(found, FILE_PATHS) == []

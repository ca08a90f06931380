"""The one extractor of a session's specifics and the one
bookkeeping hook it shares with the tail rule, on sessions
written in each agent's own shapes with its real tool names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.formats import load_session
from kimi_compact_tui.formats.registry import FORMATS
from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics import (
    COMPLETED,
    IN_PROGRESS,
    PENDING,
    ToolRoles,
    extract,
)
from tests.factories.claude_code import TASK, planned_session


def claude(tmp_path: Path, **kw):
    return load_session(planned_session(**kw).write(tmp_path))


def specifics_of(session):
    return extract(session.messages, range(len(session.messages)), session.format.vocabulary())


def test_every_format_declares_what_its_tools_do():
    """Each agent's format names the tools that write files, run commands and keep
    the plan (the fallbacks: every agent's)."""
    for fmt in FORMATS:
        tools = fmt.tools
        assert isinstance(tools, ToolRoles)
        assert tools.runs, fmt.name
        assert tools.writes or tools.patches, fmt.name
        assert tools.plans, fmt.name


def test_claude_code_requests_are_the_persons_prompts_verbatim_and_in_order(tmp_path):
    found = specifics_of(claude(tmp_path))
    requests = [(i.text, [n + 1 for n in i.messages]) for i in found.of("user_requests")]
    # not the caveat, not /clear or /compact and their output, not the reminder block
    assert requests == [(TASK, [4]), ("ok, go on", [14]), ("thanks", [17])]
    weights = [i.weight for i in found.of("user_requests")]
    assert weights[0] > weights[2]  # a short acknowledgement weighs less
    # the person's standing rule is an instruction; bookkeeping never is
    assert [i.text for i in found.of("instructions")] == ["Always keep history.jsonl append-only."]


def test_the_plan_is_the_agents_last_todo_state_not_a_checklist_in_prose(tmp_path):
    found = specifics_of(claude(tmp_path))
    plan = [(i.text, i.status, [n + 1 for n in i.messages]) for i in found.of("plan")]
    assert plan == [
        ("Add the --since flag", COMPLETED, [15]),
        ("Write tests for --since", IN_PROGRESS, [15]),
        ("Update the README", PENDING, [15]),
    ]
    assert [i.text for i in found.of("open_tasks")] == [
        "Write tests for --since",
        "Update the README",
    ]
    assert found.plan_message == 14  # 0-based: message 15 set it


def test_files_written_commands_with_status_and_open_errors(tmp_path):
    found = specifics_of(claude(tmp_path))
    assert [(i.text, i.status) for i in found.of("edited_files")] == [("src/history.py", "Edit")]
    assert [(i.text, i.status) for i in found.of("commands")] == [
        ("grep -rn history.jsonl .", "succeeded"),  # not marked is_error: a success
        ("pytest -q tests/test_history.py", "failed"),  # the record marks it is_error
    ]
    errors = {i.text: i.status for i in found.of("errors")}
    assert errors["failing test tests/test_history.py::test_since"] == "open"
    # the grep output's lines are not files anyone named or touched
    paths = [i.text for i in found.of("file_paths")]
    assert "src/history.py" in paths and "history.jsonl" in paths
    assert not any(p.startswith("src/") and p != "src/history.py" for p in paths)


def test_an_error_is_resolved_when_a_later_run_of_the_same_program_succeeds():
    from kimi_compact_tui.formats.kimi_cli.plugin import KimiCliFormat

    def shell(cid: str, command: str) -> Message:
        args = json.dumps({"command": command})
        call = {"id": cid, "type": "function", "function": {"name": "Shell", "arguments": args}}
        return Message.make("assistant", "", tool_calls=[call])

    messages = [
        Message.make("user", "Make the tests pass."),
        shell("c1", "pytest -q"),
        Message.make("tool", "E   KeyError: 'id'\nexit code 1", tool_call_id="c1"),
        shell("c2", "pytest -q"),
        Message.make("tool", "12 passed in 0.3s", tool_call_id="c2"),
    ]
    found = extract(messages, range(5), KimiCliFormat().vocabulary())
    assert {i.text: i.status for i in found.of("errors")} == {
        "KeyError: 'id'": "resolved",
    }  # the exit is the command's own status ("exit 1"), not an error line of its own
    assert [(i.text, i.status) for i in found.of("commands")] == [("pytest -q", "12 passed")]


@pytest.mark.parametrize(
    ("tool", "args", "path"),
    [
        ("WriteFile", {"path": "app/main.py", "content": "x = 1\n"}, "app/main.py"),  # kimi-cli
        ("write_file", {"file_path": "app/main.py", "content": "x"}, "app/main.py"),  # Gemini
        (
            "apply_patch",
            "*** Begin Patch\n*** Update File: app/main.py\n@@\n-x\n+y\n*** End Patch\n",
            "app/main.py",
        ),  # Codex's custom tool: the input is the patch itself
    ],
)
def test_each_agents_write_tool_is_an_edit(tool, args, path):
    from kimi_compact_tui.formats import registry

    raw = args if isinstance(args, str) else json.dumps(args)
    call = {"id": "w1", "type": "function", "function": {"name": tool, "arguments": raw}}
    messages = [
        Message.make("user", "Change it."),
        Message.make("assistant", "", tool_calls=[call]),
    ]
    found = extract(messages, range(2), registry.get("openai-jsonl").vocabulary())
    assert [i.text for i in found.of("edited_files")] == [path]


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("update_plan", {"plan": [{"step": "Ship it", "status": "in_progress"}]}),  # Codex
        ("SetTodoList", {"todos": [{"title": "Ship it", "status": "in_progress"}]}),  # kimi-cli
        ("TodoList", {"todos": [{"title": "Ship it", "status": "in_progress"}]}),  # Kimi Code
        ("write_todos", {"todos": [{"description": "Ship it", "status": "in_progress"}]}),
    ],
)
def test_each_agents_plan_tool_sets_the_plan(tool, args):
    from kimi_compact_tui.formats import registry

    call = {
        "id": "p1",
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(args)},
    }
    messages = [Message.make("user", "Plan it."), Message.make("assistant", "", tool_calls=[call])]
    found = extract(messages, range(2), registry.get("openai-jsonl").vocabulary())
    assert [(i.text, i.status) for i in found.of("open_tasks")] == [("Ship it", IN_PROGRESS)]


def test_codex_context_and_kimi_checkpoints_are_bookkeeping():
    from kimi_compact_tui.formats.codex.plugin import CodexFormat
    from kimi_compact_tui.formats.kimi_cli.plugin import KimiCliFormat

    context = Message(
        {"role": "system", "content": "<environment_context>…", "codex": {"role": "user"}}
    )
    assert CodexFormat().bookkeeping(context) == "context"
    summary = Message({"role": "user", "content": "earlier work", "codex": {"summary": True}})
    assert CodexFormat().bookkeeping(summary) == "summary"
    kimi = KimiCliFormat()
    assert kimi.bookkeeping(Message.make("user", "<system>CHECKPOINT 3</system>")) == "checkpoint"
    assert kimi.bookkeeping(Message.make("user", "Fix it.")) is None
    assert not kimi.tail_bookkeeping(Message.make("user", "<system>CHECKPOINT 3</system>"))


def _opencode_tool(call_id: str, name: str, args: dict, output: str = "ok") -> dict:
    """A completed tool part as opencode 1.18 stores it (``tool``, ``callID``, ``state``)."""
    state = {"status": "completed", "input": args, "output": output, "metadata": {}}
    state.update(title=name, time={"start": 1, "end": 2})
    return {"type": "tool", "tool": name, "callID": call_id, "state": state}


def test_opencode_tools_and_its_summary_framing(tmp_path):
    """opencode's write/edit/bash/todowrite tools are read by what they do, and the
    framing and summary of its own compaction are bookkeeping, never requests."""
    from tests.factories.opencode import OpencodeDb, step_start, text

    db = OpencodeDb(tmp_path / "opencode.db")
    sid = db.session("tools")
    u1 = db.user(sid, "Rename the loader and keep a plan.")
    todos = [
        {"content": "Rename load_config", "status": "completed", "priority": "high"},
        {"content": "Update the docs", "status": "pending", "priority": "low"},
    ]
    db.assistant(
        sid,
        u1,
        [
            step_start(),
            _opencode_tool("c1", "todowrite", {"todos": todos}),
            _opencode_tool("c2", "edit", {"filePath": "/w/app/config.py", "oldString": "a"}),
            _opencode_tool("c3", "write", {"filePath": "/w/docs/loader.md", "content": "x"}),
            _opencode_tool("c4", "bash", {"command": "pytest -q"}, "3 passed"),
            text("Done with the rename."),
        ],
    )
    db.compaction(sid, "the earlier summary", tail_start_id=u1)
    u2 = db.user(sid, "Now the docs.")
    db.assistant(sid, u2, [step_start(), text("On it.")])
    session = load_session(f"{db.path}#{sid}")
    found = specifics_of(session)
    assert [i.text for i in found.of("user_requests")] == [
        "Rename the loader and keep a plan.",
        "Now the docs.",
    ]
    assert {i.text for i in found.of("edited_files")} == {"/w/app/config.py", "/w/docs/loader.md"}
    assert "pytest -q" in {i.text for i in found.of("commands")}
    assert [i.text for i in found.of("open_tasks")] == ["Update the docs"]
    kinds = [session.format.bookkeeping(m) for m in session.messages]
    assert "summary" in kinds and "reminder" in kinds  # the summary and its framing

"""The offline summary states only what the record shows, and
retention weighs what a summary loses: each bug found in them, on a
Claude Code session and an OpenAI file written as the agents write them."""

from __future__ import annotations

import json
from pathlib import Path

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.providers.offline import offline_summary
from kimi_compact_tui.retention import retention_report
from tests.factories import run_cli
from tests.factories.claude_code import TASK, planned_session

CONFIG = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})


def section(text: str, name: str) -> str:
    return text[text.index(f"<{name}>") : text.index(f"</{name}>")]


def claude_summary(tmp_path: Path, instruction: str = "") -> tuple[object, object, str]:
    session = load_session(planned_session().write(tmp_path))
    prep = prepare_compaction(session, CONFIG, custom_instruction=instruction)
    assert prep.request is not None
    return session, prep, offline_summary(prep.request)


def test_completed_tasks_never_lists_an_unchecked_or_open_item(tmp_path):
    _, _, text = claude_summary(tmp_path)
    done = section(text, "completed_tasks")
    assert "Verify CI passes" not in done and "All tests pass" not in done  # prose proposal
    assert "[completed] Add the --since flag" in done  # the agent's own plan says so
    assert "Write tests for --since" not in done and "Update the README" not in done


def test_active_issues_lists_the_open_tasks_and_the_failing_test(tmp_path):
    _, _, text = claude_summary(tmp_path)
    issues = section(text, "active_issues")
    assert "No open issues" not in issues and "No open plan item" not in issues
    assert "[in_progress] Write tests for --since (the plan of message 15)" in issues
    assert "[pending] Update the README (the plan of message 15)" in issues
    assert "failing test tests/test_history.py::test_since" in issues


def test_the_task_is_kept_and_the_command_caveat_is_not_an_instruction(tmp_path):
    _, _, text = claude_summary(tmp_path)
    assert f"request 1 (message 4): {TASK}" in section(text, "current_focus")
    assert "Caveat" not in text and "local-command" not in text and "/clear" not in text
    assert "system-reminder" not in text and "The todo list changed" not in text
    assert "Always keep history.jsonl append-only." in section(text, "important_context")
    assert "- src/history.py (Edit; message 9)" in section(text, "code_state")  # written


def test_grep_output_is_never_the_latest_version_of_a_file(tmp_path):
    """Old main showed a grep output as a file's "Latest version"; no section is
    named so any more, so what is checked is the grep's lines themselves."""
    _, _, text = claude_summary(tmp_path)
    assert "def read_store" not in text  # a grep output line
    assert "src/store.py" not in text  # a file only the grep's output names


def test_keep_x_and_focus_on_y_follows_both(tmp_path):
    """Today "keep `X` and focus on Y" keeps X and silently drops "focus on Y"."""
    _, _, text = claude_summary(
        tmp_path, "Keep `grep -rn history.jsonl .` and focus on the README."
    )
    assert "  - grep -rn history.jsonl ." in section(text, "important_context")
    assert "Requested focus (custom instructions): the README." in section(text, "current_focus")
    assert "not followed" not in text


def test_unfollowed_instructions_are_counted_one_by_one(tmp_path):
    _, _, text = claude_summary(tmp_path, "Be concise and write in French.")
    assert "2 instructions of the custom instructions not followed" in text


def test_a_lossy_summary_is_flagged_critical_for_what_matters(tmp_path):
    session, prep, _ = claude_summary(tmp_path)
    lossy = "<current_focus>Working on the history command.</current_focus>"
    report = retention_report(session, prep.plan, lossy)
    missing = {n: [i.text for i in c.missing] for n, c in report.categories.items()}
    assert missing["user_requests"] == [TASK, "ok, go on"]  # "thanks" is in the kept tail
    assert missing["open_tasks"] == ["Write tests for --since", "Update the README"]
    assert missing["edited_files"] == ["src/history.py"]
    assert report.critical_line() == (
        "CRITICAL: the summary loses 1 user request, 1 instruction, 2 open tasks"
    )  # the short "ok, go on" is not critical
    # the offline summary itself keeps them all
    offline = retention_report(session, prep.plan, offline_summary(prep.request))
    for name in ("user_requests", "instructions", "open_tasks", "edited_files"):
        assert offline.categories[name].missing == [], name


OPENAI_MESSAGES = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the failing parser test."},
    {"role": "assistant", "content": "Looking at it."},
    {"role": "developer", "content": "Keep file paths verbatim."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Here is the screenshot and a voice note:"},
            {"type": "image_url", "image_url": {"url": "https://example.org/shot.png"}},
        ],
    },
    {"role": "assistant", "content": "I see the stack trace in parser.py."},
    {"role": "user", "content": "Go on."},
    {"role": "assistant", "content": "Done."},
]
# What the offline summary wrote on the old main: the focus on the last request only.
OLD_SUMMARY = (
    "<current_focus>\nThe latest user request (message 5): Here is the screenshot and a "
    "voice note:\n</current_focus>\n"
)


def openai_file(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": OPENAI_MESSAGES}), encoding="utf-8")
    return path


def test_openai_file_keeps_the_task_and_the_developer_instruction(tmp_path):
    session = load_session(openai_file(tmp_path))
    prep = prepare_compaction(session, CONFIG)
    assert prep.request is not None
    text = offline_summary(prep.request)
    assert "Fix the failing parser test." in section(text, "current_focus")
    assert "Here is the screenshot and a voice note:" in section(text, "current_focus")
    assert "Keep file paths verbatim." in section(text, "important_context")


def test_retention_no_longer_scores_a_summary_that_lost_the_task_100(tmp_path):
    path = openai_file(tmp_path)
    summary = tmp_path / "old.md"
    summary.write_text(OLD_SUMMARY, encoding="utf-8")
    res = run_cli("retention", str(path), "--summary", str(summary), "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)["retention"]
    requests = report["categories"]["user_requests"]
    assert [m["item"] for m in requests["missing"]] == ["Fix the failing parser test."]
    assert requests["critical"] is True
    instructions = report["categories"]["instructions"]
    assert [m["item"] for m in instructions["missing"]] == ["Keep file paths verbatim."]
    text = run_cli("retention", str(path), "--summary", str(summary))
    assert "CRITICAL: the summary loses 1 user request, 1 instruction" in text.stdout
    assert "! [user_requests] Fix the failing parser test." in text.stdout


def test_a_request_cut_with_an_ellipsis_does_not_count_on_its_prefix(tmp_path):
    """A stub that drops the request's last words is not the request (issue 31,
    finding 2): "Fix the failing parser…" no longer says which test."""
    session = load_session(openai_file(tmp_path))
    prep = prepare_compaction(session, CONFIG)

    def kept(summary: str) -> list[str]:
        report = retention_report(session, prep.plan, summary)
        return [i.text for i, _ in report.categories["user_requests"].kept]

    assert "Fix the failing parser test." in kept("Asked: fix the failing parser test.")
    assert "Fix the failing parser test." not in kept("Asked: Fix the failing parser…")
    assert "Fix the failing parser test." not in kept("Asked: Fix the…")
    assert "Fix the failing parser test." not in kept("The user wants tests fixed.")


def test_a_section_whose_lines_were_cut_says_so_not_that_there_were_none():
    """A command cut to fit the budget left its section saying "No file was written or
    named": the summary denied what it had left out (opencode's reference session)."""
    from types import SimpleNamespace

    from kimi_compact_tui.providers.offline.render import CUT_EMPTY, EMPTY, Line, write

    reading = SimpleNamespace(instructions=None, transcript=SimpleNamespace(compacted=[]))
    had = [Line("code_state", "- Ran `echo x` (message 2; no result recorded)", 4, "commands")]
    text = write(reading, [], "Cut: 1 command.", had=had)  # type: ignore[arg-type]
    assert CUT_EMPTY in text and EMPTY["code_state"] not in text
    assert EMPTY["environment"] in text  # a section that never had a line says so

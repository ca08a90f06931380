"""Status-aware retention (issue 31, finding 1): an item the summary states
wrongly is ``misstated``, beside kept and missing. An open task said to be
done or cancelled, a failed command said to pass and a rejected write said to
be written are the cases; a Chinese summary says so in Chinese. A misstated
critical item is CRITICAL, and the totals count it against the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.retention import retention_report
from kimi_compact_tui.retention.matching import Haystack, misstatement
from kimi_compact_tui.specifics import Item, kinds

TASK = Item(kinds.OPEN_TASKS, "run focused verification", "Run focused verification", [4],
            weight=8, status="pending")  # fmt: skip
LINT = Item(kinds.COMMANDS, "ruff check src", "ruff check src", [6], weight=6, status="exit 1")
WRITE = Item(kinds.EDITED_FILES, "src/x.ts", "src/x.ts", [3], weight=7, status="rejected")


@pytest.mark.parametrize(
    "summary, stated",
    [
        ("- [completed] Run focused verification", "completed"),
        ("Focused verification run: cancelled by the user.", "cancelled"),
        ("## Completed tasks\n- Run focused verification\n", "completed"),
        ("<completed_tasks>\n- Run focused verification\n</completed_tasks>", "completed"),
        ("Done: run focused verification; pending: deploy.", "completed"),
        ("- Run focused verification ✅", "completed"),
        ("已完成：Run focused verification", "completed"),
        ("Run focused verification（已取消）", "cancelled"),
    ],
)
def test_an_open_task_stated_done_or_cancelled_is_misstated(summary, stated):
    got = misstatement(TASK, Haystack(summary))
    assert got is not None, summary
    assert got.stated == stated
    assert "focused verification" in got.statement.lower()


@pytest.mark.parametrize(
    "summary",
    [
        "- [pending] Run focused verification",
        "Next step: run focused verification (not completed yet).",
        "## Open tasks\n- Run focused verification\n## Done\n- Fix the parser\n",
        "Done: fix the parser; pending: run focused verification.",
        "Run focused verification 未完成",
        "尚未完成：Run focused verification",
        "All tasks are done except running the focused verification.",
        "除了 Run focused verification 以外都已完成。",
        "Run focused verification",  # no status stated: nothing wrong said
        "The parser fix is done.",  # not about the task
    ],
)
def test_an_open_task_stated_open_or_not_stated_is_not_misstated(summary):
    assert misstatement(TASK, Haystack(summary)) is None, summary


@pytest.mark.parametrize(
    "summary, wrong",
    [
        ("Ran `ruff check src`: passed.", True),
        ("ruff check src — all checks passed, exit 0", True),
        ("ruff check src 通过", True),
        ("ruff check src: 1 error (E302), exit code 1", False),
        ("ruff check src did not pass", False),
        ("ruff check src 未通过", False),
        ("ran ruff check src", False),
    ],
)
def test_a_failed_command_stated_passed_is_misstated(summary, wrong):
    got = misstatement(LINT, Haystack(summary))
    assert (got is not None) is wrong, summary
    if wrong:
        assert got is not None and got.stated == "passed"


def test_a_passing_command_is_never_misstated_as_passing():
    ok = Item(kinds.COMMANDS, "pytest -q", "pytest -q", [4], weight=6, status="8 passed")
    assert misstatement(ok, Haystack("pytest -q: passed")) is None


@pytest.mark.parametrize(
    "summary, wrong",
    [
        ("## Edited files\n- src/x.ts\n", True),
        ("Wrote src/x.ts with the new handler.", True),
        ("已修改 src/x.ts", True),
        ("src/x.ts: the write was rejected (not written).", False),
        ("## Edited files\n- src/x.ts (rejected by the user)\n", False),
        ("src/x.ts 未写入", False),
        ("The handler belongs in src/x.ts.", False),
    ],
)
def test_a_rejected_write_stated_written_is_misstated(summary, wrong):
    got = misstatement(WRITE, Haystack(summary))
    assert (got is not None) is wrong, summary
    if wrong:
        assert got is not None and got.stated == "written"


# ----------------------------------------------------------------------------- the report


def session_with_plan(tmp_path: Path):
    """An OpenAI-style chat: a request, a plan (one done, one in progress, one
    pending), a failing lint run, and a short tail."""

    def call(cid: str, name: str, args: dict) -> dict:
        return {"id": cid, "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip

    todos = {"todos": [
        {"title": "Rework the refund aggregation", "status": "done"},
        {"title": "Run focused verification", "status": "in_progress"},
        {"title": "Ship the release notes", "status": "pending"},
    ]}  # fmt: skip
    messages = [
        {"role": "user", "content": "Rework the refund aggregation and verify it."},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "SetTodoList", todos)]},
        {"role": "tool", "content": "Todo list updated", "tool_call_id": "c1"},
        {"role": "assistant", "content": "",
         "tool_calls": [call("c2", "Bash", {"command": "ruff check src"})]},
        {"role": "tool", "content": "error: lint failed, exit code 1", "tool_call_id": "c2"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "You're welcome."},
    ]  # fmt: skip
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    session = load_session(path)
    return session, make_plan(session.messages, up_to=5)


SUMMARY_WRONG = (
    "The user asked: Rework the refund aggregation and verify it.\n"
    "## Completed\n- Rework the refund aggregation\n- Run focused verification\n"
    "## Open tasks\n- Ship the release notes\n"
    "Ran ruff check src: passed.\n"
)
SUMMARY_RIGHT = (
    "The user asked: Rework the refund aggregation and verify it.\n"
    "## Completed\n- Rework the refund aggregation\n"
    "## Open tasks\n- Run focused verification (in progress)\n- Ship the release notes\n"
    "Ran ruff check src: failed, exit code 1.\n"
)


def test_the_report_counts_misstated_items_apart_and_flags_them_critical(tmp_path):
    session, plan = session_with_plan(tmp_path)
    report = retention_report(session, plan, SUMMARY_WRONG)
    tasks = report.categories[kinds.OPEN_TASKS]
    assert [m.item.text for m in tasks.misstated] == ["Run focused verification"]
    assert [i.text for i, _ in tasks.kept] == ["Ship the release notes"]
    assert (tasks.kept_count, tasks.total) == (1, 2)
    (wrong,) = tasks.misstated
    assert wrong.stated == "completed" and wrong.status == "in_progress"
    assert "## Completed" in wrong.statement
    assert report.critical_misstated() == [wrong.item]
    line = report.critical_line()
    assert line is not None and "misstates 1 open task" in line
    commands = report.categories[kinds.COMMANDS]
    assert [(m.item.text, m.stated, m.status) for m in commands.misstated] == [
        ("ruff check src", "passed", "exit 1")
    ]
    data = report.to_json()
    cat = data["categories"]["open_tasks"]
    assert cat["misstated"] == 1 and cat["critical"] is True and cat["kept"] == 1
    (entry,) = cat["misstated_items"]
    assert entry["item"] == "Run focused verification"
    assert entry["stated"] == "completed" and entry["status"] == "in_progress"
    assert "Run focused verification" in entry["statement"]
    assert {"category": "open_tasks", "item": "Run focused verification",
            "messages": [2], "misstated": "completed"} in data["critical"]  # fmt: skip
    assert data["misstated"] == 2
    text = report.to_text()
    assert "misstated:" in text and "stated completed; the session says in_progress" in text
    assert [m.item.text for m in report.misstated_items()] == [
        "Run focused verification",
        "ruff check src",
    ]


def test_the_same_summary_stated_rightly_keeps_every_item(tmp_path):
    session, plan = session_with_plan(tmp_path)
    report = retention_report(session, plan, SUMMARY_RIGHT)
    assert report.misstated_items() == []
    assert report.categories[kinds.OPEN_TASKS].kept_count == 2
    assert report.critical_line() is None


def test_totals_reward_truth_over_exhaustiveness(tmp_path):
    """A summary that lists everything and misstates two items scores below
    one that states the same items rightly, and below one that leaves them out."""
    session, plan = session_with_plan(tmp_path)
    wrong = retention_report(session, plan, SUMMARY_WRONG)
    right = retention_report(session, plan, SUMMARY_RIGHT)
    silent = retention_report(
        session,
        plan,
        "The user asked: Rework the refund aggregation and verify it.\n"
        "## Open tasks\n- Ship the release notes\n",
    )
    assert wrong.kept < right.kept and wrong.total == right.total
    assert wrong.score() < silent.score() < right.score()
    assert wrong.to_json()["score"] == round(wrong.score(), 1)


def test_the_cli_table_and_json_show_misstated_items(tmp_path):
    from tests.factories import run_cli

    session, _ = session_with_plan(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text(SUMMARY_WRONG, encoding="utf-8")
    args = ("retention", str(session.path), "--summary", str(summary), "--up-to", "5")
    text = run_cli(*args)
    assert text.returncode == 0, text.stderr
    assert "open_tasks" in text.stdout and "(1 misstated)  ! critical" in text.stdout
    assert "CRITICAL: the summary misstates 1 open task" in text.stdout
    assert (
        "! [open_tasks] Run focused verification: stated completed; the session says in_progress"
        in text.stdout
    )
    assert "[commands] ruff check src: stated passed; the session says exit 1" in text.stdout
    data = json.loads(run_cli(*args, "--json").stdout)["retention"]
    (entry,) = data["categories"]["open_tasks"]["misstated_items"]
    assert (entry["stated"], entry["status"]) == ("completed", "in_progress")
    assert data["misstated"] == 2 and data["score"] < 100 * data["kept"] / data["total"]


@pytest.mark.parametrize("name", ["claude-code", "codex", "kimi-cli", "openai"])
def test_an_overconfident_summary_is_misstated_on_every_agent(tmp_path, name):
    """quality_bench's overconfident summary, written as each agent writes its
    session: the open plan items called done and the failing lint run called
    clean are misstated (critical for the tasks), and the score counts them."""
    from benchmarks.quality_bench import OVERCONFIDENT_SUMMARY, SESSIONS
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.job import prepare_compaction

    session = load_session(SESSIONS[name](tmp_path / name))
    prep = prepare_compaction(session, AppConfig(raw={"compaction": {"enabled": True}}))
    report = retention_report(session, prep.plan, OVERCONFIDENT_SUMMARY)
    wrong = {(m.item.category, m.item.text, m.stated) for m in report.misstated_items()}
    assert wrong == {
        ("open_tasks", "Add the month-boundary regression test", "completed"),
        ("open_tasks", "Run the linters", "completed"),
        ("commands", "ruff check src", "passed"),
    }
    line = report.critical_line()
    assert line is not None and "misstates 2 open tasks" in line
    assert report.score() < 100 * report.kept / report.total

"""opencode's ``todo`` table read as the plan (issue 32 item 7): the todos opencode
shows for a session, with their statuses, are the plan the extractor, retention
and the offline summary see, also when the ``todowrite`` calls that set them are
behind opencode's own compaction (not sent, so not in the messages). Built with
tests/factories/opencode.py (a real SQLite database)."""

from __future__ import annotations

import json
import sqlite3

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.providers.offline import offline_summary
from kimi_compact_tui.retention import retention_report
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories.opencode import OpencodeDb, step_finish, step_start, text, tool

CONFIG = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})
TODOS = (
    ("Port the CSV export to the new schema", "completed"),
    ("Keep the column order for finance", "in_progress"),
    ("Write the migration note", "pending"),
    ("Drop the legacy endpoint", "cancelled"),
)


def todowrite(call_id: str, items) -> dict:
    todos = [{"content": c, "status": s, "priority": "medium"} for c, s in items]
    state = {
        "status": "completed",
        "input": {"todos": todos},
        "output": json.dumps(todos),
        "metadata": {},
        "title": f"{len(todos)} todos",
        "time": {"start": 1, "end": 2},
    }
    return {"type": "tool", "tool": "todowrite", "callID": call_id, "state": state}


def compacted_session(tmp_path, *, table=TODOS):
    """A session whose todowrite call is behind opencode's own compaction; the
    todo table holds the list as opencode shows it."""
    db = OpencodeDb(tmp_path / "opencode.db")
    sid = db.session("Export")
    u1 = db.user(sid, "Port the CSV export to the new schema and keep the column order.")
    db.assistant(sid, u1, [step_start(), todowrite("c1", TODOS[:3]), step_finish()])
    db.compaction(sid, "Earlier: the export is being ported.", tail_start_id=None)
    u2 = db.user(sid, "Go on with the export, keep the columns as they are.")
    db.assistant(sid, u2, [step_start(), tool("c2", "pytest -q", "3 passed"), step_finish()])
    db.assistant(sid, u2, [step_start(), text("The export tests pass."), step_finish()])
    u3 = db.user(sid, "What is left?")
    db.assistant(sid, u3, [step_start(), text("The column order and the note."), step_finish()])
    u4 = db.user(sid, "thanks")
    db.assistant(sid, u4, [step_start(), text("You're welcome."), step_finish()])
    if table:
        db.todos(sid, *table)
    db.close()
    return load_session(f"{tmp_path / 'opencode.db'}#{sid}")


def plan_items(session):
    prep = prepare_compaction(session, CONFIG)
    report = retention_report(session, prep.plan, "")
    return prep, {i.text: i.status for i in report.missing_items() if i.category == "open_tasks"}


def test_the_todo_table_is_the_plan_when_its_calls_are_behind_a_compaction(tmp_path):
    session = compacted_session(tmp_path)
    prep, open_tasks = plan_items(session)
    # as opencode shows them: the table's statuses, not the older call's
    assert open_tasks == {
        "Keep the column order for finance": "in_progress",
        "Write the migration note": "pending",
    }
    summary = offline_summary(prep.request)
    assert "[in_progress] Keep the column order for finance" in summary
    assert "[pending] Write the migration note" in summary
    assert "[completed] Port the CSV export to the new schema" in summary
    assert "Drop the legacy endpoint" not in summary.split("<active_issues>")[1]


def test_without_todo_rows_there_is_no_plan(tmp_path):
    session = compacted_session(tmp_path, table=())
    _, open_tasks = plan_items(session)
    assert open_tasks == {}


def test_a_todowrite_call_in_the_messages_is_the_plan_and_the_table_adds_none(tmp_path):
    db = OpencodeDb(tmp_path / "opencode.db")
    sid = db.session("Export")
    u1 = db.user(sid, "Plan the export.")
    db.assistant(sid, u1, [step_start(), todowrite("c1", TODOS[:2]), step_finish()])
    db.assistant(sid, u1, [step_start(), text("Planned."), step_finish()])
    u2 = db.user(sid, "thanks")
    db.assistant(sid, u2, [step_start(), text("ok"), step_finish()])
    db.todos(sid, *TODOS[:2])
    db.close()
    session = load_session(f"{tmp_path / 'opencode.db'}#{sid}")
    calls = [c for m in session.messages for c in m.tool_calls]
    assert [c["function"]["name"] for c in calls] == ["todowrite"]  # no second, made one
    _, open_tasks = plan_items(session)
    assert open_tasks == {"Keep the column order for finance": "in_progress"}


def test_the_made_plan_is_never_written_and_the_write_resumes_as_planned(
    tmp_path, cli_main  # noqa: F811
):
    session = compacted_session(tmp_path)
    prep = prepare_compaction(session, CONFIG)
    made = session.format.compacted_session(session, prep.plan, "SUMMARY", None)
    assert made.format_state.refusal is None  # the kept messages are what opencode resumes
    assert not any(
        c.get("opencode") for m in made.messages for c in m.tool_calls if isinstance(c, dict)
    )
    config = tmp_path / "config.yaml"
    config.write_text("compaction:\n  enabled: true\n  type: kimi\n", encoding="utf-8")
    ref = f"{tmp_path / 'opencode.db'}#{session.ref.key}"
    done = cli_main("compact", ref, "--in-place", "--yes", "--config", str(config))
    assert done.code == 0, done.stderr
    conn = sqlite3.connect(tmp_path / "opencode.db")
    parts = [json.loads(r[0]) for r in conn.execute("SELECT data FROM part")]
    conn.close()
    assert sum(p.get("tool") == "todowrite" for p in parts) == 1  # only opencode's own call
    # read back: our summary, then the list again on the first reply after it
    after = load_session(ref)
    _, open_tasks = plan_items(after)
    assert set(open_tasks) <= {"Keep the column order for finance", "Write the migration note"}


def test_a_kept_reply_that_carries_the_made_plan_is_kept_without_it(tmp_path):
    session = compacted_session(tmp_path)
    carrier = next(i for i, m in enumerate(session.messages) if m.tool_calls)
    prep = prepare_compaction(session, CONFIG, up_to=carrier)  # that reply is kept
    assert carrier in prep.plan.preserved_indices
    made = session.format.compacted_session(session, prep.plan, "SUMMARY", None)
    assert made.format_state.refusal is None
    kept = made.messages[2]
    assert [c["function"]["name"] for c in kept.tool_calls] == ["bash"]

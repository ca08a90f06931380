"""Verdict errors the realistic sessions of the quality benchmark show (issue 31),
in code outside this branch's area (specifics/, retention/): each test says what
should hold and is marked xfail(strict=True), so it fails loudly once fixed."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from benchmarks.quality_bench import CONFIG
from benchmarks.realistic import DEBUG_LOSSY, REALISTIC, REFACTOR_LOSSY
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.retention import retention_report
from kimi_compact_tui.retention.anchor import anchor


def loaded(name):
    _, make, _ = REALISTIC[name]
    with tempfile.TemporaryDirectory() as tmp:
        session = load_session(make(Path(tmp) / name))
    return session, prepare_compaction(session, CONFIG).plan


@pytest.mark.xfail(strict=True, reason="anchor() adds missing items only, not misstated ones")
def test_anchor_restates_a_misstated_open_task():
    session, plan = loaded("refactor")
    anchored = anchor(retention_report(session, plan, REFACTOR_LOSSY), REFACTOR_LOSSY)
    report = retention_report(session, plan, anchored.text)
    assert report.critical_line() is None
    assert "Extract defaults and validation" in anchored.block


@pytest.mark.xfail(strict=True, reason="a mention needs the task's exact words ('Run', not 'Ran')")
def test_an_open_task_reworded_as_done_is_misstated():
    session, plan = loaded("debug")
    report = retention_report(session, plan, DEBUG_LOSSY)
    # "- Ran the full test suite and the type checker: all green, mypy passed."
    # under <completed_tasks>; the plan says in_progress
    wrong = {m.item.text: m.stated for m in report.misstated_items()}
    assert wrong.get("Run the full test suite and the type checker") == "completed"


@pytest.mark.xfail(strict=True, reason="no file item carries a rejected write's status")
def test_a_rejected_edit_stated_as_edited_is_misstated():
    session, plan = loaded("debug")
    report = retention_report(session, plan, DEBUG_LOSSY)
    # "- Edited src/webhooks/retry.py and ...": its only edit was rejected
    # (is_error, "the new_string was NOT written to the file")
    wrong = {m.item.text: m.stated for m in report.misstated_items()}
    assert wrong.get("src/webhooks/retry.py") == "written"


@pytest.mark.xfail(strict=True, reason="kimi-cli's failure mark is read as an error of its own")
def test_a_kimi_cli_failed_command_is_its_status_not_an_error():
    session, plan = loaded("chinese")
    report = retention_report(session, plan, "")
    errors = [i.text for i in report.missing_items() if i.category == "errors"]
    # the failing test is the error; "ERROR: Command failed with exit code: 1." is the
    # command's status, and "ERROR: The user rejected this tool call." a refused write
    assert not [e for e in errors if e.startswith("ERROR:")], errors


@pytest.mark.xfail(strict=True, reason="Go's ./... is read as an ellipsis that ends a sentence")
def test_a_rule_naming_go_packages_is_one_instruction():
    session, plan = loaded("refactor")
    report = retention_report(session, plan, "")
    rules = [i.text for i in report.missing_items() if i.category == "instructions"]
    assert any("go vet ./... before you tell me something is done" in r for r in rules), rules


@pytest.mark.xfail(strict=True, reason="Gemini CLI's compression summary is read as a request")
def test_gemini_cli_compression_summary_is_no_request():
    from benchmarks.quality_bench import REFERENCE

    path = REFERENCE / "agents" / "gemini-session-after-compress.jsonl"
    if not path.exists():
        pytest.skip(f"reference file {path} is not here")
    session = load_session(path)
    plan = prepare_compaction(session, CONFIG).plan
    report = retention_report(session, plan, "")
    # its first user message is the summary Gemini CLI wrote for its own compression
    requests = [i.text for i in report.missing_items() if i.category == "user_requests"]
    assert not [r for r in requests if r.startswith("FAKE-SUMMARY")], requests

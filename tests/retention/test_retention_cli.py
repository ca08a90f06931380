"""`retention` through the real console entry point, and the engine's threshold API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.retention import (
    CATEGORIES,
    check_min_retention,
    parse_min_retention,
    retention_report,
)
from tests.factories import run_cli

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "retention_fixtures"
KIMI_SAMPLE = REPO / "sample_sessions" / "kimi-debugging-session"
OPENAI_SAMPLE = REPO / "sample_sessions" / "openai-retry-refactor.json"


def test_json_report_through_the_cli():
    summary = FIXTURES / "kimi-debugging.summary.md"
    result = run_cli("retention", str(KIMI_SAMPLE), "--summary", str(summary), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)["retention"]
    assert list(data["categories"]) == list(CATEGORIES)
    commands = data["categories"]["commands"]
    assert (commands["kept"], commands["total"]) == (1, 3)
    assert commands["missing"] == [
        {"item": "pytest -q tests/test_parse.py", "messages": [14], "status": "exit 1"},
        {"item": "pytest -q", "messages": [18], "status": "42 passed"},
    ]
    assert data["categories"]["urls"] == {
        "kept": 0, "total": 0, "percent": None, "critical": False, "kept_in_summary": 0,
        "kept_in_tail": 0, "misstated": 0, "missing": [], "misstated_items": [],
        "kept_items": [],
    }  # fmt: skip
    assert data["compacted_messages"] == [1, 22]


def test_text_report_and_up_to_moves_the_range():
    summary = FIXTURES / "openai-retry.summary.md"
    result = run_cli("retention", str(OPENAI_SAMPLE), "--summary", str(summary), "--up-to", "10")
    assert result.returncode == 0, result.stderr
    assert "retention of messages 3..10" in result.stdout
    # with no tail, the test file named in message 10 must be in the summary to count
    assert "[file_paths] src/http/retry.test.ts  (message 10)" in result.stdout
    assert "[file_paths] src/http/retry.ts  (message 4)" in result.stdout


def test_summary_from_stdin_and_min_retention_exit_status():
    result = run_cli(
        "retention", str(OPENAI_SAMPLE), "--summary", "-",
        "--min-retention", "identifiers=100", "--min-retention", "file_paths=50",
        stdin="withRetry and isRetryable changed",
    )  # fmt: skip
    assert result.returncode == 4
    assert result.stderr.strip().splitlines() == [
        "retention below minimum: file_paths: 0.0% kept (0/1), below the minimum 50%"
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--summary", "/no/such/summary.md"], "/no/such/summary.md: summary file not found"),
        (["--summary", "-", "--min-retention", "paths=5"], "unknown category 'paths' (valid: "),
        (["--summary", "-", "--min-retention", "urls"], "expected CATEGORY=PERCENT"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, message):
    result = run_cli("retention", str(OPENAI_SAMPLE), *args, stdin="")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_parse_min_retention():
    assert parse_min_retention("file_paths=50") == ("file_paths", 50.0)
    assert parse_min_retention(" open-tasks = 12.5% ") == ("open_tasks", 12.5)
    for bad in ("file_paths", "file_paths=", "file_paths=abc", "file_paths=101", "=5"):
        with pytest.raises(UserError) as info:
            parse_min_retention(bad)
        assert "\n" not in str(info.value)
    with pytest.raises(UserError, match="valid: user_requests, instructions, open_tasks, "):
        parse_min_retention("paths=10")


def test_check_min_retention_skips_empty_categories():
    session = load_session(OPENAI_SAMPLE)
    plan = make_plan(session.messages)
    report = retention_report(session, plan, "withRetry changed")  # identifiers 1/2
    assert check_min_retention(report, {"identifiers": 50}) == []
    assert check_min_retention(report, [("identifiers", 50.1)]) == [
        "identifiers: 50.0% kept (1/2), below the minimum 50.1%"
    ]
    assert check_min_retention(report, {"urls": 100}) == []  # 0/0 never falls short


def test_work_dir_option_and_noop_plan(tmp_path):
    session = tmp_path / "s.jsonl"
    lines = [
        {"role": "user", "content": "Fix /repo/app/src/main.py please"},
        {"role": "assistant", "content": "Done in src/main.py."},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "ok"},
    ]
    session.write_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    summary = tmp_path / "summary.md"
    summary.write_text("Fixed app/src/main.py", encoding="utf-8")
    # inferred root: /repo/app/ (the absolute path ends in src/main.py, seen relative)
    result = run_cli("retention", str(session), "--summary", str(summary), "--json")
    paths = json.loads(result.stdout)["retention"]["categories"]["file_paths"]
    assert [k["item"] for k in paths["kept_items"]] == ["src/main.py"]
    result = run_cli(
        "retention", str(session), "--summary", str(summary), "--json", "--work-dir", "/repo"
    )
    paths = json.loads(result.stdout)["retention"]["categories"]["file_paths"]
    # two files now; "src/main.py" is a suffix of the path the summary names, so it is kept
    assert [k["item"] for k in paths["kept_items"]] == ["app/src/main.py", "src/main.py"]
    result = run_cli("retention", str(session), "--summary", str(summary), "--up-to", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("retention of messages 1..1")

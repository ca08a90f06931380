"""Anchors by importance (issue 31, items 10 and 11): each test failed on the
anchor block before this round.

The session is a Claude Code transcript written as the agent writes it; the
lossy summary is a model's (served by the loopback server) or given as a file.
"""

from __future__ import annotations

import json

import pytest

from kimi_compact_tui.compaction.tokens import estimate_tokens
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.retention import EDITOR_BLOCK_END, EDITOR_BLOCK_START, retention_report
from kimi_compact_tui.retention.anchor import anchor
from tests.factories import claude_code as cc
from tests.factories.claude_code import planned_session
from tests.loopback_server import openai_sse

LOSSY = "<current_focus>\nWorking on the importer.\n</current_focus>\n"
REQUEST = (
    "Fix the importer so bad rows are reported. Always keep the output format unchanged. "
    "The runbook is https://wiki.example.com/runbooks/import and the timeout is 90 s."
)


def busy_session(tmp_path):
    """25 exploratory reads first, then the work, then the final checks."""
    t = cc.Transcript()
    t.user(REQUEST)
    for n in range(25):
        t.assistant([cc.tool_use(f"toolu_r{n}", "Bash", {"command": f"rg -n pattern_{n} src"})])
        t.result(f"toolu_r{n}", f"src/a.py:{n}: pattern_{n}")
    t.assistant(
        [
            cc.tool_use(
                "toolu_w",
                "Write",
                {
                    "file_path": "/work/project/src/report.py",
                    "content": "def report_bad_rows(rows):\n    pass\n",
                },
            )
        ]
    )
    t.result("toolu_w", "File created successfully at: /work/project/src/report.py")
    t.assistant([cc.tool_use("toolu_d", "Bash", {"command": "git diff --stat src/report.py"})])
    t.result("toolu_d", " src/report.py | 2 ++")
    t.assistant([cc.text("Done: bad rows are reported by report_bad_rows.")])
    path = t.write(tmp_path)
    session = load_session(path)
    prep = prepare_compaction(session, AppConfig(), up_to=len(session.messages))
    return session, prep


def block_lines(text: str) -> list[str]:
    return text[text.index(EDITOR_BLOCK_START) : text.index(EDITOR_BLOCK_END)].splitlines()[1:]


def test_the_block_fills_by_importance_not_message_order(tmp_path):
    session, prep = busy_session(tmp_path)
    report = retention_report(session, prep.plan, LOSSY)
    lines = block_lines(anchor(report, LOSSY, 150).text)
    assert any(x.startswith("- user requests: Fix the importer") for x in lines)
    assert any("git diff --stat src/report.py" in x for x in lines)  # the final check
    assert any(x.startswith("- edited files: src/report.py") for x in lines)
    assert not any("rg -n pattern_0 src" in x for x in lines)  # the first read is the last pick


def test_no_item_twice_a_rule_inside_a_request_is_the_requests(tmp_path):
    session, prep = busy_session(tmp_path)
    report = retention_report(session, prep.plan, LOSSY)
    lines = block_lines(anchor(report, LOSSY, 800).text)
    assert sum("Always keep the output format unchanged" in x for x in lines) == 1
    assert len(lines) == len(set(lines))


def test_identifiers_numbers_and_urls_the_summary_lost_are_anchored(tmp_path):
    session, prep = busy_session(tmp_path)
    summary = LOSSY + "<important_context>\n" + REQUEST + "\n</important_context>\n"
    report = retention_report(session, prep.plan, summary)
    lines = block_lines(anchor(report, summary, 800).text)
    assert any(x.startswith("- identifiers: report_bad_rows (message") for x in lines), lines


@pytest.mark.parametrize("budget", [50, 80, 150])
def test_the_budget_is_a_hard_limit(tmp_path, budget):
    session, prep = busy_session(tmp_path)
    report = retention_report(session, prep.plan, LOSSY)
    anchored = anchor(report, LOSSY, budget)
    assert estimate_tokens(anchored.block) <= budget
    assert anchored.left_out and "did not fit" in (anchored.note() or "")


@pytest.mark.parametrize("budget", [0, -5])
def test_a_budget_of_zero_or_less_is_refused(tmp_path, budget):
    session, prep = busy_session(tmp_path)
    report = retention_report(session, prep.plan, LOSSY)
    with pytest.raises(UserError, match="anchor-budget"):
        anchor(report, LOSSY, budget)


def test_the_cli_refuses_a_budget_of_zero_in_one_line_before_any_request(cli_main, tmp_path):
    path = planned_session().write(tmp_path)
    before = path.read_bytes()
    result = cli_main("compact", path, "--anchor", "--anchor-budget", "0", "--provider", "offline")
    assert result.code == 2
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "--anchor-budget 0" in lines[0]
    assert "compacting" not in result.stderr and path.read_bytes() == before


def test_re_anchoring_replaces_the_block(tmp_path):
    session, prep = busy_session(tmp_path)
    first = anchor(retention_report(session, prep.plan, LOSSY), LOSSY, 400).text
    again = anchor(retention_report(session, prep.plan, first), first, 400).text
    assert again.count(EDITOR_BLOCK_START) == 1 and again.count(EDITOR_BLOCK_END) == 1


def test_compact_anchor_json_carries_the_summary_as_written(cli_main, loopback, tmp_path):
    path = planned_session().write(tmp_path)
    loopback.script([openai_sse([LOSSY.replace("importer", "history command")])])
    remote = ["--provider", "openai", "--base-url", loopback.base_url, "--model", "m"]
    result = cli_main("compact", path, "--anchor", "--json", *remote)
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert EDITOR_BLOCK_START in data["summary"] and EDITOR_BLOCK_END in data["summary"]

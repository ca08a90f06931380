"""The quality benchmark's long realistic sessions (issue 31, "Done when"): what
docs/BENCHMARKS.md's "Summary quality" tables claim for the critical categories
holds on the current code, so the table cannot silently rot.

The offline summary is never CRITICAL and keeps every request, instruction,
open task and edited file; each lossy model summary is CRITICAL (it loses
requests, and each misstates an open task as done); ``--anchor`` puts back every
request, instruction and file it lost and restates what it misstated."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.quality_bench import KINDS, REFERENCE_LOSSY, bench_realistic, bench_reference
from benchmarks.realistic import REALISTIC

CRITICAL = ("user_requests", "instructions", "open_tasks")


@pytest.fixture(scope="module")
def results():
    return bench_realistic()


def cats(results, session, kind):
    return results[session][kind]["categories"]


SESSIONS = [f"{name} ({agent})" for name, (agent, _, _) in REALISTIC.items()]


def test_the_sessions_are_long_and_of_three_agents(results):
    assert len(SESSIONS) == 3
    assert {agent for agent, _, _ in REALISTIC.values()} == {"claude-code", "codex", "kimi-cli"}
    for name in SESSIONS:
        assert results[name]["compacted"] >= 30, name
        for kind in KINDS:  # every category the table shows is scored
            for kept, wrong, missing in cats(results, name, kind).values():
                assert min(kept, wrong, missing) >= 0


@pytest.mark.parametrize("name", SESSIONS)
def test_the_offline_summary_is_not_critical_and_keeps_the_critical_items(results, name):
    offline = results[name]["offline"]
    assert offline["critical"] is None
    assert offline["misstated"] == []
    for category in (*CRITICAL, "edited_files"):
        kept, wrong, missing = offline["categories"][category]
        assert kept > 0 and wrong == 0 and missing == 0, (name, category)


@pytest.mark.parametrize("name", SESSIONS)
def test_the_lossy_summary_is_critical_and_loses_the_requests(results, name):
    lossy = results[name]["lossy"]
    assert lossy["critical"] and lossy["critical"].startswith("CRITICAL: the summary loses")
    kept, _, missing = lossy["categories"]["user_requests"]
    assert kept == 0 and missing >= 4
    kept, _, missing = lossy["categories"]["instructions"]
    assert kept == 0 and missing >= 1  # the refactor's two rules are one sentence
    assert lossy["categories"]["edited_files"][2] >= 1  # it forgets a file


@pytest.mark.parametrize(
    ("name", "task"),
    [
        ("debug (claude-code)", "Run the full test suite and the type checker"),
        ("refactor (codex)", "Extract defaults and validation"),
        ("chinese (kimi-cli)", "确认 CSV 列顺序不变"),
    ],
)
def test_the_lossy_summary_misstates_the_open_task_as_done(results, name, task):
    lossy = results[name]["lossy"]
    assert lossy["categories"]["open_tasks"][1] == 1
    assert "misstates 1 open task" in lossy["critical"]
    tasks = [m for m in lossy["misstated"] if m.startswith("[open_tasks]")]
    assert tasks == [f"[open_tasks] {task}: stated completed; the session says in_progress"]


def test_the_debug_summary_misstates_the_rejected_edit_as_written(results):
    lossy = results["debug (claude-code)"]["lossy"]
    assert lossy["categories"]["file_paths"][1] == 1
    assert (
        "[file_paths] src/webhooks/retry.py: stated written; the session says rejected"
        in lossy["misstated"]
    )


@pytest.mark.parametrize("name", SESSIONS)
def test_anchor_puts_back_what_the_lossy_summary_lost(results, name):
    anchored = results[name]["lossy+anchor"]
    for category in ("user_requests", "instructions", "edited_files", "commands", "urls"):
        kept, wrong, missing = anchored["categories"][category]
        assert wrong == 0 and missing == 0, (name, category)
    # what the lossy summary misstates, the block restates with what the session says
    assert results[name]["lossy"]["misstated"]
    for category in ("open_tasks", "file_paths"):
        kept, wrong, missing = anchored["categories"][category]
        assert wrong == 0 and missing == 0, (name, category)
    assert anchored["misstated"] == []
    assert anchored["critical"] is None
    assert 0 < results[name]["anchor"]["tokens"] <= 800


def test_reference_sessions_are_scored_when_present():
    results = bench_reference()
    if not results:
        pytest.skip("../shared/reference/agents/ is not here")
    assert set(results) <= set(REFERENCE_LOSSY)
    for name, result in results.items():
        assert result["offline"]["critical"] is None, name
        kept, wrong, missing = result["offline"]["categories"]["user_requests"]
        if name == "gemini-cli (reference)":
            # its only user message in the range is Gemini CLI's own compression
            # summary: an earlier summary, never a request
            assert [kept, wrong, missing] == [0, 0, 0], name
            continue
        assert kept >= 1 and wrong == 0 and missing == 0, name
        for category in CRITICAL:
            assert result["lossy+anchor"]["categories"][category][2] == 0, name


def test_the_documented_table_holds_for_the_critical_categories(results):
    """docs/BENCHMARKS.md's rows for the realistic sessions: their critical
    categories and CRITICAL column are what the benchmark gives today."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "BENCHMARKS.md").read_text("utf-8")
    head = "| debug (claude-code) | offline |"
    rows = {}
    for line in doc[doc.index(head) :].split("\n"):
        if not line.startswith("| "):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[(cells[0], cells[1].replace(" ", ""))] = cells
    for name in SESSIONS:
        for kind in KINDS:
            cells = rows[(name, kind)]
            got = results[name][kind]
            for column, category in zip((2, 3, 4), CRITICAL, strict=True):
                assert cells[column] == "/".join(map(str, got["categories"][category])), (
                    name,
                    kind,
                    category,
                )
            assert (cells[-1] == "**CRITICAL**") == bool(got["critical"]), (name, kind)

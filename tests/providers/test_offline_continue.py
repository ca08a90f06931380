"""An offline summary an agent can continue from (issue 31, items 7 and 8).

Each session is a Claude Code transcript written as the agent writes it, and
the summary is the offline provider's for its whole range; each test failed
on the summary before this round.
"""

from __future__ import annotations

from pathlib import Path

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.providers.offline import offline_summary
from kimi_compact_tui.retention import retention_report
from tests.factories import claude_code as cc

LONG_REQUEST = (
    "Please rework the importer in three steps. Step 1: read every CSV under fixtures/ "
    "and keep the rows whose amount parses, reporting the others with their line numbers "
    "instead of stopping at the first bad row, because the nightly job must finish. "
    + "Keep the current column names and the output format exactly as they are today. " * 6
    + "Step 2: add a test per bad-row shape (empty, currency sign, European separators). "
    "Step 3: raise the timeout from 30s to 90s in config/job.yaml and link the runbook at "
    "https://wiki.example.com/runbooks/nightly-import in the README."
)


# a test run's log as pytest prints it: what makes a real range long
LOG = "".join(f"tests/test_importer.py::test_case_{n} PASSED [{n}%]\n" for n in range(60))


def section(text: str, name: str) -> str:
    return text[text.index(f"<{name}>") : text.index(f"</{name}>")]


def summary_of(t: cc.Transcript, folder: Path) -> tuple[object, object, str]:
    session = load_session(t.write(folder))
    prep = prepare_compaction(session, AppConfig(), up_to=len(session.messages))
    assert prep.request is not None
    return session, prep, offline_summary(prep.request)


def work_session(reads: int = 0) -> cc.Transcript:
    t = cc.Transcript()
    t.user(LONG_REQUEST)
    for n in range(reads):
        t.assistant(
            [cc.tool_use(f"toolu_r{n}", "Bash", {"command": f"sed -n '{n},+40p' src/importer.py"})]
        )
        t.result(f"toolu_r{n}", f"line {n}\n" + LOG)
    t.assistant(
        [
            cc.text("I propose a lock file approach. The lock file approach would work because:"),
            cc.text(
                "We could use a lock file under /tmp, and I decided to use flock because it is atomic."
            ),
        ]
    )
    t.user("No, don't use a lock file; keep a state row in the database instead.")
    t.assistant(
        [
            cc.text(
                "I'll use a state row in the jobs table instead of a lock file because it survives restarts."
            )
        ]
    )
    t.user("Yes, go ahead.")
    t.assistant(
        [
            cc.tool_use(
                "toolu_t1",
                "TodoWrite",
                {
                    "todos": [
                        {
                            "content": "Report bad rows",
                            "status": "completed",
                            "activeForm": "Reporting",
                        },
                        {
                            "content": "Add bad-row tests",
                            "status": "in_progress",
                            "activeForm": "Adding",
                        },
                        {
                            "content": "Raise the timeout",
                            "status": "pending",
                            "activeForm": "Raising",
                        },
                    ]
                },
            )
        ]
    )
    t.result("toolu_t1", "Todos have been modified successfully.")
    t.assistant(
        [
            cc.tool_use(
                "toolu_e1",
                "Edit",
                {
                    "file_path": "/work/project/src/importer.py",
                    "old_string": "a",
                    "new_string": "b",
                },
            )
        ]
    )
    t.result("toolu_e1", "The file /work/project/src/importer.py has been updated.")
    t.assistant([cc.tool_use("toolu_p1", "Bash", {"command": "pytest -q tests/test_importer.py"})])
    t.result(
        "toolu_p1",
        LOG + "E   KeyError: 'amount'\nFAILED tests/test_importer.py::test_bad_rows - KeyError\n"
        "Exit code 1",
        is_error=True,
    )
    t.assistant(
        [cc.text("The test fails: the fixture has no amount column; the reader must default it.")]
    )
    return t


def test_every_request_is_whole_when_the_budget_allows(tmp_path):
    _, _, text = summary_of(work_session(), tmp_path)
    assert " ".join(LONG_REQUEST.split()) in text  # step 3, the 30s → 90s and the URL too


def test_the_current_work_and_the_next_step(tmp_path):
    _, _, text = summary_of(work_session(), tmp_path)
    focus = section(text, "current_focus")
    assert "- Current work:" in focus and "in progress: Add bad-row tests" in focus
    assert "- Next step: Add bad-row tests (in progress), then Raise the timeout" in focus


def test_what_the_assistant_concluded_and_only_the_design_the_user_accepted(tmp_path):
    _, _, text = summary_of(work_session(), tmp_path)
    context = section(text, "important_context")
    assert "the reader must default it" in context  # its last findings
    assert "Design the user accepted" in context and "state row in the jobs table" in context
    assert "flock" not in text  # the approach the user rejected
    assert "would work because:" not in text  # a fragment is no decision


def test_one_failed_command_is_one_line_with_its_errors(tmp_path):
    _, _, text = summary_of(work_session(), tmp_path)
    issues = section(text, "active_issues").split("\n")
    mention = [ln for ln in issues if "KeyError" in ln or "pytest" in ln or "exit" in ln]
    assert len(mention) == 1
    assert "`pytest -q tests/test_importer.py`: exit 1: KeyError: 'amount'" in mention[0]


def test_exploratory_reads_are_a_count_not_tasks(tmp_path):
    _, _, text = summary_of(work_session(reads=29), tmp_path)
    done = section(text, "completed_tasks")
    assert "sed -n" not in done.replace("(sed)", "")
    assert "29 exploratory reads (sed)" in done


def test_an_error_with_its_fix(tmp_path):
    t = work_session()
    t.assistant([cc.tool_use("toolu_p2", "Bash", {"command": "pytest -q tests/test_importer.py"})])
    t.result("toolu_p2", "3 passed in 0.2s")
    _, _, text = summary_of(t, tmp_path)
    line = next(ln for ln in section(text, "active_issues").split("\n") if "KeyError" in ln)
    assert line.startswith("- Resolved later: KeyError: 'amount'")
    assert "fixed by `pytest -q tests/test_importer.py` then succeeded (message 13)" in line


def test_nothing_is_dropped_silently_under_a_list_cap(tmp_path):
    t = cc.Transcript()
    names = [f"src/module_{n:02d}.py" for n in range(45)]
    t.user(
        "Look at these files: "
        + ", ".join(names)
        + ". "
        + "Then tell me which import the others. " * 40
    )
    t.assistant([cc.text("Reading them.")])
    _, _, text = summary_of(t, tmp_path)
    named = section(text, "code_state")
    listed = [n for n in names if f"- {n} (message 1)" in named]
    cut = "file paths" in section(text, "important_context").split("Cut:")[-1]
    assert len(listed) == len(names) or cut  # every path, or the Cut: line counts them


def test_the_offline_summary_of_a_generated_range_is_not_critical():
    """The tool's own summary passes its own retention on a generated realistic
    session of 4,000 messages (its requests alone are over the old 16,000-token
    cap; the benchmark's 10,000-message range is in docs/BENCHMARKS.md)."""
    import json

    from benchmarks.generate import generate_messages
    from kimi_compact_tui.formats.openai import OpenAIJsonlFormat

    lines = "\n".join(json.dumps(m) for m in generate_messages(4_000)) + "\n"
    session = OpenAIJsonlFormat().parse(lines.encode(), Path("/generated.jsonl"))
    prep = prepare_compaction(session, AppConfig())
    assert prep.request is not None
    report = retention_report(session, prep.plan, offline_summary(prep.request))
    assert report.to_json()["critical"] == []

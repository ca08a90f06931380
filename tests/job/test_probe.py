"""Probe what the agent will still know: the questions, the
requests (one per question, with only what the agent keeps, secrets masked),
the grading and the command.

Requests go to a real HTTP server on 127.0.0.1 that records them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.commands.jsonout import JSON_SCHEMA
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.job.prepare import specifics_of
from kimi_compact_tui.job.probe import PROBE_PROMPT, ProbePlan, plan_probe
from kimi_compact_tui.job.probe.grade import (
    CORRECT,
    PARTIAL,
    WRONG,
    command_found,
    grade,
    path_found,
    text_share,
)
from kimi_compact_tui.job.probe.questions import (
    COMMAND,
    PATH,
    TEXT,
    Question,
    quotes,
)
from kimi_compact_tui.secrets import MASK, mask_secrets
from tests.core_helpers import SAMPLES
from tests.factories import write_openai_json
from tests.loopback_server import LoopbackServer, openai_sse

EDITED = "src/plugins/codemie-code.plugin.ts"
COMMAND_LINE = "npm test -- --grep threshold"
TAIL_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
SUMMARY_SECRET = "api_key=supersecretvalue42"


def call(cid: str, name: str, **args) -> dict:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


MESSAGES = [
    {"role": "system", "content": "You are a coding agent working in /repo."},
    {"role": "user", "content": "Add a compaction threshold setting to the plugin config loader."},
    {
        "role": "assistant",
        "content": "Writing the setting.",
        "tool_calls": [call("c1", "WriteFile", path=EDITED, content="export const T = 0.75;\n")],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "Wrote 1 line (UNIQUE-WRITE-RESULT)."},
    {
        "role": "assistant",
        "content": "Running the tests.",
        "tool_calls": [call("c2", "Shell", command=COMMAND_LINE)],
    },
    {
        "role": "tool",
        "tool_call_id": "c2",
        "content": "FAIL tests/threshold.spec.ts\nAssertionError: expected 0.8 to equal 0.75\n"
        "exit code 1",
    },
    {
        "role": "assistant",
        "content": "I decided to keep 0.75 as the default because the design note says so.",
    },
    {"role": "user", "content": "Fine, please fix the failing threshold spec next."},
    {"role": "assistant", "content": "Fixed the spec (UNIQUE-FIX-REPLY); all green."},
    {"role": "user", "content": f"Now write the changelog entry. The deploy token is {TAIL_TOKEN}"},
    {"role": "assistant", "content": "Done: CHANGELOG.md updated."},
]
COMPACTED_ONLY = ("UNIQUE-WRITE-RESULT", "UNIQUE-FIX-REPLY", "expected 0.8 to equal 0.75")
SUMMARY = (
    "<current_focus>\nThe changelog.\n</current_focus>\n"
    f"SUMMARY-MARKER. Staging uses {SUMMARY_SECRET}.\n"
)


def config_file(tmp_path: Path, server: LoopbackServer) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        "compaction: {enabled: true, type: kimi}\n"
        f"provider: {{kind: openai, base_url: '{server.base_url}', model: m, api_key_env: ''}}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return write_openai_json(tmp_path / "chat.json", MESSAGES)


@pytest.fixture
def summary(tmp_path: Path) -> Path:
    path = tmp_path / "summary.md"
    path.write_text(SUMMARY, encoding="utf-8")
    return path


def probe_of(path: Path, summary: str = SUMMARY, limit: int = 10) -> ProbePlan:
    job = CompactionJob.load(path, AppConfig(raw={"compaction": {"enabled": True}}))
    prep = job.prepare()
    specifics = specifics_of(job.session, prep.plan)()
    return plan_probe(job.session, prep.plan, summary, specifics, {}, model="m", limit=limit)


# ----------------------------------------------------------------------------- questions


def test_questions_come_from_the_compacted_range_by_category(session):
    probe = probe_of(session)
    by_category = {q.category: q for q in probe.questions}
    assert set(by_category) >= {"user_requests", "edited_files", "commands", "errors", "decisions"}
    assert by_category["edited_files"].expected == (EDITED,)
    assert by_category["edited_files"].kind == PATH
    assert by_category["commands"].expected == (COMMAND_LINE,)
    assert by_category["commands"].kind == COMMAND
    assert "compaction threshold" in by_category["edited_files"].text  # its context
    assert by_category["errors"].kind == TEXT
    # A bare exit status is not worth a question; the error line is.
    assert by_category["errors"].expected == ("AssertionError: expected 0.8 to equal 0.75",)
    # Message numbers point into the compacted range.
    assert by_category["edited_files"].messages == (2,)
    for q in probe.questions:
        for expected in q.expected:
            assert not quotes(q.text, expected), q
        assert all(1 <= m <= 8 for m in q.messages)


def test_questions_are_deterministic_and_limited(session):
    first, again = probe_of(session), probe_of(session)
    assert first.questions == again.questions and first.bodies == again.bodies
    two = probe_of(session, limit=2)
    assert two.questions == [
        Question(1, *a[1:]) if i == 0 else Question(2, *a[1:])
        for i, a in enumerate(
            (q.number, q.category, q.text, q.expected, q.kind, q.messages)
            for q in first.questions[:2]
        )
    ]
    # The categories take turns: the first two are of two categories.
    assert two.questions[0].category != two.questions[1].category


def test_no_question_about_what_the_kept_messages_hold(tmp_path):
    messages = [dict(m) for m in MESSAGES]
    messages[-1] = {"role": "assistant", "content": f"Done; {EDITED} and {COMMAND_LINE} noted."}
    path = write_openai_json(tmp_path / "kept.json", messages)
    categories = {q.category for q in probe_of(path).questions}
    assert "edited_files" not in categories and "commands" not in categories
    assert "edited_files" in {q.category for q in probe_of(write_openai_json(
        tmp_path / "plain.json", MESSAGES)).questions}  # fmt: skip


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.iterdir()))
def test_no_question_quotes_its_answer_on_the_samples(sample):
    probe = probe_of(SAMPLES / sample, limit=100)
    for q in probe.questions:
        for expected in q.expected:
            assert not quotes(q.text, expected), (q.text, expected)


# ----------------------------------------------------------------------------- the requests


def test_each_request_has_the_summary_and_the_tail_and_no_compacted_message(
    cli_main, tmp_path, loopback, session, summary
):
    probe = probe_of(session)
    n = len(probe.questions)
    assert n >= 5
    loopback.script([openai_sse(["I do not know."]) for _ in range(n)])
    result = cli_main(
        "probe", session, "--summary", summary, "--config", config_file(tmp_path, loopback)
    )
    assert result.code == 0, result.stderr
    assert len(loopback.requests) == n  # one request per question
    assert f"probe: sending {n} requests (one per question), ~" in result.stderr
    for request, question in zip(loopback.requests, probe.questions, strict=True):
        body = request.json
        assert "tools" not in body and "tool_choice" not in body
        sent = body["messages"]
        assert [m["role"] for m in sent] == ["system", "user", "user", "assistant", "user"]
        assert sent[0]["content"] == MESSAGES[0]["content"]
        assert "SUMMARY-MARKER" in sent[1]["content"]
        assert sent[1]["content"].startswith("<system>Previous context has been compacted")
        assert sent[3]["content"] == MESSAGES[10]["content"]
        assert sent[4]["content"] == f"{PROBE_PROMPT}\n\n{question.text}"
        raw = request.body.decode("utf-8")
        for text in COMPACTED_ONLY:
            assert text not in raw
        # Secrets are masked, in the tail and in the summary.
        assert TAIL_TOKEN not in raw and "supersecretvalue42" not in raw
        assert MASK in sent[2]["content"] and MASK in sent[1]["content"]


def test_grading_end_to_end_per_question_and_category(
    cli_main, tmp_path, loopback, session, summary
):
    probe = probe_of(session)
    answers = []
    for q in probe.questions:
        if q.category in ("edited_files", "commands"):
            answers.append(f"It was `{q.expected[0]}`.")  # right
        else:
            answers.append("I do not know.")  # wrong
    loopback.script([openai_sse([a]) for a in answers])
    config = config_file(tmp_path, loopback)
    result = cli_main("probe", session, "--summary", summary, "--config", config, "--json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["schema"] == JSON_SCHEMA
    assert data["requests"] == len(probe.questions) and data["estimated_tokens"] > 0
    assert [q["answer"] for q in data["questions"]] == answers
    verdicts = {q["category"]: q["verdict"] for q in data["questions"]}
    assert verdicts["edited_files"] == CORRECT and verdicts["commands"] == CORRECT
    assert verdicts["errors"] == WRONG and verdicts["user_requests"] == WRONG
    right = sum(1 for a in answers if a != "I do not know.")
    total = len(answers)
    assert data["score"] == {
        "correct": right,
        "partial": 0,
        "total": total,
        "percent": round(100 * right / total, 1),
    }
    assert data["categories"]["edited_files"] == {
        "correct": 1,
        "partial": 0,
        "total": 1,
        "percent": 100.0,
    }
    first = data["questions"][0]
    assert set(first) >= {"question", "expected", "answer", "verdict", "category", "messages"}


def test_text_output_lists_each_question_and_the_score(
    cli_main, tmp_path, loopback, session, summary
):
    probe = probe_of(session, limit=2)
    loopback.script([openai_sse([q.expected[0]]) for q in probe.questions])
    config = config_file(tmp_path, loopback)
    result = cli_main(
        "probe", session, "--summary", summary, "--config", config, "--questions", "2"
    )
    assert result.code == 0, result.stderr
    assert len(loopback.requests) == 2
    assert "Q1 [" in result.stdout and "Q2 [" in result.stdout and "Q3 [" not in result.stdout
    assert "verdict:  correct" in result.stdout
    assert "score          2/2 correct (100%)" in result.stdout


def test_the_offline_provider_cannot_answer(cli_main, tmp_path, session, summary):
    result = cli_main("probe", session, "--summary", summary, "--provider", "offline")
    assert result.code == 2
    assert result.stderr.count("\n") == 1 and "offline provider cannot answer" in result.stderr


def test_a_failed_request_is_an_error_verdict_and_exit_3(
    cli_main, tmp_path, loopback, session, summary
):
    loopback.script([openai_sse(["src/plugins/x.ts"])])  # the second request gets a 500
    config = config_file(tmp_path, loopback)
    result = cli_main(
        "probe", session, "--summary", summary, "--config", config, "--questions", "2", "--json"
    )
    assert result.code == 3, result.stderr
    data = json.loads(result.stdout)
    assert [q["verdict"] for q in data["questions"]][1] == "error"
    assert "1 of 2 probe requests failed" in result.stderr


@pytest.mark.parametrize("bad", ["0", "101", "many"])
def test_bad_question_counts_are_usage_errors(cli_main, session, summary, bad):
    result = cli_main("probe", session, "--summary", summary, "--questions", bad)
    assert result.code == 2 and result.stderr.count("\n") == 1


def test_an_empty_summary_is_refused(cli_main, tmp_path, loopback, session):
    empty = tmp_path / "empty.md"
    empty.write_text("  \n", encoding="utf-8")
    result = cli_main(
        "probe", session, "--summary", empty, "--config", config_file(tmp_path, loopback)
    )
    assert result.code == 2 and "the summary is empty" in result.stderr
    assert loopback.requests == []


# ----------------------------------------------------------------------------- grading


def test_path_grading():
    assert path_found(EDITED, f"I edited {EDITED}.")
    assert path_found(EDITED, "plugins/codemie-code.plugin.ts")
    assert path_found(EDITED, "The file `codemie-code.plugin.ts`")
    assert path_found(EDITED, "SRC/Plugins/Codemie-Code.Plugin.TS")
    assert not path_found(EDITED, "old-codemie-code.plugin.ts")
    assert not path_found(EDITED, "codemie-code.plugin.tsx")
    assert not path_found(EDITED, "the plugin file")


def test_command_grading():
    assert command_found(COMMAND_LINE, f"Ran `{COMMAND_LINE}`")
    assert command_found(COMMAND_LINE, "NPM  test -- --grep   'threshold'")
    assert command_found(COMMAND_LINE, "npm test --silent -- --grep threshold")  # words in order
    assert not command_found(COMMAND_LINE, "npm test")
    assert not command_found(COMMAND_LINE, "threshold --grep -- test npm")


def test_free_text_grading_rule():
    expected = "AssertionError: expected 0.8 to equal 0.75"
    assert text_share(expected, expected) == 1.0
    q = Question(1, "errors", "Which error?", (expected,), TEXT, (5,))
    assert grade(q, "An AssertionError: expected 0.8 to equal 0.75.").verdict == CORRECT
    assert grade(q, "assertion error, expected 0.8").verdict == PARTIAL
    assert grade(q, "I do not know.").verdict == WRONG
    assert grade(q, None).verdict == "error"
    two = Question(2, "edited_files", "Which files?", ("a/b.py", "c/d.py"), PATH, (1,))
    assert grade(two, "b.py and d.py").verdict == CORRECT
    assert grade(two, "b.py").verdict == PARTIAL
    assert grade(two, "e.py").verdict == WRONG


# ----------------------------------------------------------------------------- masking


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234", "sk-proj-abcdefghijklmnop1234"),
        ("password: hunter2hunter2", "hunter2hunter2"),
        ('"token": "abc123def456ghi"', "abc123def456ghi"),
        ("Authorization: Bearer abcdefghijklmnopqrstuv", "abcdefghijklmnopqrstuv"),
        ("git clone https://bob:pw123secret@host/x", "pw123secret"),
        (f"push with {TAIL_TOKEN}", TAIL_TOKEN),
        ("AKIAABCDEFGHIJKLMNOP in ~/.aws", "AKIAABCDEFGHIJKLMNOP"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "MIIE"),
    ],
)
def test_secret_looking_strings_are_masked(text, secret):
    masked = mask_secrets(text)
    assert secret not in masked and MASK in masked


@pytest.mark.parametrize(
    "text", ["see src/app.py line 4", "max_tokens = 120000", "the token budget is small"]
)
def test_ordinary_text_is_not_masked(text):
    assert mask_secrets(text) == text


def test_two_summaries_get_the_same_questions(session):
    """Before and after an edit (or --anchor): the same questions, so the
    scores compare."""
    one = probe_of(session, summary="first summary")
    two = probe_of(session, summary="a second, longer summary of the same range")
    assert one.questions == two.questions
    assert [b["messages"][-1] for b in one.bodies] == [b["messages"][-1] for b in two.bodies]
    assert one.bodies[0]["messages"][1] != two.bodies[0]["messages"][1]


def test_up_to_names_the_range_asked_about(cli_main, tmp_path, loopback, session, summary):
    """--up-to 3: only the first request and the edit are compacted; the rest is
    kept, so nothing of it is asked and all of it is sent."""
    loopback.script([openai_sse(["I do not know."]) for _ in range(10)])
    config = config_file(tmp_path, loopback)
    result = cli_main(
        "probe", session, "--summary", summary, "--config", config, "--up-to", "3", "--json"
    )
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert {q["category"] for q in data["questions"]} <= {"user_requests", "edited_files"}
    assert all(m <= 3 for q in data["questions"] for m in q["messages"])
    sent = loopback.requests[0].json["messages"]
    assert len(sent) == 1 + 1 + (len(MESSAGES) - 3) + 1  # system, summary, kept, question
    assert "UNIQUE-FIX-REPLY" in json.dumps(sent)  # kept after the boundary: sent


def test_the_summary_may_come_from_standard_input(
    cli_main, tmp_path, loopback, session, monkeypatch
):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("PIPED-SUMMARY about the changelog\n"))
    loopback.script([openai_sse(["I do not know."])])
    config = config_file(tmp_path, loopback)
    result = cli_main(
        "probe", session, "--summary", "-", "--config", config, "--questions", "1", "--json"
    )
    assert result.code == 0, result.stderr
    assert "PIPED-SUMMARY" in loopback.requests[0].json["messages"][1]["content"]
    assert json.loads(result.stdout)["summary"] == "-"

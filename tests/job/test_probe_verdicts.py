"""Probes that can be answered and are graded fairly (issue 31, findings 12-15):
one command, file or request per question; questions only about items absent
from exactly what is sent; Chinese requests asked about; path suffixes, numbers
with units and a stated status graded right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.job.prepare import specifics_of
from kimi_compact_tui.job.probe import ProbePlan, plan_probe
from kimi_compact_tui.job.probe.grade import CORRECT, grade, path_found
from kimi_compact_tui.job.probe.questions import COMMAND, PATH, TEXT, Question, quotes
from tests.factories import write_openai_json


def call(cid: str, name: str, **args) -> dict:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def tool(cid: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def probe_of(path: Path, limit: int = 100) -> ProbePlan:
    job = CompactionJob.load(path, AppConfig(raw={"compaction": {"enabled": True}}))
    prep = job.prepare()
    specifics = specifics_of(job.session, prep.plan)()
    return plan_probe(job.session, prep.plan, "Summary.", specifics, {}, model="m", limit=limit)


COMMANDS = ["npm ci", "npm run build -- --prod", "npm test -- --grep cache", "npm run lint"]


def commands_session(tmp_path: Path) -> Path:
    messages: list[dict] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Build the web app and run its tests and the linter."},
    ]
    for n, command in enumerate(COMMANDS):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call(f"c{n}", "Shell", command=command)],
            }
        )
        messages.append(tool(f"c{n}", "ok\nexit code 0"))
    messages += [
        {"role": "user", "content": "Thanks. Now write the release notes for version 2.3."},
        {"role": "assistant", "content": "Writing them."},
    ]
    return write_openai_json(tmp_path / "commands.json", messages)


def test_one_command_per_question_each_by_its_place(tmp_path):
    probe = probe_of(commands_session(tmp_path))
    asked = [q for q in probe.questions if q.category == "commands"]
    assert [q.expected for q in asked] == [(c,) for c in COMMANDS]  # one each, all asked
    assert all(q.kind == COMMAND for q in asked)
    assert "first" in asked[0].text
    assert "next, after running `npm ci`" in asked[1].text
    for q in asked:
        assert not quotes(q.text, q.expected[0]), q.text
        assert q.text.count("?") == 1 and ",?" not in q.text


def test_no_question_about_an_item_in_the_tail_tool_arguments(tmp_path):
    edited = "src/plugins/cache.plugin.ts"
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Add a cache setting to the plugin config loader, please."},
        {"role": "assistant", "content": "",
         "tool_calls": [call("c1", "WriteFile", path=edited, content="export const C = 1;\n")]},
        tool("c1", "Wrote 1 line."),
        {"role": "user", "content": "Good. Now document the new setting in the README file."},
        # the tail holds the path only inside a tool call's nested arguments
        {"role": "assistant", "content": "Checking the files.",
         "tool_calls": [call("c2", "Inspect", files=[{"path": edited, "lines": 3}])]},
        tool("c2", "3 lines"),
    ]  # fmt: skip
    path = write_openai_json(tmp_path / "nested.json", messages)
    job = CompactionJob.load(path, AppConfig(raw={"compaction": {"enabled": True}}))
    prep = job.prepare()
    assert 5 in prep.plan.preserved_indices  # the Inspect call is sent verbatim
    probe = probe_of(path)
    assert all(q.expected != (edited,) for q in probe.questions)
    sent = json.dumps(probe.bodies[0]["messages"], ensure_ascii=False)
    assert edited in sent


def test_chinese_requests_are_asked_about(tmp_path):
    ask = "帮我把订单服务部署到测试环境，注意不要动生产数据库。"
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": ask},
        {"role": "assistant", "content": "好的，我先看看部署脚本。"},
        {"role": "user", "content": "部署完以后告诉我接口的 p99 延迟是多少。"},
        {"role": "assistant", "content": "好的。"},
        {"role": "user", "content": "好"},
        {"role": "assistant", "content": "部署完成。"},
    ]
    probe = probe_of(write_openai_json(tmp_path / "zh.json", messages))
    asked = [q.expected for q in probe.questions if q.category == "user_requests"]
    assert (ask,) in asked
    assert ("好",) not in asked  # an acknowledgement is not worth a question


@pytest.mark.parametrize(
    "answer, right",
    [
        ("./src/x.ts", True),
        ("/home/dev/project/src/x.ts", True),
        ("I edited `src/x.ts`.", True),
        ("x.ts", True),
        ("/home/dev/project/lib/x.ts", False),
        ("src/x.tsx", False),
        ("old-x.ts", False),
    ],
)
def test_path_answers_match_on_a_path_suffix(answer, right):
    assert path_found("src/x.ts", answer) is right


def test_numbers_and_units_must_match():
    q = Question(1, "user_requests", "What did the user ask?",
                 ("Raise the request timeout to 30 s.",), TEXT, (2,))  # fmt: skip
    assert grade(q, "Raise the request timeout to 30 s.").verdict == CORRECT
    assert grade(q, "Raise the request timeout to 30 seconds.").verdict == CORRECT
    assert grade(q, "Raise the request timeout to 60 s.").verdict != CORRECT
    assert grade(q, "Raise the request timeout to 60 s.").matched == (0.0,)


@pytest.mark.parametrize(
    "answer, right",
    [
        ("Run focused verification (completed)", False),
        ("Run focused verification — done", False),
        ("Run focused verification：已完成", False),
        ("Run focused verification (cancelled)", False),
        ("Run focused verification (still pending)", True),
        ("Run focused verification", True),
    ],
)
def test_a_stated_status_must_match(answer, right):
    q = Question(1, "open_tasks", "What is the first task in the agent's plan? (It is still pending.)",
                 ("Run focused verification",), TEXT, (4,), "pending")  # fmt: skip
    assert (grade(q, answer).verdict == CORRECT) is right


def test_a_path_question_is_graded_on_the_path():
    q = Question(1, "edited_files", "Which file?", ("src/x.ts",), PATH, (3,))
    assert grade(q, "./src/x.ts").verdict == CORRECT

"""An OpenAI ``developer`` message (OpenAI's current name for the system role)
at the start of a session is part of the leading system region: always kept,
never compacted."""

from __future__ import annotations

import json

import pytest

from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.formats.loader import load
from kimi_compact_tui.model import Message
from tests.factories.plain import write_openai_json, write_openai_jsonl

RULES = "Always answer in French."


def conversation(*leading: tuple[str, str]) -> list[dict]:
    out = [{"role": role, "content": text} for role, text in leading]
    for i in range(3):
        out += [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": f"answer {i}"},
        ]
    return out


def plan_of(messages: list[dict], **kw):
    return make_plan([Message(m) for m in messages], **kw)


@pytest.mark.parametrize(
    "leading",
    [
        [("developer", RULES)],
        [("system", "You are helpful."), ("developer", RULES)],
        [("developer", RULES), ("system", "You are helpful.")],
    ],
)
def test_a_leading_developer_message_is_leading_system(leading):
    """Failed on old main: the developer message was in compact_indices."""
    plan = plan_of(conversation(*leading))
    n = len(leading)
    assert list(plan.leading_system_indices) == list(range(n))
    assert plan.compact_indices[0] == n
    assert 0 in plan.request_indices  # sent, as the spec sends leading system messages


def test_an_explicit_boundary_inside_it_compacts_nothing():
    plan = plan_of(conversation(("developer", RULES)), up_to=1)
    assert plan.noop and "leading system" in plan.noop


def test_a_developer_message_later_on_is_an_ordinary_message():
    messages = conversation()
    messages.insert(2, {"role": "developer", "content": RULES})
    plan = plan_of(messages)
    assert list(plan.leading_system_indices) == []
    assert 2 in plan.compact_indices


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_the_written_file_keeps_it_first_and_the_request_names_it(tmp_path, cli_main, suffix):
    """Failed on old main: the written file began with the summary, the
    developer message gone."""
    messages = conversation(("developer", RULES))
    path = tmp_path / f"chat{suffix}"
    (write_openai_jsonl if suffix == ".jsonl" else write_openai_json)(path, messages)
    assert load(path).session.leading_system_indices() == [0]
    preview = cli_main("preview", path, "--json")
    assert preview.code == 0, preview.stderr
    texts = [p["text"] for p in json.loads(preview.stdout)["body"]["messages"][1]["content"]]
    assert texts[:2] == ["## Message 1\nRole: developer\nContent:\n", RULES]
    result = cli_main("compact", path, "--in-place", "--yes", "--provider", "offline")
    assert result.code == 0, result.stderr
    written = load(path).session.messages
    assert written[0].role == "developer" and written[0].text() == RULES
    assert written[1].role == "user" and "compacted" in written[1].text()
    assert [m.text() for m in written[-2:]] == ["question 2", "answer 2"]

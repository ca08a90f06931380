"""What Claude Code 2.1.197 sends of a transcript that starts with ``/clear``'s
records, as an older Claude Code wrote them: an ``isMeta``
caveat, ``<command-name>/clear``, an empty ``<local-command-stdout>``, chained
before the first prompt. What the agent sends on resume is what our messages
must be: checked here, it sends all three (as text blocks of the first user
message), so they stay messages of the session; they are the agent's
bookkeeping (``SessionFormat.bookkeeping``), never a request or a turn."""

from __future__ import annotations

import json
import uuid as uuidlib
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.formats.claude_code import FORMAT as FMT
from tests.agents.claude_code import claude_code_installed, claude_template
from tests.agents.fake_anthropic import FakeAnthropic
from tests.agents.harness import require_agent
from tests.agents.test_claude_code_resume import RESUME_PROMPT, ours, sent, split_request
from tests.factories.claude_code import CAVEAT

pytestmark = pytest.mark.agents

CLEAR = [
    (CAVEAT, True),
    (
        "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
        "<command-args></command-args>",
        False,
    ),
    ("<local-command-stdout></local-command-stdout>", False),
]


@pytest.fixture(scope="module")
def anthropic():
    with FakeAnthropic(summary="FAKE-CLAUDE-SUMMARY", lifetime=600) as fa:
        yield fa


def with_clear_records(path: Path) -> None:
    """Put /clear's three records before the transcript's first message record,
    chained by ``parentUuid`` as the agent chains them."""
    lines = path.read_bytes().split(b"\n")
    records = [json.loads(x) for x in lines if x.strip()]
    first = next(i for i, r in enumerate(records) if r.get("type") in ("user", "assistant"))
    head = records[first]
    new: list[dict[str, Any]] = []
    parent = None
    for content, meta in CLEAR:
        rec = {k: v for k, v in head.items() if k not in ("message", "uuid", "parentUuid")}
        rec.update(
            type="user",
            parentUuid=parent,
            uuid=str(uuidlib.uuid4()),
            message={"role": "user", "content": content},
        )
        rec.pop("toolUseResult", None)
        rec.pop("promptId", None)
        if meta:
            rec["isMeta"] = True
        new.append(rec)
        parent = rec["uuid"]
    head["parentUuid"] = parent
    records[first:first] = new
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))


def test_clear_records_at_the_start_are_sent_and_are_bookkeeping(
    tmp_path, anthropic, tmp_path_factory
):
    require_agent(claude_code_installed(), "Claude Code")
    runner, sid = claude_template(tmp_path_factory)
    claude = runner.clone(tmp_path / "claude", anthropic)
    path = claude.transcript(sid)
    with_clear_records(path)
    session = FMT.parse(path.read_bytes(), path)
    body = claude.resume(sid, RESUME_PROMPT)
    history, _ = split_request(body)
    first = [b for b in sent(history)[0][1] if b[0] == "text"]
    assert [b[1] for b in first[:3]] == [content for content, _ in CLEAR]  # all three sent
    assert ours(session.messages) == sent(history)
    assert [FMT.bookkeeping(m) for m in session.messages[:3]] == ["command"] * 3

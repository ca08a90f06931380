"""What Claude Code 2.1.197 writes for a sub-agent, and that we refuse it.

The real Claude Code, offline against a FakeAnthropic, runs one prompt whose
reply calls its ``Agent`` tool; the sub-agent's own request is answered too.
Claude Code writes the sub-agent's transcript under the session's folder
(``<session id>/subagents/agent-<agent id>.jsonl``), and ``claude --resume``
does not take it as a session. Our tool refuses it in one line naming the
session's transcript instead of showing "0 messages … NO-OP".
"""

from __future__ import annotations

import pytest

from tests.agents.claude_code import ClaudeCode, claude_code_installed
from tests.agents.fake_anthropic import FakeAnthropic
from tests.agents.fake_model import Turn, text_turn
from tests.agents.harness import require_agent
from tests.agents.support import run_ours

pytestmark = pytest.mark.agents

SUB_PROMPT = "Say hi from the sub-agent"


def test_a_real_subagent_transcript_is_refused_naming_its_session(tmp_path):
    require_agent(claude_code_installed(), "Claude Code")
    with FakeAnthropic(lifetime=240) as fake:
        claude = ClaudeCode(tmp_path / "claude", fake)
        fake.script(
            Turn(
                tool_names=("Agent", "Task"),
                tool_args={
                    "description": "say hi",
                    "prompt": SUB_PROMPT,
                    "subagent_type": "general-purpose",
                },
            ),
            text_turn("Hi from the sub-agent."),
            text_turn("The sub-agent said hi."),
        )
        run = claude.run("Ask a sub-agent to say hi").check()
        sid = claude.session_id_of(run)
        main = claude.transcript(sid)
        found = sorted(main.parent.glob(f"{sid}/subagents/agent-*.jsonl"))
        assert len(found) == 1, list(main.parent.rglob("*"))
        sub = found[0]
        assert SUB_PROMPT in sub.read_text(encoding="utf-8")

        # Claude Code does not resume it as a session, by its agent id or its name.
        agent_id = sub.stem.removeprefix("agent-")
        for name in (agent_id, sub.stem):
            fake.script(text_turn("resumed"))
            resumed = claude.run("hi", name)
            assert resumed.returncode != 0, resumed.stdout

    code, out, err = run_ours(["plan", str(sub)], tmp_path)
    assert code == 2, out
    lines = [line for line in err.split("\n") if line]
    assert len(lines) == 1, err
    assert f"{sub}: a Claude Code sub-agent transcript (agent {agent_id} of session {sid})" in (
        lines[0]
    )
    assert str(main) in lines[0]
    # The session itself still opens.
    code, out, err = run_ours(["plan", str(main)], tmp_path)
    assert code == 0, err

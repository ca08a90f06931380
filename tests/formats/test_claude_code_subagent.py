"""A Claude Code sub-agent transcript is refused in one line that says what it
is and names the session's transcript: Claude Code never
resumes it as a session, so "0 messages … NO-OP" misled."""

from __future__ import annotations

import pytest

from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.loader import load
from tests.factories import claude_code


@pytest.mark.parametrize("layout", ["subagents", "flat"])
def test_a_subagent_transcript_is_refused_naming_its_session(tmp_path, cli_main, layout):
    """Failed on old main: "0 messages … NO-OP", exit 0."""
    main = claude_code.two_turns().write(tmp_path / ".claude")
    path = claude_code.subagent(tmp_path / ".claude", layout=layout)
    result = cli_main("plan", path)
    assert result.code == 2, result.stdout
    assert len(result.error_lines) == 1, result.stderr
    line = result.error_lines[0]
    assert f"{path}: a Claude Code sub-agent transcript" in line
    assert "agent a1b2c3d4e5f6a7b8c" in line and claude_code.SID in line
    assert str(main) in line  # the transcript to open instead
    assert "NO-OP" not in result.stdout


def test_the_tui_refuses_it_before_it_starts(tmp_path, cli_main):
    path = claude_code.subagent(tmp_path / ".claude")
    result = cli_main("tui", path)
    assert result.code == 2
    assert "sub-agent transcript" in result.stderr


def test_the_pickers_row_for_it_says_why(tmp_path):
    """Typed into the picker's path box: a row flagged with the reason."""
    path = claude_code.subagent(tmp_path / ".claude")
    info = registry.describe_path(path)
    assert info.error and "sub-agent transcript" in info.error


def test_a_main_transcript_with_sidechain_records_still_opens(tmp_path):
    """Older Claude Code wrote sub-agent records into the main transcript too:
    the session is the main chain, as before."""
    plain = load(claude_code.two_turns().write(tmp_path / "plain")).session
    t = claude_code.two_turns()
    t.user("side question", parent=None, isSidechain=True, agentId="x")
    session = load(t.write(tmp_path / ".claude")).session
    assert len(session.messages) == len(plain.messages) > 0
    assert [m.text() for m in session.messages] == [m.text() for m in plain.messages]

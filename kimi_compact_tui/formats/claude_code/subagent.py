"""Claude Code's sub-agent transcripts: refused in one line.

A sub-agent (the Task tool) writes its own transcript,
``projects/<project>/<session id>/subagents/agent-<agent id>.jsonl`` (older
versions: ``projects/<project>/agent-<agent id>.jsonl``), every record marked
``isSidechain: true`` with the ``agentId`` and the parent's ``sessionId``.
Claude Code reads it only from inside its parent session and never resumes it
as a session of its own, so a compaction of it would change nothing Claude
Code sends: it is refused, naming the parent session's transcript.
"""

from __future__ import annotations

from pathlib import Path

from kimi_compact_tui.formats.claude_code.records import Record

#: How many folders up the parent session's transcript is looked for.
PARENT_DEPTH = 4


def refusal(records: tuple[Record, ...], path: Path) -> str | None:
    """One line when ``records`` are a sub-agent's transcript (every
    conversation record a sidechain), else None."""
    talk = [r for r in records if r.is_transcript()]
    if not talk or not all(r.sidechain for r in talk):
        return None
    first = talk[0].obj
    agent, sid = first.get("agentId"), first.get("sessionId")
    whose = f"agent {agent}" if type(agent) is str and agent else "a sub-agent"
    if type(sid) is str and sid:
        whose += f" of session {sid}"
    parent = parent_transcript(path, sid if type(sid) is str else None)
    instead = f"; open the session's transcript instead: {parent}" if parent else ""
    return (
        f"{path}: a Claude Code sub-agent transcript ({whose}); Claude Code never resumes "
        f"it as a session, so compacting it would change nothing{instead}"
    )


def parent_transcript(path: Path, session_id: str | None) -> Path | None:
    """The parent session's transcript beside the sub-agent's folders, if it is there."""
    if not session_id or "/" in session_id or session_id.startswith("."):
        return None
    for folder in list(path.parents)[:PARENT_DEPTH]:
        candidate = folder / f"{session_id}.jsonl"
        if candidate != path and candidate.is_file():
            return candidate
    return None

"""``kimi-compact-tui hook run AGENT``: the hook the agent runs before it compacts.

It reads the agent's JSON on stdin and answers with an :class:`Outcome`:

- an advisory agent (it cannot be stopped): the compaction is noted in the
  gate's ledger as made blind, and let through;
- a session the user allowed (``hook allow``): let through, once;
- a session held ``let_through_after`` times already: let through, so an
  agent the user left pending is never wedged;
- a transcript named that is not a file: let through (no review could open
  it), and the reason noted;
- otherwise: a pending review is recorded and the compaction is stopped the
  agent's way (exit 2 and one stderr line for Claude Code; a
  ``{"continue": false, "stopReason": ...}`` object on stdout for Codex).

The agent's facts (:class:`~kimi_compact_tui.agenthook.AgentHook`: how it is
stopped, how its last usage is read) come from the caller, which finds them
in the agent's format (``formats/gate.py``); this module names no agent.

Any error lets the compaction through, with one line in the gate's log
(:func:`run_hook` never raises: an error finding the agent's facts too).
Standard library only, so the hook costs a few hundredths of a second
(``benchmarks/`` measures it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.agenthook import CONTINUE_FALSE, EXIT_2, AgentHook
from kimi_compact_tui.fsutil import json_object
from kimi_compact_tui.hooks.pending import GateState, Pending, now_iso

PROG = "kimi-compact-tui"
#: A session held this many times is let through the next time (0: never).
DEFAULT_LET_THROUGH_AFTER = 3
#: How much of a transcript's end is read for its last recorded usage.
TAIL_BYTES = 512 * 1024


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stdout: str = ""
    stderr: str = ""
    held: bool = False


LET_THROUGH = Outcome(0)

#: The agent's hook by the word on our command line (None: no such agent).
Lookup = Callable[[str], AgentHook | None]


def stop_line(agent: AgentHook, pending: Pending) -> str:
    """The one line the user sees: what happened, the command that opens the
    review, and to resume the agent after."""
    where = pending.transcript or pending.session
    which = f"{pending.trigger} compaction" if pending.trigger else "compaction"
    return (
        f"{PROG} held this {which} for review: "
        f"run `{PROG} {_quoted(where)}` to review and write it, then resume {agent.label} "
        f"(or `{PROG} hook allow {pending.session}` lets its next compaction through)"
    )


def _quoted(text: str) -> str:
    if text and all(c.isalnum() or c in "/._-~+:@%" for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def run_hook(
    agent_name: str,
    find: Lookup,
    stdin: bytes,
    *,
    let_through_after: int = DEFAULT_LET_THROUGH_AFTER,
    state: GateState | None = None,
) -> Outcome:
    """The hook's answer to one compaction (never raises: an error lets it through)."""
    try:
        state = state or GateState()
    except Exception:  # noqa: BLE001 - no state folder: nothing to hold it with
        return LET_THROUGH
    try:
        agent = find(agent_name)
        if agent is None:
            raise ValueError(f"unknown agent {agent_name!r}")
        return _decide(agent, stdin, let_through_after, state)
    except Exception as exc:  # noqa: BLE001 - the hook never wedges the agent
        try:
            state.log_error(
                f"hook run {agent_name}: {type(exc).__name__}: {exc}; the compaction went through"
            )
        except Exception:  # noqa: BLE001, S110 - nothing more can be done
            pass
        return LET_THROUGH


def _decide(agent: AgentHook, stdin: bytes, let_through_after: int, state: GateState) -> Outcome:
    payload = json.loads(stdin.decode("utf-8"))
    if not isinstance(payload, dict):
        raise ValueError("the agent's input is not a JSON object")
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        raise ValueError("the agent's input has no session_id")
    transcript = _str(payload.get("transcript_path"))
    trigger = _str(payload.get("trigger"))
    cwd = _str(payload.get("cwd"))
    tokens = payload.get("token_count")
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        tokens = last_usage(agent, transcript)
    where = {"transcript": transcript, "trigger": trigger, "tokens": tokens}
    if not agent.blocking:
        state.note("compacted-blind", agent.name, session, **where)
        return LET_THROUGH
    if transcript is not None and not os.path.isfile(transcript):
        why = f"the transcript {transcript} is not a file: there is nothing to review"
        state.note("let-through", agent.name, session, reason=why, **where)
        return LET_THROUGH
    if state.take_allowance(agent.name, session):
        state.drop(agent.name, session)
        state.note("let-through", agent.name, session, reason="allowed once", **where)
        return LET_THROUGH
    before = state.get(agent.name, session)
    if before is not None and let_through_after > 0 and before.blocks >= let_through_after:
        state.drop(agent.name, session)
        state.note(
            "let-through",
            agent.name,
            session,
            reason=f"held {before.blocks} times without a review",
            **where,
        )
        return LET_THROUGH
    now = now_iso()
    pending = Pending(
        agent=agent.name,
        session=session,
        transcript=transcript,
        trigger=trigger,
        tokens=tokens,
        time=before.time if before else now,
        cwd=cwd,
        blocks=(before.blocks + 1) if before else 1,
        last=now,
    )
    state.put(pending)
    state.note("held", agent.name, session, blocks=pending.blocks, **where)
    line = stop_line(agent, pending)
    if agent.stop == EXIT_2:
        return Outcome(2, stderr=line + "\n", held=True)
    if agent.stop == CONTINUE_FALSE:
        body = json.dumps({"continue": False, "stopReason": line}, ensure_ascii=False)
        return Outcome(0, stdout=body + "\n", held=True)
    raise ValueError(f"{agent.label}: no way to stop a compaction")  # pragma: no cover


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def last_usage(agent: AgentHook, transcript: str | None) -> int | None:
    """The context size the agent last recorded, read from the transcript's end
    by the agent's own reader (None when there is none to read, or the agent
    declares no reader)."""
    usage_of = agent.usage_of
    if not transcript or usage_of is None:
        return None
    try:
        with open(transcript, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - TAIL_BYTES))
            tail = fh.read()
    except OSError:
        return None
    for line in reversed(tail.split(b"\n")):
        if agent.usage_mark not in line:
            continue
        record = json_object(line)
        found = usage_of(record) if isinstance(record, dict) else None
        if found is not None:
            return found
    return None


def main(agent_name: str, find: Lookup, let_through_after: int) -> int:
    """The command: stdin in, the outcome out, its exit status returned."""
    import sys

    outcome = run_hook(
        agent_name, find, sys.stdin.buffer.read(), let_through_after=let_through_after
    )
    if outcome.stdout:
        sys.stdout.write(outcome.stdout)
        sys.stdout.flush()
    if outcome.stderr:
        sys.stderr.write(outcome.stderr)
        sys.stderr.flush()
    return outcome.exit_code

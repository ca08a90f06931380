"""`history SESSION`: the session's compactions, the agent's own and ours (the ledger).

For each compaction the session's file records (``formats/<agent>/ledger.py``):
when, by whom (this tool's audit log tells ours from the agent's), the trigger,
the tokens before and after, and how many messages it replaced; for one whose
replaced messages are still on disk, what its summary kept and lost, with the
same retention report and critical flags as a review. Then what the gate saw
of the session (held, let through, compacted blind, reviewed).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.commands.common import add_stored_session_arg

if TYPE_CHECKING:
    from kimi_compact_tui.formats.base import Session

#: The one-line help of the command (listed by the top-level --help).
HELP = "list the session's compactions, the agent's own and ours, and what each summary lost"
#: How many lost items the text output names per compaction.
SHOWN_LOST = 8


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("history", help=HELP, description=HELP)
    add_stored_session_arg(p)
    p.add_argument("--json", action="store_true", help="print the ledger as JSON")


def run(args: argparse.Namespace) -> int:
    from kimi_compact_tui.formats.loader import load
    from kimi_compact_tui.job.ledger import ledger

    session = load(args.session, hashed=False).session
    entries = ledger(session)
    if args.json:
        from kimi_compact_tui.commands.jsonout import print_json

        print_json(
            {
                "session": str(session.ref),
                "format": session.format.name,
                "agent": session.format.agent,
                "compactions": entries,
                "gate": gate_events(session),
            }
        )
        return 0
    write_text(session, entries)
    return 0


def gate_events(session: Session) -> list[dict[str, Any]]:
    """What the gate recorded of this session: by its transcript's path, or, for an
    agent whose hook gives none, by the session id naming one of its folders."""
    import os

    from kimi_compact_tui.hooks.pending import GateState

    if session.path is None:
        return []
    target = os.path.realpath(session.path)
    out = []
    for event in GateState().events():
        where = event.get("transcript")
        if isinstance(where, str):
            if os.path.realpath(where) == target:
                out.append(event)
        elif isinstance(event.get("session"), str) and event["session"] in target.split(os.sep):
            out.append(event)  # an agent that gives no transcript (kimi-cli): its id's folder
    return out


def write_text(session: Session, entries: list[dict[str, Any]]) -> None:
    import sys

    from kimi_compact_tui.job.ledger import figures, keeps, made_by
    from kimi_compact_tui.sanitize import visible
    from kimi_compact_tui.wording import count

    w = sys.stdout.write
    shown = visible if sys.stdout.isatty() else str
    agent = session.format.agent or session.format.name
    w(f"session  {shown(str(session.ref))} ({session.format.name}, "
      f"{count(len(session.messages), 'message')})\n")  # fmt: skip
    if not entries:
        w(f"no compaction recorded (neither {agent}'s own nor ours)\n")
    for e in entries:
        latest = "  [latest of the agent's own]" if e["latest_agent_compaction"] else ""
        head = shown(f"{e['time'] or '?'}  {made_by(e)}")
        w(f"{e['number']:>3}  {head}  {figures(e)}{latest}\n")
        ret = e["retention"]
        if ret is not None:
            w(f"     {keeps(ret)}\n")
            if ret["line"]:
                w(f"     {shown(ret['line'])}\n")
            for item in ret["missing"][:SHOWN_LOST]:
                mark = "! " if item["critical"] else ""
                w(f"     lost: {mark}[{item['category']}] {shown(item['item'][:100])}\n")
            if len(ret["missing"]) > SHOWN_LOST:
                w(f"     … and {len(ret['missing']) - SHOWN_LOST} more (--json lists them)\n")
        for note in e["notes"]:
            w(f"     {shown(note)}\n")
    for event in gate_events(session):
        reason = f" ({event['reason']})" if event.get("reason") else ""
        w(shown(f"gate  {event.get('time')}  {event.get('event')}{reason}") + "\n")

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

if TYPE_CHECKING:
    from kimi_compact_tui.formats.base import Session
    from kimi_compact_tui.formats.ledger import Compaction
    from kimi_compact_tui.retention import RetentionReport

#: The one-line help of the command (listed by the top-level --help).
HELP = "list the session's compactions, the agent's own and ours, and what each summary lost"
OURS = "kimi-compact-tui"
#: How many lost items the text output names per compaction.
SHOWN_LOST = 8


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("history", help=HELP, description=HELP)
    p.add_argument(
        "session",
        metavar="SESSION",
        help="a session file or folder, a session id or its start, or DB#KEY",
    )
    p.add_argument("--json", action="store_true", help="print the ledger as JSON")


def run(args: argparse.Namespace) -> int:
    from kimi_compact_tui.formats.loader import load

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


def classified(
    session: Session,
) -> tuple[list[tuple[Compaction, dict[str, Any] | None]], list[dict[str, Any]], bool]:
    """The compactions the file records, each with the audit record of ours that
    wrote it (None: the agent's own); this tool's audit records; and whether the
    format has a ledger reader."""
    import hashlib

    from kimi_compact_tui.formats.ledger import compactions
    from kimi_compact_tui.store.audit import read_audit

    ref = session.ref
    audit = read_audit(ref, session.format) if ref is not None else []
    applied = [r for r in audit if r.get("action") == "apply" and r.get("kind") != "repair"]
    found = compactions(session)
    return [(e, _ours(e, applied, hashlib)) for e in found or []], audit, found is not None


def ledger(session: Session) -> list[dict[str, Any]]:
    """Every compaction of ``session``, oldest first, as plain data."""
    pairs, audit, readable = classified(session)
    applied = [r for r in audit if r.get("action") == "apply" and r.get("kind") != "repair"]
    repairs = [r for r in audit if r.get("action") == "apply" and r.get("kind") == "repair"]
    used = {id(mine) for _, mine in pairs if mine is not None}
    out: list[dict[str, Any]] = []
    for entry, mine in pairs:
        item = _entry_json(session, entry, mine)
        for record in repairs:
            if (record.get("repair") or {}).get("offset") == entry.offset:
                added = (record.get("repair") or {}).get("items")
                item["notes"].append(f"repaired by kimi-compact-tui at {record.get('time')} "
                                     f"({added} lost item(s) added to its summary)")  # fmt: skip
        out.append(item)
    for record in applied:
        if id(record) in used:
            continue
        item = _audit_json(record)
        if readable:
            item["notes"].append("not in the file now (undone or restored)")
        out.append(item)
    out.sort(key=lambda e: e["time"] or "")
    agent_own = [e for e in out if e["by"] != OURS and e["in_file"]]
    for e in out:
        e["latest_agent_compaction"] = bool(agent_own) and e is agent_own[-1]
    for i, e in enumerate(out, 1):
        e["number"] = i
    return out


def _ours(entry: Compaction, applied: list[dict[str, Any]], hashlib: Any) -> dict[str, Any] | None:
    """The audit record of ours that wrote ``entry``, or None (the agent's own)."""
    for record in applied:
        if entry.source is not None:  # a rotation: ours when our write made it
            if record.get("backup") == entry.source:
                return record
            continue
        before = record.get("before") or {}
        after = record.get("after") or {}
        size, end = before.get("size"), after.get("size")
        if entry.offset is not None and isinstance(size, int) and isinstance(end, int):
            if size <= entry.offset < end:
                return record
        elif entry.offset is None and entry.summary is not None:
            digest = hashlib.sha256(entry.summary.encode("utf-8", "surrogatepass")).hexdigest()
            if record.get("summary_sha256") == digest:
                return record
    return None


def _entry_json(session: Session, entry: Compaction, mine: dict[str, Any] | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "time": _time(entry.time),
        "by": OURS if mine is not None else session.format.agent or session.format.name,
        "trigger": "review" if mine is not None else entry.trigger,
        "tokens_before": entry.tokens_before,
        "tokens_after": entry.tokens_after,
        "messages_replaced": entry.replaced,
        "messages_kept": len(entry.kept_messages) if entry.before is not None else None,
        "summary_chars": len(entry.summary) if entry.summary is not None else None,
        "in_file": True,
        "retention": None,
        "notes": list(entry.notes),
    }
    if mine is not None:
        usage = mine.get("usage") or {}
        item["model"] = mine.get("model")
        item["tokens_after"] = item["tokens_after"] or usage.get("output_tokens")
    if entry.before is not None and entry.summary is not None and entry.replaced:
        item["retention"] = _retention(session, entry)
    elif entry.before is None:
        item["notes"].append("the messages it replaced are no longer on disk")
    return item


def retention_of(session: Session, entry: Compaction) -> RetentionReport | None:
    """The retention report of ``entry``'s summary against the messages it replaced
    (None when they are gone or there is no summary)."""
    from kimi_compact_tui.compaction.plan import make_plan
    from kimi_compact_tui.formats.base import Session as SessionType
    from kimi_compact_tui.retention import retention_report

    if entry.before is None or entry.summary is None or not entry.before:
        return None
    before = list(entry.before)
    messages = before + list(entry.kept_messages)
    judged = SessionType(session.ref, session.format, messages, meta=session.meta)
    plan = make_plan(messages, up_to=len(before))
    if plan.noop:
        return None
    return retention_report(judged, plan, entry.summary)


def _retention(session: Session, entry: Compaction) -> dict[str, Any]:
    report = retention_of(session, entry)
    if report is None:
        return {"kept": 0, "total": 0, "critical": [], "missing": [], "line": None}
    data = report.to_json()
    data["missing"] = [
        {"category": i.category, "item": i.text, "critical": i in report.critical_missing()}
        for i in report.missing_items()
    ]
    data["line"] = report.critical_line()
    return data


def _audit_json(record: dict[str, Any]) -> dict[str, Any]:
    indices = record.get("indices") or {}
    compacted = indices.get("compacted") or [0, 0]
    kept = indices.get("kept") or [0, 0]
    usage = record.get("usage") or {}
    return {
        "time": record.get("time"),
        "by": OURS,
        "trigger": "review",
        "tokens_before": usage.get("input_tokens"),
        "tokens_after": usage.get("output_tokens"),
        "messages_replaced": compacted[1] - compacted[0],
        "messages_kept": kept[1] - kept[0],
        "summary_chars": record.get("summary_chars"),
        "in_file": False,
        "retention": None,
        "model": record.get("model"),
        "notes": [],
    }


def _time(text: str | None) -> str | None:
    """``2026-12-01T13:42:44.619Z`` → ``2026-12-01T13:42:44Z`` (the audit log's shape)."""
    if text and len(text) > 20 and text[19] == "." and text.endswith("Z"):
        return text[:19] + "Z"
    return text


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
        trigger = f" ({e['trigger']})" if e["trigger"] else ""
        before = f"{e['tokens_before']:,}" if e["tokens_before"] is not None else "?"
        after = f"{e['tokens_after']:,}" if e["tokens_after"] is not None else "?"
        replaced = (
            count(e["messages_replaced"], "message") + " replaced"
            if e["messages_replaced"] is not None
            else "replaced messages gone"
        )
        kept = f", {e['messages_kept']} kept" if e["messages_kept"] else ""
        latest = "  [latest of the agent's own]" if e["latest_agent_compaction"] else ""
        w(f"{e['number']:>3}  {e['time'] or '?'}  {e['by']}{trigger}  tokens {before} → {after}"
          f"  {replaced}{kept}{latest}\n")  # fmt: skip
        ret = e["retention"]
        if ret is not None:
            w(f"     its summary keeps {ret['kept']}/{ret['total']} of the specifics\n")
            if ret["line"]:
                w(f"     {ret['line']}\n")
            for item in ret["missing"][:SHOWN_LOST]:
                mark = "! " if item["critical"] else ""
                w(f"     lost: {mark}[{item['category']}] {shown(item['item'][:100])}\n")
            if len(ret["missing"]) > SHOWN_LOST:
                w(f"     … and {len(ret['missing']) - SHOWN_LOST} more (--json lists them)\n")
        for note in e["notes"]:
            w(f"     {note}\n")
    for event in gate_events(session):
        reason = f" ({event['reason']})" if event.get("reason") else ""
        w(f"gate  {event.get('time')}  {event.get('event')}{reason}\n")

"""The ledger of one session, as plain data: its compactions, the agent's own and
ours, oldest first, and what each summary kept and lost; and repair of the
agent's latest own summary (the anchor block of what it lost, put into that
summary message in place).

Each compaction is read from the session's own file (``formats/<agent>/ledger.py``);
this tool's audit log tells ours from the agent's. ``history`` prints it, the
TUI's ledger screen shows it, and ``compact --repair`` and the TUI's repair
share :func:`repair_plan` and :func:`write_repair`. The gate's events are not
here (the gate is the command line's: ``commands/history.py``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.errors import ApplyError, UserError
from kimi_compact_tui.wording import count

if TYPE_CHECKING:
    from kimi_compact_tui.formats.base import Session
    from kimi_compact_tui.formats.ledger import Compaction
    from kimi_compact_tui.formats.loader import Fingerprint
    from kimi_compact_tui.retention import RetentionReport
    from kimi_compact_tui.retention.anchor import Anchored

OURS = "kimi-compact-tui"


def classified(
    session: Session,
) -> tuple[list[tuple[Compaction, dict[str, Any] | None]], list[dict[str, Any]], bool]:
    """The compactions the file records, each with the audit record of ours that
    wrote it (None: the agent's own); this tool's audit records; and whether the
    format has a ledger reader."""
    from kimi_compact_tui.formats.ledger import compactions
    from kimi_compact_tui.store.audit import read_audit

    ref = session.ref
    audit = read_audit(ref, session.format) if ref is not None else []
    applied = [r for r in audit if r.get("action") == "apply" and r.get("kind") != "repair"]
    found = compactions(session)
    return [(e, _ours(e, applied)) for e in found or []], audit, found is not None


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
                lost = count(added, "lost item") if isinstance(added, int) else "lost items"
                item["notes"].append(f"repaired by kimi-compact-tui at {record.get('time')} "
                                     f"({lost} added to its summary)")  # fmt: skip
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


def made_by(entry: dict[str, Any]) -> str:
    """Who made the compaction of a :func:`ledger` entry, and its trigger:
    ``claude-code (auto)``."""
    trigger = f" ({entry['trigger']})" if entry["trigger"] else ""
    return f"{entry['by']}{trigger}"


def figures(entry: dict[str, Any]) -> str:
    """The figures of a :func:`ledger` entry in words (``?``: not recorded):
    ``tokens 152,000 → 9,800  40 messages replaced, 6 kept``."""
    before = f"{entry['tokens_before']:,}" if entry["tokens_before"] is not None else "?"
    after = f"{entry['tokens_after']:,}" if entry["tokens_after"] is not None else "?"
    replaced = (
        count(entry["messages_replaced"], "message") + " replaced"
        if entry["messages_replaced"] is not None
        else "replaced messages gone"
    )
    kept = f", {entry['messages_kept']} kept" if entry["messages_kept"] else ""
    return f"tokens {before} → {after}  {replaced}{kept}"


def keeps(retention: dict[str, Any]) -> str:
    """What an entry's summary kept (its ``retention``): ``its summary keeps 7/9 of the specifics``."""
    return f"its summary keeps {retention['kept']}/{retention['total']} of the specifics"


def _ours(entry: Compaction, applied: list[dict[str, Any]]) -> dict[str, Any] | None:
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


@dataclass
class RepairPlan:
    """What repair would do: the agent's latest own compaction, the retention
    report of its summary, and the anchor block of what it lost (empty: nothing)."""

    session: Session
    latest: Compaction
    report: RetentionReport
    anchored: Anchored
    agent: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def needed(self) -> bool:
        return bool(self.anchored.block)

    def data(self) -> bytes:
        """The file's bytes with the block in that summary message (the agent's shape)."""
        from kimi_compact_tui.formats.ledger import repairer_of

        repairer = repairer_of(self.session.format.name)
        assert repairer is not None  # repair_plan refuses a format without one
        data: bytes = repairer(self.session, self.latest, self.anchored.text)
        return data


def repair_plan(session: Session, budget: int | None = None) -> RepairPlan:
    """The repair of ``session``'s latest own compaction, or UserError saying in
    one line why there is none (no reader or repairer for the format, no own
    compaction, its replaced messages gone)."""
    from kimi_compact_tui.formats.ledger import repairer_of
    from kimi_compact_tui.retention.anchor import DEFAULT_ANCHOR_BUDGET, anchor

    fmt = session.format
    agent = fmt.agent or fmt.name
    pairs, _, readable = classified(session)
    own = [e for e, mine in pairs if mine is None]
    where = session.ref
    if not readable or repairer_of(fmt.name) is None:
        raise UserError(f"{where}: repair is not offered for {fmt.label} sessions yet")
    if not own:
        raise UserError(
            f"{where}: {agent} has not compacted this session itself; nothing to repair"
        )
    latest = own[-1]
    report = retention_of(session, latest)
    if report is None or latest.summary is None:
        raise UserError(
            f"{where}: the messages {agent}'s latest compaction replaced are no longer on disk; "
            "what its summary lost cannot be told"
        )
    anchored = anchor(report, latest.summary, DEFAULT_ANCHOR_BUDGET if budget is None else budget)
    return RepairPlan(session, latest, report, anchored, agent)


def write_repair(
    plan: RepairPlan, loaded: Fingerprint | None, data: bytes | None = None
) -> tuple[dict[str, str], list[str]]:
    """Keep the file as it is, replace it with the repaired bytes atomically, and
    record the repair in the audit log (no appended bytes: an undo puts the backup
    back). Refused when the file changed since ``loaded``. Returns where it wrote
    and the warnings to show."""
    from kimi_compact_tui.fsutil import atomic_write_bytes
    from kimi_compact_tui.store.audit import append_audit, tool_name
    from kimi_compact_tui.store.write import now_utc

    session, latest = plan.session, plan.latest
    data = plan.data() if data is None else data
    fmt = session.format
    ref = session.ref
    strategy: Any = fmt.storage  # a file's strategy (byte_based), checked next
    if not strategy.byte_based or ref is None:
        raise ApplyError(f"{ref}: repair writes a file; this session is not one")
    refusal = fmt.write_refusal(session)  # e.g. the agent has the session open now
    if refusal:
        raise ApplyError(f"{ref}: not repaired: {refusal}")
    current = strategy.current(ref)
    if loaded is None or current.fingerprint != loaded:
        raise ApplyError(strategy.conflict(ref, loaded, current))
    when = now_utc()
    backup = strategy.keep(ref, current, when)
    atomic_write_bytes(ref.path, data, mode=current.mode)
    warnings = list(fmt.after_restore(ref.path, current.data, data))  # what the agent derives
    after = hashlib.sha256(data).hexdigest()
    record = {
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "action": "apply",
        "kind": "repair",
        "tool": tool_name(),
        "source": str(ref.path),
        "format": fmt.name,
        "policy": "replace",
        "backup": str(backup),
        "before": {"size": current.fingerprint.size, "sha256": current.fingerprint.sha256},
        "after": {"size": len(data), "sha256": after},
        "repair": {"offset": latest.offset, "items": len(plan.anchored.items)},
    }
    log, error = append_audit(ref, fmt, record, current.mode)
    if error:
        warnings.append(error)
    return {"path": str(ref.path), "backup": str(backup), "log": str(log)}, warnings

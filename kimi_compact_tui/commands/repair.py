"""`compact SESSION --repair`: put what the agent's latest own summary lost into
that summary, in place.

The agent resumes from the summary of its latest compaction. When the messages
that compaction replaced are still on disk (the ledger reads them back), the
retention report says what its summary lost; the anchor block of those items
(the same block as ``compact --anchor``) is added to that summary message,
rewritten in the agent's own shape by ``formats/<agent>/repair.py``, with every
other byte of the file unchanged. The block is shown first and the write asks
(``--yes`` does not). The file as it was is kept as a restore point, and the
audit record makes ``restore`` put those bytes back. Earlier compactions are
history (the agent no longer resumes them): the ledger lists them, repair does
not touch them.
"""

from __future__ import annotations

import hashlib
import sys
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.errors import ApplyError, UserError

if TYPE_CHECKING:
    from kimi_compact_tui.commands.compact.options import CompactOptions


def run_repair(opts: CompactOptions) -> int:
    from kimi_compact_tui.commands.history import classified, retention_of
    from kimi_compact_tui.formats.ledger import repairer_of
    from kimi_compact_tui.formats.loader import load
    from kimi_compact_tui.retention.anchor import anchor

    given = {
        "--output": opts.output,
        "--up-to": opts.session.up_to,
        "--from-summary": opts.from_summary,
        "--anchor": opts.anchor,
    }
    for option, value in given.items():
        if value:
            raise UserError(f"--repair works on the agent's own summary; drop {option}")
    if not opts.yes and not sys.stdin.isatty():
        raise UserError(
            f"{opts.session.session}: --repair asks for confirmation on a terminal and there is none; "
            "pass --yes to write without asking"
        )
    loaded = load(opts.session.session, hashed=True)
    session = loaded.session
    fmt = session.format
    agent = fmt.agent or fmt.name
    repairer = repairer_of(fmt.name)
    pairs, _, readable = classified(session)
    own = [e for e, mine in pairs if mine is None]
    where = session.ref
    if not readable or repairer is None:
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
    anchored = anchor(report, latest.summary, opts.anchor_budget)
    if not anchored.block:
        print(f"nothing to repair: {agent}'s latest summary keeps every item the retention "
              "report checks")  # fmt: skip
        return 0
    shown = sys.stdout.write
    shown(f"{agent}'s latest summary ({latest.time}) loses {len(anchored.items)} item(s); "
          "this block goes into it:\n")  # fmt: skip
    shown(anchored.block.rstrip("\n") + "\n")
    if anchored.note():
        shown(f"{anchored.note()}\n")
    if not opts.yes:
        answer = input(f"repair {where} in place? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("nothing written")
            return 0
    data = repairer(session, latest, anchored.text)
    result = _write(session, loaded.fingerprint, data, latest, len(anchored.items))
    print(f"repaired: {result['path']} (restore point {result['backup']}; "
          f"`kimi-compact-tui restore {where}` undoes it)")  # fmt: skip
    return 0


def _write(session: Any, loaded: Any, data: bytes, latest: Any, items: int) -> dict[str, str]:
    """Keep the file as it is, replace it with ``data`` atomically, and record the
    repair in the audit log (no appended bytes: an undo puts the backup back)."""
    from kimi_compact_tui.fsutil import atomic_write_bytes
    from kimi_compact_tui.store.audit import append_audit, tool_name
    from kimi_compact_tui.store.write import now_utc

    fmt = session.format
    ref = session.ref
    strategy = fmt.storage
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
    for line in fmt.after_restore(ref.path, current.data, data):  # what the agent derives
        print(f"warning: {line}", file=sys.stderr)
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
        "repair": {"offset": latest.offset, "items": items},
    }
    log, error = append_audit(ref, fmt, record, current.mode)
    if error:
        print(f"warning: {error}", file=sys.stderr)
    return {"path": str(ref.path), "backup": str(backup), "log": str(log)}

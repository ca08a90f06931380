"""What ``u`` (undo) and the restore-point list offer, decided from the audit log.

Plain Python, no Textual. :class:`ReviewState` is the only caller: the TUI
asks it for a :class:`RestoreOffer` and shows that in a confirmation dialog
before anything is written.

Rules (issue 9, item 2):

- ``u`` offers only what this tool wrote, as its audit log records it: the
  newest audit entry must be an ``apply`` whose ``backup`` still exists. A
  rotation kimi-cli made itself (``context_N.jsonl`` with no audit entry) is
  never the default; it is offered only once picked from the restore points.
- After an undo the newest entry is a ``restore``: ``u`` then says there is
  nothing of ours to undo, instead of re-applying the compaction.
- When the live file no longer holds the bytes this tool wrote (the agent
  appended turns), the offer is marked ``changed``: a restore refuses unless
  forced, and a forced restore keeps the current file as a restore point first.

The store calls (``restore_points``, ``restore``, ``read_audit``,
``audit_path``) are the apply module's; ``ReviewState`` wraps them so they can
be swapped for the store package in one place.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui import apply


@dataclass(frozen=True)
class RestoreOffer:
    """One restore the user may confirm (``point`` set) or why there is none."""

    live: Path  # the session file that the restore replaces
    point: Any = None  # the apply module's RestorePoint, None = nothing to offer
    reason: str | None = None  # why nothing is offered
    origin: str = ""  # where the restore point came from (audit log or kimi-cli)
    ours: bool = False  # the point is the backup of this tool's newest apply
    changed: str | None = None  # why the live file differs from what this tool wrote
    keep_as: str = ""  # where the current live file is kept before the restore

    @property
    def available(self) -> bool:
        return self.point is not None

    def lines(self) -> list[str]:
        """The dialog text: what becomes live and where the current file goes."""
        if self.point is None:
            return [self.reason or "nothing to restore"]
        name = self.point.path.name
        out = [f"{name} becomes the live {self.live.name}", f"  ({self.origin})"]
        out.append(f"the current {self.live.name} is kept as {self.keep_as}")
        if self.changed:
            out.append(self.changed)
        return out


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def keep_description(live: Path) -> str:
    """Where the store keeps the current file before a restore (today: a new
    rotation for kimi-cli sessions, a timestamped backup otherwise)."""
    if apply._is_kimi_target(live):  # the store's own rule
        return apply.next_rotation(live).name
    return f"{live.name}{apply.BACKUP_MARK}<UTC time>"


def _last_apply(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    for record in reversed(records):
        if record.get("action") == "apply":
            return record
    return None


def _changed_since(live: Path, record: dict[str, Any]) -> str | None:
    written = (record.get("after") or {}).get("sha256")
    now = _sha256(live)
    if written is None or now == written:
        return None
    return (
        f"{live.name} changed since this tool wrote it at {record.get('time')} "
        "(the agent may have appended turns): restoring would drop them, so it is refused. "
        "Force keeps the current file as a restore point first."
    )


def undo_offer(live: Path) -> RestoreOffer:
    """What ``u`` offers for the session file ``live``."""
    records = apply.read_audit(live)
    audit = apply.audit_path(live).name
    if not records:
        return RestoreOffer(
            live,
            reason=(
                f"nothing of ours to undo: this tool has not written {live.name} "
                f"(no entry in {audit}); r lists every restore point, kimi-cli's own included"
            ),
        )
    last = records[-1]
    if last.get("action") != "apply":
        undone = _last_apply(records)
        when = f" written at {undone.get('time')}" if undone else ""
        return RestoreOffer(
            live,
            reason=(
                f"nothing of ours to undo: the last compaction{when} was already undone "
                f"(restore at {last.get('time')}); to redo it, pick it under r (restore points)"
            ),
        )
    backup = Path(str(last.get("backup")))
    points = {str(p.path): p for p in apply.restore_points(live)}
    point = points.get(str(backup))
    if point is None:
        return RestoreOffer(
            live,
            reason=f"cannot undo: {backup.name}, the copy kept by the last write, is gone",
        )
    return RestoreOffer(
        live,
        point=point,
        origin=point.origin,
        ours=True,
        changed=_changed_since(live, last),
        keep_as=keep_description(live),
    )


def point_offer(live: Path, point: Any) -> RestoreOffer:
    """A restore point picked from the list (any origin, labelled)."""
    records = apply.read_audit(live)
    newest = records[-1] if records else None
    changed = None
    if newest is not None and newest.get("action") == "apply":
        changed = _changed_since(live, newest)
    return RestoreOffer(
        live,
        point=point,
        origin=point.origin,
        ours=False,
        changed=changed,
        keep_as=keep_description(live),
    )


def run_restore(offer: RestoreOffer, *, force: bool) -> str:
    """Restore ``offer``'s point (refused when the live file changed, unless
    forced: the store keeps the current file as a restore point first)."""
    from kimi_compact_tui.errors import UserError

    if offer.point is None:
        raise UserError(offer.reason or "nothing to restore")
    # Checked again now: the agent may have written since the dialog opened.
    fresh = undo_offer(offer.live) if offer.ours else point_offer(offer.live, offer.point)
    if fresh.point is None or fresh.point.path != offer.point.path:
        raise UserError(
            f"{offer.live}: not restored: {fresh.reason or 'the restore points changed'}"
        )
    if fresh.changed and not force:
        raise UserError(f"{offer.live}: not restored: {fresh.changed}")
    return apply.restore(offer.live, offer.point).describe()

"""What ``u`` (undo) and the restore-point list offer, as the store decides.

Plain Python, no Textual. :class:`ReviewState` is the only caller: the TUI
asks it for a :class:`RestoreOffer` and shows that in a confirmation dialog
before anything is written. The rules are the store's
(:mod:`kimi_compact_tui.store.restore`), the same as the CLI's ``restore``:

- ``u`` offers only what this tool wrote, as its audit log records it; a
  rotation the agent made itself is offered only once picked from the list;
- after an undo there is nothing of ours to undo (no silent re-apply);
- when the live file changed since the write, the restore is refused unless
  forced, and a forced restore keeps the current file as a restore point first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui import store
from kimi_compact_tui.errors import ApplyError, UserError


@dataclass(frozen=True)
class RestoreOffer:
    """One restore the user may confirm (``point`` set) or why there is none."""

    target: store.Target  # the session file that the restore replaces, and its format
    point: Any = None  # the store's RestorePoint, None = nothing to offer
    reason: str | None = None  # why nothing is offered
    origin: str = ""  # where the restore point came from (audit log or not)
    ours: bool = False  # the undo of this tool's newest write
    changed: str | None = None  # why the live file differs from what this tool wrote
    keep_as: str = ""  # where the current live file is kept before the restore
    truncate_to: int | None = None  # an appended compaction, undone by cutting it off

    @property
    def live(self) -> Path:
        return self.target.path

    @property
    def available(self) -> bool:
        return self.point is not None

    def lines(self) -> list[str]:
        """The dialog text: what becomes live and where the current file goes."""
        if self.point is None:
            return [self.reason or "nothing to restore"]
        name = self.point.path.name
        if self.truncate_to is not None:
            out = [
                f"the compaction appended to {self.live.name} is cut off again: the file "
                f"goes back to its first {self.truncate_to:,} bytes, as before the write",
                f"  (the same bytes as {name}: {self.origin})",
            ]
        else:
            live = self.target.ref.name  # the file, or DB#KEY: one session of a database
            out = [f"{name} becomes the live {live}", f"  ({self.origin})"]
            out.append(f"the current {live} is kept as {self.keep_as}")
        if self.changed:
            out.append(self.changed)
        return out


def _changed_text(changed: str) -> str:
    return (
        f"{changed}: restoring would drop those changes, so it is refused. "
        "Force keeps the current file as a restore point first."
    )


def undo_offer(target: store.Target) -> RestoreOffer:
    """What ``u`` offers for the session file ``target``."""
    try:
        plan = store.undo_plan(target)
    except ApplyError as exc:
        return RestoreOffer(target, reason=str(exc))
    points = {p.path: p for p in store.restore_points(target)}
    point = points.get(plan.source)
    if point is None:
        return RestoreOffer(
            target,
            reason=f"cannot undo: {plan.source.name}, the copy kept by the last write, is gone",
        )
    changed = _changed_text(plan.changed_since) if plan.changed_since else None
    keep_as = store.keeps_current_as(target) if plan.truncate_to is None else ""
    return RestoreOffer(target, point, None, point.origin, True, changed, keep_as, plan.truncate_to)


def point_offer(target: store.Target, point: Any) -> RestoreOffer:
    """A restore point picked from the list (any origin, labelled); the current
    file is always kept first, so nothing is refused."""
    keep_as = store.keeps_current_as(target)
    return RestoreOffer(target, point, None, point.origin, False, None, keep_as)


def run_restore(offer: RestoreOffer, *, force: bool) -> str:
    """Carry out a confirmed offer; the store checks everything again now (the
    agent may have written since the dialog opened)."""
    if offer.point is None:
        raise UserError(offer.reason or "nothing to restore")
    point = None if offer.ours else offer.point
    return store.restore(offer.target, point, force=force).describe()

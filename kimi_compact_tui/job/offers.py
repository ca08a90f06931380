"""Undo and restore offers: what ``restore`` (and the TUI's ``u`` and restore
list) may do to a session, as typed values every front end renders.

The rules are the store's (:mod:`kimi_compact_tui.store.restore`); this
module asks the store once and says what it found:

- :func:`undo_offer` (``restore SESSION``; ``u``): only what this tool wrote,
  as its audit log records it. Nothing to undo is a ``NOTHING_TO_UNDO``
  refusal; a live session changed since the write is offered with
  :attr:`RestoreOffer.changed_since` set (:attr:`RestoreOffer.changed` is the
  dialog's warning line), and :meth:`RestoreOffer.changed_refusal`
  (``CHANGED_SINCE_WRITE``) refuses it unless forced;
- :func:`point_offer` (``restore --point NAME``; a pick from the list): any
  restore point, labelled with its origin; the current version is always
  kept first, so only an unknown name is refused;
- :func:`offer_for` (the CLI's entry): the one or the other, after the
  ``SAMPLE`` refusal (a bundled sample is never restored over);
- :meth:`RestoreOffer.dry_run` (``restore --dry-run``): which file or rows,
  which point, and what the live session would lose, read now, with nothing
  changed;
- :func:`carry_out`: the confirmed offer, through the store (which checks
  everything again: the agent may have written since the offer was made).

A front end shows :meth:`RestoreOffer.lines` (a dialog) or
:meth:`RestoreOffer.question` (one line), and ``str(offer.refusal)``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from kimi_compact_tui import store
from kimi_compact_tui.errors import ApplyError, SessionFormatError, UserError
from kimi_compact_tui.job import refusals
from kimi_compact_tui.job.refusals import Refusal, RefusalKind
from kimi_compact_tui.store.points import Where, target_of
from kimi_compact_tui.wording import count


@dataclass(frozen=True)
class RestoreOffer:
    """One restore the user may confirm (``point`` set), or the refusal that
    says why there is none."""

    target: store.Target  # the session the restore replaces, and its format
    point: store.RestorePoint | None = None  # None: nothing to offer
    refusal: Refusal | None = None  # why nothing is offered
    origin: str = ""  # where the restore point came from (audit log or not)
    ours: bool = False  # the undo of this tool's newest write
    changed_since: str | None = None  # why the live session differs from what this tool wrote
    keep_as: str = ""  # where the current live session is kept before the restore
    truncate_to: int | None = None  # an appended compaction, undone by cutting it off
    when: str | None = None  # the time of the write an undo undoes

    @property
    def live(self) -> Path:
        return self.target.path

    @property
    def available(self) -> bool:
        return self.point is not None

    @property
    def reason(self) -> str | None:
        """The refusal's one line (None when something is offered)."""
        return None if self.refusal is None else self.refusal.message

    @property
    def changed(self) -> str | None:
        """The warning line :meth:`lines` ends with when the live session changed
        since this tool wrote it (a dialog shows it as the warning), else None."""
        if not self.changed_since:
            return None
        return (
            f"{self.changed_since}: restoring would drop those changes, so it is refused. "
            "Force keeps the current file as a restore point first."
        )

    def changed_refusal(self) -> Refusal | None:
        """An undo over a session that changed since this tool wrote it: refused
        unless forced (forcing keeps the current version first)."""
        if self.changed_since is None:
            return None
        return Refusal(
            RefusalKind.CHANGED_SINCE_WRITE,
            f"{self.changed_since}; restoring would drop those changes, so nothing was changed",
        )

    def lines(self) -> list[str]:
        """The dialog text: what becomes live and where the current version goes."""
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

    def question(self) -> str:
        """The one line a confirmation asks about (before ``Restore? [y/N]``)."""
        assert self.point is not None
        ref = self.target.ref
        if not self.ours:
            return (
                f"{self.point.path.name} ({self.origin}) becomes the live session; the "
                "current file is kept first"
            )
        if self.truncate_to is not None:
            return (
                f"{ref.path} is cut back to {self.truncate_to} bytes, as it was before the "
                f"compaction written at {self.when}"
            )
        return (
            f"{self.point.path.name} becomes the live {ref.name} again (the state before "
            f"the compaction written at {self.when}); the current {ref.name} is kept as a "
            "restore point"
        )

    def dry_run(self) -> list[str]:
        """``restore --dry-run``: what a restore would do, read now; nothing is changed."""
        if self.point is None:
            return [self.reason or "nothing to restore"]
        fmt, ref = self.target.format, self.target.ref
        strategy = fmt.storage
        point = self.point
        out = [f"session  {ref}" + (f" (its rows in the database {ref.path})" if ref.key else "")]
        after = _messages(self.target, _read_point(self.target, point.path))
        out.append(
            f"point    {point.path.name} ({point.origin}): {point.size:,} bytes"
            + ("" if after is None else f", {count(after, 'message')}")
        )
        try:
            current = strategy.current(ref)
        except FileNotFoundError:
            current = None
        except OSError as exc:
            raise ApplyError(f"{ref}: cannot read ({exc.strerror or exc})") from None
        if current is None:
            out.append("current  none: the session is missing, so nothing is lost")
        else:
            before = _messages(self.target, current.data)
            size = current.fingerprint.size
            shown = f"{size:,} bytes" + ("" if before is None else f", {count(before, 'message')}")
            if self.truncate_to is not None:
                out.append(
                    f"current  {shown}: the {size - self.truncate_to:,} bytes this tool "
                    "appended are cut off"
                )
            else:
                out.append(f"current  {shown}: kept first as {self.keep_as}")
            if before is not None and after is not None:
                out.append(
                    f"loses    the current {count(before, 'message')} leave the live session, "
                    f"which holds the point's {after} again"
                )
        if self.changed_since:
            out.append(f"changed  {self.changed_since}: refused unless forced (--force)")
        out.append("nothing was changed (--dry-run)")
        return out


def _read_point(target: store.Target, path: Path) -> bytes | None:
    with contextlib.suppress(OSError):
        return target.format.storage.read_point(path)
    return None


def _messages(target: store.Target, data: bytes | None) -> int | None:
    """The messages ``data`` holds, as the format counts them (None: unknown)."""
    if data is None:
        return None
    try:
        return target.format.storage.count_messages(target.ref, data)
    except (SessionFormatError, OSError):
        return None


def undo_offer(where: Where) -> RestoreOffer:
    """What undo offers for the session at ``where``: the copy kept by this
    tool's newest write, or the refusal saying why there is nothing of ours."""
    target = target_of(where)
    try:
        plan = store.undo_plan(target)
    except ApplyError as exc:
        return RestoreOffer(target, refusal=Refusal(RefusalKind.NOTHING_TO_UNDO, str(exc)))
    points = {p.path: p for p in store.restore_points(target)}
    point = points.get(plan.source)
    if point is None:
        why = f"cannot undo: {plan.source.name}, the copy kept by the last write, is gone"
        return RestoreOffer(target, refusal=Refusal(RefusalKind.NOTHING_TO_UNDO, why))
    keep_as = store.keeps_current_as(target) if plan.truncate_to is None else ""
    return RestoreOffer(
        target,
        point,
        origin=point.origin,
        ours=True,
        changed_since=plan.changed_since,
        keep_as=keep_as,
        truncate_to=plan.truncate_to,
        when=str(plan.record.get("time")),
    )


def point_offer(where: Where, point: store.RestorePoint | str | Path) -> RestoreOffer:
    """A restore point picked by name or from the list (any origin, labelled);
    the current version is always kept first. An unknown name is an ApplyError
    naming the points there are."""
    target = target_of(where)
    if not isinstance(point, store.RestorePoint):
        point = store.pick_point(target, point)
    return RestoreOffer(target, point, origin=point.origin, keep_as=store.keeps_current_as(target))


def offer_for(where: Where, point: str | None = None) -> RestoreOffer:
    """The CLI's offer: the undo (``point`` None) or the point named, after the
    refusal of a bundled sample."""
    target = target_of(where)
    sample = refusals.sample_refusal(target.path)
    if sample is not None:
        return RestoreOffer(target, refusal=sample)
    return undo_offer(target) if point is None else point_offer(target, point)


def carry_out(offer: RestoreOffer, *, force: bool = False) -> store.RestoreResult:
    """Carry out a confirmed offer; the store checks everything again now."""
    if offer.point is None:
        raise (offer.refusal.error() if offer.refusal else UserError("nothing to restore"))
    return store.restore(offer.target, None if offer.ours else offer.point, force=force)

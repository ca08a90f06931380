"""`restore SESSION`: undo the last compaction this tool wrote, or put back a
restore point picked by name.

The rules are the store's (:mod:`kimi_compact_tui.store.restore`): the default
undoes only what this tool wrote, as its audit log records it; an undo is
not repeated (that would re-apply the compaction); a file changed since the
write is refused unless ``--force``, which keeps it as a restore point first;
a rotation this tool did not make is restored only with ``--point``.
``--list`` shows every restore point and where it came from; ``--dry-run``
says what a restore would do and changes nothing; ``--prune [--keep N]``
removes the oldest restore points this tool made (:mod:`kimi_compact_tui.store.prune`).
The offers and their refusals are the job's (:mod:`kimi_compact_tui.job.offers`).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kimi_compact_tui.commands.common import add_stored_session_arg, add_switches, whole_number
from kimi_compact_tui.commands.jsonout import print_json
from kimi_compact_tui.errors import ApplyError, UserError
from kimi_compact_tui.wording import count

if TYPE_CHECKING:
    from kimi_compact_tui.store import Target

if TYPE_CHECKING:
    from kimi_compact_tui.formats.storage import SessionRef

#: The one-line help of the command (listed by the top-level --help).
HELP = "undo the last compaction written by this tool, or restore a picked version"
#: What ``--help`` of the command says it does.
DESCRIPTION = (
    "Undo the last compaction this tool wrote (as its audit log records it), or put "
    "back a restore point picked with --point. The current version is kept as a "
    "restore point first, unless one with the same bytes exists."
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("restore", help=HELP, description=DESCRIPTION)
    add_stored_session_arg(p)
    p.add_argument("--list", action="store_true", help="list the restore points and exit")
    p.add_argument(
        "--point",
        metavar="NAME",
        default=None,
        help="restore this point (a file name from --list) instead of undoing the last write",
    )
    add_switches(
        p,
        {
            "--force": "undo even though the file changed since the write (it is kept first)",
            "--yes": "do not ask for confirmation",
            "--dry-run": "say which file or rows, which point, and what the current version "
            "loses; change nothing",
            "--prune": "remove the oldest restore points this tool made (from its audit log "
            "only; asks unless --yes; never a file it did not make, nor the copy undo needs)",
        },
    )
    p.add_argument(
        "--keep",
        metavar="N",
        type=whole_number(
            "a number of restore points", lambda n: n >= 0, "must be 0 or more, got {value}"
        ),
        default=None,
        help="with --prune: keep the N newest restore points this tool made (default 1)",
    )
    p.add_argument("--json", action="store_true", help="with --list or --prune: print JSON")


def session_arg(text: str) -> SessionRef | str:
    """SESSION as the store takes it: the session it names (resolved once), a
    path that exists (the store says why it is no session), or a session file
    that is gone but whose restore points remain beside it (they are what
    brings it back). Anything else is one line: there is no such session."""
    from kimi_compact_tui.errors import SessionFormatError
    from kimi_compact_tui.formats.registry import SessionNameError, resolve
    from kimi_compact_tui.store import restore_points

    try:
        return resolve(text)
    except SessionNameError:
        raise
    except SessionFormatError:
        pass
    p = Path(text).expanduser()
    if os.path.lexists(p) or restore_points(p):  # (a missing folder: an ApplyError naming it)
        return text
    raise UserError(f"{p}: no such session file or folder (nor a session id any format knows)")


@dataclass(frozen=True)
class RestoreOptions:
    """``restore``'s options, built from argparse once."""

    session: str
    listing: bool = False
    point: str | None = None
    force: bool = False
    yes: bool = False
    json: bool = False
    dry_run: bool = False
    prune: bool = False
    keep: int | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RestoreOptions:
        return cls(
            session=args.session,
            listing=args.list,
            point=args.point,
            force=args.force,
            yes=args.yes,
            json=args.json,
            dry_run=args.dry_run,
            prune=args.prune,
            keep=args.keep,
        )

    def check(self) -> None:
        """Options that do not go together: one line, before anything is read."""
        if self.keep is not None and not self.prune:
            raise UserError("--keep goes with --prune (how many restore points stay)")
        if self.prune and (self.point is not None or self.listing or self.force):
            raise UserError("--prune goes alone: not with --point, --list or --force")
        if self.json and not (self.listing or self.prune):
            raise UserError("--json goes with --list or --prune")


#: What the command line adds to an offer's refusal (by refusal kind).
FORCE_HINT = {
    "changed_since_write": " — pass --force to keep the current file as a restore point first",
}


def run(args: argparse.Namespace) -> int:
    from kimi_compact_tui.job.offers import carry_out, offer_for
    from kimi_compact_tui.store import locate

    opts = RestoreOptions.from_args(args)
    opts.check()
    target = locate(session_arg(opts.session))  # the session and its format, found once
    if opts.listing:
        return list_points(opts, target)
    if opts.prune:
        return prune_points(opts, target)
    offer = offer_for(target, opts.point)  # an unknown point: said before asking
    if offer.refusal is not None:
        raise offer.refusal.error()
    if opts.dry_run:
        sys.stdout.write("".join(f"{line}\n" for line in offer.dry_run()))
        return 0
    changed = offer.changed_refusal()
    if changed is not None and not opts.force:
        raise ApplyError(changed.message + FORCE_HINT[changed.kind.value])
    if not opts.yes and not confirm(opts, f"{offer.question()}. Restore? [y/N] "):
        sys.stderr.write("Not restored.\n")
        return 0  # the answer was no: nothing failed (as compact --in-place)
    result = carry_out(offer, force=opts.force)
    sys.stdout.write(result.describe() + "\n")
    return 0


def confirm(opts: RestoreOptions, question: str) -> bool:
    """Ask on the terminal (refused in one line when there is none)."""
    if not sys.stdin.isatty():
        what = "not pruned" if opts.prune else "not restored"
        raise UserError(
            f"{opts.session}: {what}: restore asks for confirmation on a terminal and there "
            "is none; pass --yes"
        )
    sys.stderr.write(question)
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def list_points(opts: RestoreOptions, target: Target) -> int:
    """``--list``: every restore point and where it came from; ``*`` marks the undo's."""
    from kimi_compact_tui.store import restore_points, undo_plan

    points = restore_points(target)
    default = None
    try:
        default = undo_plan(target).source
    except ApplyError:
        pass
    if opts.json:
        data = [dict(p.to_json(), default=p.path == default) for p in points]
        print_json({"session": str(target.ref), "points": data})
        return 0
    if not points:
        sys.stdout.write(f"{opts.session}: no restore points\n")
        return 0
    for p in points:
        mark = "*" if p.path == default else " "
        sys.stdout.write(f"{mark} {p.describe()}\n")
    if default is not None:
        sys.stdout.write("(* = what restore without --point undoes to)\n")
    else:
        sys.stdout.write("(nothing to undo: pick a point with --point)\n")
    return 0


def prune_points(opts: RestoreOptions, target: Target) -> int:
    """``--prune``: the plan, the question (unless ``--yes``), then the removal."""
    from kimi_compact_tui.store.prune import DEFAULT_KEEP, prune, prune_plan

    plan = prune_plan(target, DEFAULT_KEEP if opts.keep is None else opts.keep)
    if opts.json and (opts.dry_run or not plan.remove):
        print_json(dict(plan.to_json(), removed=[]))
        return 0
    if not opts.json:
        sys.stdout.write("".join(f"{line}\n" for line in plan.lines()))
    n = len(plan.remove)
    if not plan.remove:
        if not opts.json:
            sys.stdout.write(f"{target.ref}: nothing to prune\n")
        return 0
    if opts.dry_run:
        sys.stdout.write(
            f"would remove {count(n, 'restore point')} ({plan.freed:,} bytes); "
            "nothing was changed (--dry-run)\n"
        )
        return 0
    if not opts.yes and not confirm(
        opts, f"Remove {count(n, 'restore point')} ({plan.freed:,} bytes)? [y/N] "
    ):
        sys.stderr.write("Not pruned.\n")
        return 0
    removed = prune(plan)
    if opts.json:
        print_json(dict(plan.to_json(), removed=[str(p) for p in removed]))
    else:
        sys.stdout.write(f"removed {count(len(removed), 'restore point')} of {target.ref}\n")
    return 0

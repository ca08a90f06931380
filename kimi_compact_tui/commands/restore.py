"""`restore SESSION`: undo the last compaction this tool wrote, or put back a
restore point picked by name.

The rules are the store's (:mod:`kimi_compact_tui.store.restore`): the default
undoes only what this tool wrote, as its audit log records it; an undo is
not repeated (that would re-apply the compaction); a file changed since the
write is refused unless ``--force``, which keeps it as a restore point first;
a rotation this tool did not make is restored only with ``--point``.
``--list`` shows every restore point and where it came from.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kimi_compact_tui.commands.jsonout import print_json
from kimi_compact_tui.errors import ApplyError, UserError

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
    p.add_argument(
        "session",
        metavar="SESSION",
        help="a session file or folder, a session id or its start, or DB#KEY (a session "
        "in a database)",
    )
    p.add_argument("--list", action="store_true", help="list the restore points and exit")
    p.add_argument(
        "--point",
        metavar="NAME",
        default=None,
        help="restore this point (a file name from --list) instead of undoing the last write",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="undo even though the file changed since the write (it is kept first)",
    )
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--json", action="store_true", help="with --list: print JSON")


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


def run(args: argparse.Namespace) -> int:
    from kimi_compact_tui.job.refusals import sample_refusal
    from kimi_compact_tui.store import locate, pick_point, restore, restore_points, undo_plan

    target = locate(session_arg(args.session))  # the session file and its format, found once
    points = restore_points(target)
    if args.list:
        default = None
        try:
            default = undo_plan(target).source
        except ApplyError:
            pass
        if args.json:
            data = [dict(p.to_json(), default=p.path == default) for p in points]
            print_json({"session": str(target.ref), "points": data})
            return 0
        if not points:
            sys.stdout.write(f"{args.session}: no restore points\n")
            return 0
        for p in points:
            mark = "*" if p.path == default else " "
            sys.stdout.write(f"{mark} {p.describe()}\n")
        if default is not None:
            sys.stdout.write("(* = what restore without --point undoes to)\n")
        else:
            sys.stdout.write("(nothing to undo: pick a point with --point)\n")
        return 0
    sample = sample_refusal(target.path)  # a bundled sample is never written, nor restored
    if sample is not None:
        raise sample.error()
    if args.point is None:
        plan = undo_plan(target)  # ApplyError: nothing to undo, said in one line
        if plan.changed_since and not args.force:
            raise ApplyError(
                f"{plan.changed_since}; restoring would drop those changes, so nothing was "
                "changed — pass --force to keep the current file as a restore point first"
            )
        question = plan.describe()
    else:
        point = pick_point(target, args.point)  # not a point: said before asking
        question = (
            f"{point.path.name} ({point.origin}) becomes the live session; the current file "
            "is kept first"
        )
    if not args.yes:
        if not sys.stdin.isatty():
            raise UserError(
                f"{args.session}: not restored: restore asks for confirmation on a terminal "
                "and there is none; pass --yes"
            )
        sys.stderr.write(f"{question}. Restore? [y/N] ")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            sys.stderr.write("Not restored.\n")
            return 0  # the answer was no: nothing failed (as compact --in-place)
    result = restore(target, args.point, force=args.force)
    sys.stdout.write(result.describe() + "\n")
    return 0

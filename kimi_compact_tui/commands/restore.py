"""`restore SESSION`: undo the last apply (put back the newest rotation or backup).

The version being replaced is kept as a new rotation/backup first, so nothing
is lost and running ``restore`` again redoes the apply. ``--list`` shows the
restore points, newest first; ``--point NAME`` picks another one.
"""

from __future__ import annotations

import argparse
import json
import sys

from kimi_compact_tui.apply import restore, restore_points
from kimi_compact_tui.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "restore",
        help="put back the session as it was before the last apply",
        description=(
            "Put back the state before the last apply, from the rotated context_N.jsonl "
            "(kimi-cli sessions) or the .bak- copy (other formats). The current version is "
            "kept as a backup in turn."
        ),
    )
    p.add_argument(
        "session", metavar="SESSION", help="context.jsonl, its folder, or a .json/.jsonl"
    )
    p.add_argument("--list", action="store_true", help="list the restore points and exit")
    p.add_argument(
        "--point",
        metavar="NAME",
        default=None,
        help="restore this point (a file name from --list) instead of the newest",
    )
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--json", action="store_true", help="with --list: print JSON")


def run(args: argparse.Namespace) -> int:
    points = restore_points(args.session)
    if args.list:
        if args.json:
            json.dump([p.to_json() for p in points], sys.stdout, ensure_ascii=False)
            sys.stdout.write("\n")
            return 0
        if not points:
            sys.stdout.write(f"{args.session}: no restore points\n")
            return 0
        for i, p in enumerate(points):
            mark = "*" if i == 0 else " "
            sys.stdout.write(f"{mark} {p.describe()}\n")
        sys.stdout.write("(* = restored by default)\n")
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            raise UserError(
                f"{args.session}: not restored: restore asks for confirmation on a terminal "
                "and there is none; pass --yes"
            )
        chosen = points[0].path.name if (points and args.point is None) else args.point
        sys.stderr.write(f"Restore {args.session} from {chosen}? [y/N] ")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            sys.stderr.write("Not restored.\n")
            return 1
    result = restore(args.session, args.point)
    sys.stdout.write(result.describe() + "\n")
    return 0

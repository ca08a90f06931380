"""`compact` command (not implemented yet)."""

from __future__ import annotations

import argparse

from kimi_compact_tui.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compact", help="(not implemented yet)")
    p.add_argument("rest", nargs=argparse.REMAINDER)


def run(args: argparse.Namespace) -> int:
    raise UserError("the 'compact' command is not implemented yet")

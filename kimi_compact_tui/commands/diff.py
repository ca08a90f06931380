"""`diff A B`: the message-level diff of two sessions (kept, removed, added)
with the token figures before and after — the same diff the TUI shows."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.commands.common import whole_number
from kimi_compact_tui.commands.jsonout import print_json_compact

if TYPE_CHECKING:
    from kimi_compact_tui.diff import SessionDiff

#: The one-line help of the command (listed by the top-level --help).
HELP = "message-level diff of two sessions (kept, removed, added; tokens)"
#: What ``--help`` of the command says it does.
DESCRIPTION = (
    "Compare two sessions message by message: '=' kept, '-' removed, '+' added, "
    "with the message numbers in A and B, the role, estimated tokens and a preview."
)


_context = whole_number("a number of messages", lambda n: n >= 0, "must be 0 or more, got {value}")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("diff", help=HELP, description=DESCRIPTION)
    p.add_argument("before", metavar="A", help="the session before (file or kimi-cli folder)")
    p.add_argument("after", metavar="B", help="the session after (file or kimi-cli folder)")
    p.add_argument("--json", action="store_true", help="print the diff as JSON")
    p.add_argument(
        "--messages",
        action="store_true",
        help="with --json: include each message's full data in its row",
    )
    p.add_argument(
        "--context",
        type=_context,
        metavar="N",
        default=None,
        help="shorten runs of kept messages to their first and last N",
    )


def diff_json(diff: SessionDiff, *, with_messages: bool = False) -> dict[str, Any]:
    """``diff --json``: each row's message numbers in A and B are the 1-based
    numbers the text shows (``before_number``/``after_number``, null on the
    side where the message is not)."""
    data = diff.to_json(with_messages=with_messages)
    for out, row in zip(data["rows"], diff.rows, strict=True):
        del out["before_index"], out["after_index"]
        out["before_number"] = None if row.before_index is None else row.before_index + 1
        out["after_number"] = None if row.after_index is None else row.after_index + 1
    return data


@dataclass(frozen=True)
class DiffOptions:
    """``diff``'s options, built from argparse once."""

    before: str
    after: str
    json: bool = False
    messages: bool = False
    context: int | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> DiffOptions:
        return cls(args.before, args.after, args.json, args.messages, args.context)


def run(args: argparse.Namespace) -> int:
    from kimi_compact_tui.diff import diff_sessions, format_diff
    from kimi_compact_tui.formats import load_session

    opts = DiffOptions.from_args(args)
    before = load_session(opts.before)
    after = load_session(opts.after)
    diff = diff_sessions(before, after)
    if opts.json:
        print_json_compact(diff_json(diff, with_messages=opts.messages))
    else:
        sys.stdout.write(format_diff(diff, context=opts.context))
    return 0

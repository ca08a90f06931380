"""`diff A B`: the message-level diff of two sessions (kept, removed, added)
with the token figures before and after — the same diff the TUI shows."""

from __future__ import annotations

import argparse
import json
import sys

#: The one-line help of the command (listed by the top-level --help).
HELP = "message-level diff of two sessions (kept, removed, added; tokens)"


def _context(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of messages, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "diff",
        help=HELP,
        description=(
            "Compare two sessions message by message: '=' kept, '-' removed, '+' added, "
            "with the message numbers in A and B, the role, estimated tokens and a preview."
        ),
    )
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


def run(args: argparse.Namespace) -> int:
    from kimi_compact_tui.diff import diff_sessions, format_diff
    from kimi_compact_tui.formats import load_session

    before = load_session(args.before)
    after = load_session(args.after)
    diff = diff_sessions(before, after)
    if args.json:
        json.dump(diff.to_json(with_messages=args.messages), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_diff(diff, context=args.context))
    return 0

"""`retention`: which specifics of the compacted range a summary keeps and which it loses."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.commands.common import add_session_args, load_and_prepare
from kimi_compact_tui.commands.jsonout import print_json
from kimi_compact_tui.commands.options import SessionOptions
from kimi_compact_tui.errors import UserError

#: The one-line help of the command (listed by the top-level --help).
HELP = (
    "show which user requests, instructions, open tasks, edited files, commands, "
    "errors... of the compacted range a summary keeps"
)

SUMMARY_STDIN = "-"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kimi_compact_tui.retention import EXIT_RETENTION_SHORTFALL

    p = sub.add_parser(
        "retention",
        help=HELP,
    )
    add_session_args(p)
    p.add_argument(
        "--summary",
        metavar="FILE",
        required=True,
        help="the summary text to score ('-' reads standard input)",
    )
    p.add_argument(
        "--work-dir",
        metavar="DIR",
        default=None,
        help="the work folder absolute paths are relative to (default: inferred)",
    )
    p.add_argument(
        "--min-retention",
        metavar="CATEGORY=PERCENT",
        action="append",
        default=[],
        help=f"exit {EXIT_RETENTION_SHORTFALL} when a category keeps less than PERCENT (repeatable)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def read_summary(name: str) -> str:
    from kimi_compact_tui.fsutil import read_utf8

    if name == SUMMARY_STDIN:
        return sys.stdin.read()
    return read_utf8(Path(name), "summary file", UserError)


@dataclass(frozen=True)
class RetentionOptions:
    """``retention``'s options, built from argparse once."""

    session: SessionOptions
    summary: str
    work_dir: str | None = None
    min_retention: tuple[str, ...] = ()
    json: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RetentionOptions:
        return cls(
            session=SessionOptions.from_args(args),
            summary=args.summary,
            work_dir=args.work_dir,
            min_retention=tuple(args.min_retention),
            json=args.json,
        )


def run(args: argparse.Namespace) -> int:
    from kimi_compact_tui.retention import (
        EXIT_RETENTION_SHORTFALL,
        check_min_retention,
        parse_min_retention,
        retention_report,
    )
    from kimi_compact_tui.sanitize import visible

    opts = RetentionOptions.from_args(args)
    thresholds = [parse_min_retention(t) for t in opts.min_retention]
    summary = read_summary(opts.summary)
    job, prep = load_and_prepare(opts.session)
    session = job.session
    if opts.work_dir is None:
        report = prep.retention(summary)
    else:  # another work folder: paths are read from another root
        report = retention_report(session, prep.plan, summary, work_dir=opts.work_dir)
    shortfalls = check_min_retention(report, thresholds)
    if opts.json:
        out: dict[str, Any] = {"session": str(session.ref)}
        out["summary"] = opts.summary
        out["retention"] = report.to_json()
        out["shortfalls"] = shortfalls
        print_json(out)
    else:
        text = report.to_text()
        sys.stdout.write(visible(text) if sys.stdout.isatty() else text)
    for line in shortfalls:
        print(f"retention below minimum: {line}", file=sys.stderr)
    return EXIT_RETENTION_SHORTFALL if shortfalls else 0

"""`compact`: stream the summary from a provider, then write the compacted session.

The summary streams to stdout as it arrives; the model's reasoning goes to
stderr (dimmed on a terminal). The compacted session is written to
``--output`` only when the summary is complete (or truncated, with
``--allow-truncated``). Exit codes: 0 complete or no-op, 3 provider failure or
truncation, 130 cancelled, 2 bad input.

The command is this package, one module for each thing it does:

- :mod:`.run`: the run itself (load, plan, check, stream, draft; ``--anchor``);
- :mod:`.output`: what it prints while it runs, and its JSON result;
- :mod:`.write`: where and how it writes (``--output``, ``--in-place``);
- this module: the options, the order of the steps, the verdict and the exit code.

``--from-summary`` and ``--revise`` (shared with ``preview`` and ``probe``) are
:mod:`kimi_compact_tui.commands.rounds`. Light at import: the engine loads
when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kimi_compact_tui.commands.common import add_provider_args, add_session_args
from kimi_compact_tui.commands.compact.output import (
    Printer,
    json_result,
    nothing_written,
    starter,
    warn_growth,
)
from kimi_compact_tui.commands.compact.run import CompactionRun, anchored_run, run_compaction
from kimi_compact_tui.commands.compact.write import output_target, write_in_place, write_output
from kimi_compact_tui.commands.jsonout import print_json
from kimi_compact_tui.commands.rounds import add_revise_args, check_rounds
from kimi_compact_tui.errors import ProviderFailure, RetentionShortfall, UserError
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.wording import count, noop_line, number

#: The one-line help of the command (listed by the top-level --help).
HELP = "stream the summary from a provider and write the compacted session"
#: What ``--help`` of the command says it does.
DESCRIPTION = (
    "Stream the compaction summary to the terminal as it arrives, then write the "
    "compacted session to --output when the summary is complete. With no provider "
    "configured the summary is extracted offline (no model writes it)."
)

EXIT_OK = 0
EXIT_PROVIDER = 3
EXIT_CANCELLED = 130


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kimi_compact_tui.retention.anchor import DEFAULT_ANCHOR_BUDGET

    p = sub.add_parser("compact", help=HELP, description=DESCRIPTION)
    add_session_args(p, instructions=True)
    add_provider_args(p)
    add_revise_args(p, alone=True)
    p.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        default=None,
        help="write the compacted session to this new file (never over the source; "
        "see --in-place)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="with --output: replace the file if it exists (never the session itself)",
    )
    p.add_argument(
        "--in-place",
        action="store_true",
        help="write over the source after the summary completes (backup or rotation first; "
        "asks for confirmation on a terminal)",
    )
    p.add_argument("--yes", "-y", action="store_true", help="with --in-place: do not ask")
    p.add_argument(
        "--min-retention",
        metavar="CATEGORY=PERCENT",
        action="append",
        default=[],
        help="refuse to write (exit 4) when the summary keeps less of a category "
        "(see `retention`); repeatable",
    )
    p.add_argument(
        "--anchor",
        action="store_true",
        help="append to the summary the exact references it lost (requests, instructions, "
        "open tasks, edited files, errors, commands, paths), as one marked block",
    )
    p.add_argument(
        "--anchor-budget",
        metavar="TOKENS",
        type=int,
        default=DEFAULT_ANCHOR_BUDGET,
        help=f"the anchor block's size (default {DEFAULT_ANCHOR_BUDGET} tokens)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument(
        "--allow-split",
        action="store_true",
        help="with --in-place: write even when the boundary cuts a tool call off from its "
        "result (the agent's API may then reject the session)",
    )
    p.add_argument(
        "--allow-truncated",
        action="store_true",
        help="write a summary cut off at the model's output limit anyway",
    )


def run(args: argparse.Namespace) -> int:
    from kimi_compact_tui.formats.loader import dump_session
    from kimi_compact_tui.retention import (
        check_min_retention,
        parse_min_retention,
        retention_report,
    )

    output = output_target(args)  # an existing file or the session itself: before anything
    if args.in_place and args.output:
        raise UserError("--in-place and --output cannot be used together")
    if args.in_place and args.allow_truncated:
        raise UserError("--in-place writes only a complete summary; drop --allow-truncated")
    if args.in_place and not args.yes and not sys.stdin.isatty():
        raise UserError(
            f"{args.session}: --in-place asks for confirmation on a terminal and there is "
            "none; pass --yes to write without asking"
        )
    thresholds = [parse_min_retention(t) for t in args.min_retention]  # bad input: before any run
    if args.anchor:
        from kimi_compact_tui.retention.anchor import check_budget

        check_budget(args.anchor_budget)
    rounds = check_rounds(args, alone=True)
    if rounds is not None and rounds.given_only and args.instructions:
        raise UserError(
            "--instructions needs a model call; --from-summary alone writes the summary "
            "as it is (add --revise TEXT to have it revised)"
        )
    printer = None if args.json else Printer()
    run_ = run_compaction(
        args,
        on_event=printer,
        allow_truncated=args.allow_truncated,
        on_start=starter(args, rounds),
        rounds=rounds,
    )
    if args.anchor:
        run_ = anchored_run(run_, args.anchor_budget, args.allow_truncated)
    result = run_.result
    if printer is not None:
        printer.finish()
    written: Path | None = None
    report = None
    if run_.draft is not None:
        warn_growth(run_.draft)
    if run_.draft is not None and (args.json or args.min_retention):
        report = retention_report(run_.session, run_.plan, run_.draft.summary)
        shortfalls = check_min_retention(report, thresholds)
        if shortfalls:
            if args.json:
                print_json(dict(json_result(run_, None), retention=report.to_json()))
            raise RetentionShortfall(
                f"{run_.session.ref or run_.session.path}: not written: the summary keeps too little "
                f"({'; '.join(shortfalls)})"
            )
    if run_.draft is not None and args.in_place and result is not None:
        if result.status == "complete":
            applied = write_in_place(args, run_)
            if applied is not None:  # write_in_place has said what it wrote
                written = applied.path
    elif run_.compacted is not None and output is not None:
        assert run_.session.path is not None
        write_output(
            dump_session(run_.compacted), output, Path(run_.session.path), force=args.force
        )
        written = output

    if args.json:
        data = json_result(run_, written)
        data["retention"] = report.to_json() if report is not None else None
        print_json(data)
        if result is not None and result.error and result.status != "complete":
            print(f"kimi-compact-tui: {result.status}: {result.error}", file=sys.stderr)
        return _exit_code(run_)

    err = sys.stderr
    if result is None:
        print(f"{noop_line(run_.plan.noop or '')}; {nothing_written(args)}", file=err)
        return EXIT_OK
    # An offline run said "no model wrote this summary" when it started: once is enough.
    where = "offline extraction" if result.offline else f"{result.provider} {result.model or ''}"
    if rounds is not None and rounds.given_only:
        where = "summary given, no model call"
    where = where.strip()
    if result.status == "complete":
        if written is not None:
            n_before = len(run_.session.messages)
            n_after = len(run_.compacted.messages) if run_.compacted else 0
            print(
                f"complete ({where}): wrote {written} ({count(n_before, 'message')} → {number(n_after)})",
                file=err,
            )
        elif args.in_place:
            print(f"complete ({where}); not written (declined)", file=err)
        else:
            if args.anchor and run_.draft is not None and not args.json:
                # The final summary, before any write: the model's text streamed
                # already, so only what --anchor added to it follows.
                final, streamed = run_.draft.summary, result.summary
                rest = final[len(streamed) :] if final.startswith(streamed) else "\n" + final
                sys.stdout.write(visible(rest) if sys.stdout.isatty() else rest)
            print(f"complete ({where}); no --output given, nothing written", file=err)
        return EXIT_OK
    if result.status == "truncated":
        if written is not None:
            print(f"truncated ({where}): written anyway to {written} (--allow-truncated)", file=err)
            return EXIT_OK
        raise ProviderFailure(
            "the summary was truncated at the model's output limit; nothing written "
            "(pass --allow-truncated to write it anyway)"
        )
    if result.status == "cancelled":
        print("cancelled; nothing written", file=err)
        return EXIT_CANCELLED
    raise ProviderFailure(f"{result.error or 'the provider failed'}; nothing written")


def _exit_code(run_: CompactionRun) -> int:
    status = run_.status
    if status in ("noop", "complete"):
        return EXIT_OK
    if status == "cancelled":
        return EXIT_CANCELLED
    if status == "truncated" and run_.compacted is not None:
        return EXIT_OK
    return EXIT_PROVIDER

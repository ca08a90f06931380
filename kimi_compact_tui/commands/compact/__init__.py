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
- :mod:`.options`: ``CompactOptions``, the options built from argparse once;
- this module: the flags, the order of the steps, the verdict and the exit code.

``--from-summary`` and ``--revise`` (shared with ``preview`` and ``probe``) are
:mod:`kimi_compact_tui.commands.rounds`. Light at import: the engine loads
when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.commands.common import add_provider_args, add_session_args, add_switches
from kimi_compact_tui.commands.compact.options import CompactOptions
from kimi_compact_tui.commands.compact.output import (
    Printer,
    json_result,
    nothing_written,
    starter,
    warn_growth,
)
from kimi_compact_tui.commands.compact.run import CompactionRun, anchored_run, run_compaction
from kimi_compact_tui.commands.compact.write import (
    keep_for_the_grown_session,
    output_target,
    write_in_place,
    write_output,
)
from kimi_compact_tui.commands.jsonout import print_json
from kimi_compact_tui.commands.rounds import Rounds, add_revise_args, check_rounds
from kimi_compact_tui.errors import ApplyError, ProviderFailure, RetentionShortfall, UserError
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.wording import count, noop_line, number

if TYPE_CHECKING:
    from kimi_compact_tui.formats.storage import SessionRef

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
    from kimi_compact_tui.limits import DEFAULT_ANCHOR_BUDGET

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
    add_switches(
        p,
        {
            "--force": "with --output: replace the file if it exists (never the session itself)",
            "--in-place": "write over the source after the summary completes (backup or "
            "rotation first; asks for confirmation on a terminal)",
            "--yes -y": "with --in-place: do not ask",
        },
    )
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
    add_switches(
        p,
        {
            "--repair": "add what the agent's latest own summary lost (the anchor block) into "
            "that summary, in place, after showing it (docs/hooks.md)",
            "--json": "print the result as one JSON object",
            "--allow-split": "with --in-place: write even when the boundary cuts a tool call "
            "off from its result (the agent's API may then reject the session)",
            "--allow-truncated": "write a summary cut off at the model's output limit anyway",
        },
    )


def run(args: argparse.Namespace) -> int:
    """The command, as its steps."""
    opts = CompactOptions.from_args(args)
    if opts.repair:  # the agent's own summary, repaired in place (commands/repair.py)
        from kimi_compact_tui.commands.repair import run_repair

        return run_repair(opts)
    checked = check_options(opts)  # every bad option: one line, before anything is loaded
    printer = None if opts.json else Printer()
    run_ = run_compaction(
        opts, on_event=printer, on_start=starter(opts, checked.rounds), rounds=checked.rounds
    )
    if opts.anchor:
        run_ = anchored_run(run_, opts.anchor_budget, opts.allow_truncated)
    if printer is not None:
        printer.finish()
    if run_.draft is not None:
        warn_growth(run_.draft)
    report = check_retention(opts, run_, checked.thresholds)  # exit 4 before any write
    written = write(opts, run_, checked.output)
    if opts.json:
        return print_json_result(run_, written, report)
    return verdict(opts, run_, written, checked.rounds)


@dataclass(frozen=True)
class Checked:
    """What the options give once checked: the ``--output`` file, the
    ``--min-retention`` thresholds and the rounds of ``--from-summary``/``--revise``."""

    output: Path | None
    thresholds: list[Any]
    rounds: Rounds | None


def check_options(opts: CompactOptions) -> Checked:
    """The options checked together, before anything is loaded or requested."""
    from kimi_compact_tui.retention import parse_min_retention

    output = output_target(opts)  # an existing file or the session itself: before anything
    if opts.in_place and opts.output:
        raise UserError("--in-place and --output cannot be used together")
    if opts.in_place and opts.allow_truncated:
        raise UserError("--in-place writes only a complete summary; drop --allow-truncated")
    if opts.in_place and not opts.yes and not sys.stdin.isatty():
        raise UserError(
            f"{opts.session.session}: --in-place asks for confirmation on a terminal and "
            "there is none; pass --yes to write without asking"
        )
    thresholds = [parse_min_retention(t) for t in opts.min_retention]
    if opts.anchor:
        from kimi_compact_tui.retention.anchor import check_budget

        check_budget(opts.anchor_budget)
    rounds = check_rounds(opts.from_summary, opts.revise, alone=True)
    return Checked(output, thresholds, rounds)


def check_retention(opts: CompactOptions, run_: CompactionRun, thresholds: list[Any]) -> Any:
    """The retention report (for ``--json`` or ``--min-retention``; else None);
    a summary that keeps too little of a category is refused (exit 4)."""
    from kimi_compact_tui.retention import check_min_retention

    if run_.draft is None or not (opts.json or opts.min_retention):
        return None
    report = run_.preparation.retention(run_.draft.summary)
    shortfalls = check_min_retention(report, thresholds)
    if shortfalls:
        if opts.json:
            print_json(dict(json_result(run_, None), retention=report.to_json()))
        raise RetentionShortfall(
            f"{run_.session.ref}: not written: the summary keeps too "
            f"little ({'; '.join(shortfalls)})"
        )
    return report


def write(
    opts: CompactOptions, run_: CompactionRun, output: Path | None
) -> Path | SessionRef | None:
    """Write the draft in place, or the compacted session to ``--output``;
    the path written, or None."""
    from kimi_compact_tui.formats.loader import dump_session

    result = run_.result
    if run_.draft is not None and opts.in_place and result is not None:
        if result.status != "complete":
            return None
        try:
            applied = write_in_place(opts, run_)  # says what it wrote
        except ApplyError as exc:  # the agent went on meanwhile: keep what still holds
            kept = keep_for_the_grown_session(opts, run_)
            raise exc if kept is None else ApplyError(kept) from None
        return applied.ref if applied is not None else None
    if run_.compacted is not None and output is not None:
        assert run_.session.path is not None
        data = dump_session(run_.compacted)
        write_output(data, output, Path(run_.session.path), force=opts.force)
        return output
    return None


def print_json_result(run_: CompactionRun, written: Path | SessionRef | None, report: Any) -> int:
    """``--json``: the result as one object; the exit code."""
    result = run_.result
    data = json_result(run_, written)
    data["retention"] = report.to_json() if report is not None else None
    print_json(data)
    if result is not None and result.error and result.status != "complete":
        print(f"kimi-compact-tui: {result.status}: {result.error}", file=sys.stderr)
    return _exit_code(run_)


def verdict(
    opts: CompactOptions,
    run_: CompactionRun,
    written: Path | SessionRef | None,
    rounds: Rounds | None,
) -> int:
    """What happened, in one line on stderr; the exit code (raises for a failure)."""
    err = sys.stderr
    result = run_.result
    if result is None:
        print(f"{noop_line(run_.plan.noop or '')}; {nothing_written(opts)}", file=err)
        return EXIT_OK
    # An offline run said "no model wrote this summary" when it started: once is enough.
    where = "offline extraction" if result.offline else f"{result.provider} {result.model or ''}"
    if rounds is not None and rounds.given_only:
        where = "summary given, no model call"
    where = where.strip()
    if result.status == "complete":
        complete(opts, run_, written, where)
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


def complete(
    opts: CompactOptions, run_: CompactionRun, written: Path | SessionRef | None, where: str
) -> None:
    """The line for a complete summary: where it was written, or why not."""
    err = sys.stderr
    result = run_.result
    assert result is not None
    if written is not None:
        n_before = len(run_.session.messages)
        n_after = len(run_.compacted.messages) if run_.compacted else 0
        print(
            f"complete ({where}): wrote {written} ({count(n_before, 'message')} → "
            f"{number(n_after)})",
            file=err,
        )
    elif opts.in_place:
        print(f"complete ({where}); not written (declined)", file=err)
    else:
        if opts.anchor and run_.draft is not None:
            # The final summary, before any write: the model's text streamed
            # already, so only what --anchor added to it follows.
            final, streamed = run_.draft.summary, result.summary
            rest = final[len(streamed) :] if final.startswith(streamed) else "\n" + final
            sys.stdout.write(visible(rest) if sys.stdout.isatty() else rest)
        print(f"complete ({where}); no --output given, nothing written", file=err)


def _exit_code(run_: CompactionRun) -> int:
    status = run_.status
    if status in ("noop", "complete"):
        return EXIT_OK
    if status == "cancelled":
        return EXIT_CANCELLED
    if status == "truncated" and run_.compacted is not None:
        return EXIT_OK
    return EXIT_PROVIDER

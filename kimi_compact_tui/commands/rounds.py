"""``--from-summary`` and ``--revise``, for ``compact`` and ``preview``.

A round is a summary and the feedback on it. On the command line, rounds are
pairs of the two options in the order given: the first ``--from-summary``
goes with the first ``--revise``, the second with the second, and so on; the
last pair is the one revised now, the earlier ones are the history the model
is shown (``--from-summary s1.md --revise "keep X" --from-summary s2.md
--revise "add the failing test"``). Each summary is a file (``-``: standard
input, once), as ``retention --summary`` reads it. ``--from-summary`` alone
(one, with no ``--revise``) is a summary written as it is.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.fsutil import read_utf8

if TYPE_CHECKING:  # the engine loads when a command runs, not for --help
    from kimi_compact_tui.compaction.request import RevisionRound

STDIN = "-"


@dataclass(frozen=True)
class Rounds:
    """What the two options asked for: the summaries (with their names) and
    the feedback, paired in order."""

    names: list[str]
    summaries: list[str]
    feedback: list[str]

    @property
    def given_only(self) -> bool:
        """``--from-summary`` alone: a summary to write as it is."""
        return bool(self.summaries) and not self.feedback

    def rounds(self) -> list[RevisionRound]:
        """The revision rounds, oldest first."""
        from kimi_compact_tui.compaction.request import RevisionRound

        return [RevisionRound(s, f) for s, f in zip(self.summaries, self.feedback, strict=True)]

    @property
    def label(self) -> str:
        """What stderr says before the run."""
        if self.given_only:
            return f"the summary in {self.where(0)}, as it is (no model call)"
        n = len(self.feedback)
        return f"a revision of the summary in {self.where(n - 1)} (round {n})"

    def where(self, i: int) -> str:
        return "standard input" if self.names[i] == STDIN else self.names[i]


def add_revise_args(p: argparse.ArgumentParser, *, alone: bool) -> None:
    """The two options (``alone``: ``--from-summary`` without ``--revise``
    means something, as it does for ``compact``)."""
    what = (
        "a summary to write as it is (no model call), or with --revise the summary "
        "to revise; '-' reads standard input. Repeat it with --revise for earlier rounds"
        if alone
        else "the summary to revise ('-' reads standard input); repeat it with --revise "
        "for earlier rounds"
    )
    p.add_argument(
        "--from-summary",
        metavar="FILE",
        action="append",
        default=[],
        dest="from_summary",
        help=what,
    )
    p.add_argument(
        "--revise",
        metavar="TEXT",
        action="append",
        default=[],
        help="feedback on the --from-summary given in the same position: the model revises "
        "that summary (the compaction request, then the summary and the feedback); repeatable",
    )


def read_summary(name: str) -> str:
    if name == STDIN:
        return sys.stdin.read()
    return read_utf8(Path(name).expanduser(), "summary file", UserError)


def check_rounds(
    from_summary: Sequence[str], revise: Sequence[str], *, alone: bool
) -> Rounds | None:
    """The options (``--from-summary`` and ``--revise``, as given) checked
    (one line, exit 2, before anything is loaded) and the summaries read;
    None when neither option was given."""
    names: list[str] = list(from_summary)
    feedback: list[str] = list(revise)
    if not names and not feedback:
        return None
    if feedback and not names:
        raise UserError("--revise needs --from-summary FILE: the summary to revise")
    if not feedback and not alone:
        raise UserError(
            "--from-summary needs --revise TEXT here: preview shows the revision request "
            "(a summary written as it is sends none)"
        )
    if not feedback and len(names) > 1:
        raise UserError(
            f"--from-summary given {times(len(names))} with no --revise: give one summary "
            "to write, or a --revise for each"
        )
    if feedback and len(names) != len(feedback):
        raise UserError(
            f"--from-summary given {times(len(names))} and --revise {times(len(feedback))}: each "
            "round is a summary and the feedback on it, paired in the order given"
        )
    if names.count(STDIN) > 1:
        raise UserError("--from-summary -: standard input can be read once")
    for name in names:
        if not name.strip():
            raise UserError("--from-summary is empty; give a file")
    for i, text in enumerate(feedback, 1):
        if not text.strip():
            raise UserError(f"--revise is empty (round {i}): say what to change")
    summaries = []
    for name in names:
        text = read_summary(name)
        if not text.strip():
            where = "standard input" if name == STDIN else name
            raise UserError(f"{where}: the summary is empty")
        summaries.append(text)
    return Rounds(names, summaries, feedback)


def times(n: int) -> str:
    """How often an option was given, in words: "once", "3 times"."""
    return "once" if n == 1 else f"{n} times"


def dropped_note(dropped: int) -> str:
    """The one line said when the oldest rounds were left out of a revision."""
    rounds = "round" if dropped == 1 else "rounds"
    return (
        f"the {dropped} oldest revision {rounds} left out: the request would not fit "
        "the model's context (the latest summary and feedback are always sent)"
    )

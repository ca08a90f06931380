"""`probe`: ask a model what the agent will still know after a compaction.

Light at import (``argparse`` only): the engine is imported when the command
runs.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kimi_compact_tui.commands.options import ProviderOptions, SessionOptions

if TYPE_CHECKING:
    from kimi_compact_tui.job.probe import ProbePlan

MAX_QUESTIONS = 100  # the engine's limit too (job.probe.questions.MAX_QUESTIONS)
DEFAULT_QUESTIONS = 10

#: The one-line help of the command (listed by the top-level --help).
HELP = "ask a model questions about the compacted messages, with only the summary"
#: What ``--help`` of the command says it does.
DESCRIPTION = (
    "Ask a model questions whose answers are in the compacted messages, each in its "
    "own request holding only what the agent keeps (the leading system messages, "
    "the summary, the kept tail), and grade the answers. Needs a model: the offline "
    "provider cannot answer."
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kimi_compact_tui.commands.common import add_provider_args, add_session_args, whole_number

    question_count = whole_number(
        "a number of questions",
        lambda n: 1 <= n <= MAX_QUESTIONS,
        f"the number of questions must be from 1 to {MAX_QUESTIONS}, got {{text!r}}",
    )

    p = sub.add_parser("probe", help=HELP, description=DESCRIPTION)
    add_session_args(p)
    add_provider_args(p)
    p.add_argument(
        "--summary",
        metavar="FILE",
        required=True,
        help="the summary to probe ('-' reads standard input)",
    )
    p.add_argument(
        "--questions",
        metavar="N",
        type=question_count,
        default=DEFAULT_QUESTIONS,
        help=f"ask at most N questions (default {DEFAULT_QUESTIONS}, at most {MAX_QUESTIONS})",
    )
    p.add_argument("--json", action="store_true", help="print the questions and score as JSON")


@dataclass(frozen=True)
class ProbeOptions:
    """``probe``'s options, built from argparse once."""

    session: SessionOptions
    provider: ProviderOptions
    summary: str
    questions: int = DEFAULT_QUESTIONS
    json: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ProbeOptions:
        return cls(
            session=SessionOptions.from_args(args),
            provider=ProviderOptions.from_args(args),
            summary=args.summary,
            questions=args.questions,
            json=args.json,
        )


def run(args: argparse.Namespace) -> int:
    import sys

    from kimi_compact_tui.commands.common import load_and_prepare, provider_config, refusal_error
    from kimi_compact_tui.commands.jsonout import print_json
    from kimi_compact_tui.commands.rounds import STDIN, read_summary
    from kimi_compact_tui.errors import ProviderFailure, UserError
    from kimi_compact_tui.job import Refusal, probe_summary
    from kimi_compact_tui.sanitize import visible

    opts = ProbeOptions.from_args(args)
    summary = read_summary(opts.summary)
    if not summary.strip():
        where = "standard input" if opts.summary == STDIN else opts.summary
        raise UserError(f"{where}: the summary is empty")
    job, prep = load_and_prepare(opts.session, opts.provider)
    pcfg = provider_config(job.config, opts.provider)

    def announce(probe: ProbePlan) -> None:
        if not probe.questions:
            print(
                "probe: no questions: the compacted messages hold no request, task, edited "
                "file, command, error or decision that the kept messages do not already hold",
                file=sys.stderr,
            )
        else:
            print(f"probe: sending {probe.describe()} to {pcfg.describe()}", file=sys.stderr)
        sys.stderr.flush()
        planned.append(probe)

    planned: list[ProbePlan] = []
    report = probe_summary(job, prep, summary, pcfg, limit=opts.questions, on_plan=announce)
    if isinstance(report, Refusal):  # the job's refusal, as it words it: nothing was sent
        raise refusal_error(report)
    probe = planned[0]
    out = sys.stdout
    if opts.json:
        data = {
            "session": str(job.session.ref),
            "summary": opts.summary,
            "provider": pcfg.kind,
            "model": probe.bodies[0].get("model") if probe.bodies else None,
            "requests": len(probe.bodies),
            "estimated_tokens": probe.estimated_tokens,
        }
        data.update(report.to_json())
        print_json(data)
    elif probe.questions:
        out.write((visible if out.isatty() else str)(report.to_text()))
    failed = report.failed
    if failed:
        first = failed[0]
        raise ProviderFailure(
            f"{len(failed)} of {len(report.answers)} probe requests failed "
            f"(question {first.question.number}: {first.error})"
        )
    return 0

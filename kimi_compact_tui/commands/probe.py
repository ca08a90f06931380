"""`probe`: ask a model what the agent will still know after a compaction.

Light at import (``argparse`` only): the engine is imported when the command
runs.
"""

from __future__ import annotations

import argparse

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


def run(args: argparse.Namespace) -> int:
    import sys

    from kimi_compact_tui.commands.common import load_and_prepare, provider_config, refuse
    from kimi_compact_tui.commands.jsonout import print_json
    from kimi_compact_tui.commands.rounds import STDIN, read_summary
    from kimi_compact_tui.config import _get_compaction_config
    from kimi_compact_tui.errors import ProviderFailure, UserError
    from kimi_compact_tui.job import RefusalKind
    from kimi_compact_tui.job.prepare import specifics_of
    from kimi_compact_tui.job.probe import plan_probe
    from kimi_compact_tui.job.probe import run as ask_all
    from kimi_compact_tui.sanitize import visible

    summary = read_summary(args.summary)
    if not summary.strip():
        where = "standard input" if args.summary == STDIN else args.summary
        raise UserError(f"{where}: the summary is empty")
    job, prep = load_and_prepare(args)
    pcfg = provider_config(job.config, args)
    if pcfg.offline:
        raise UserError(
            "the offline provider cannot answer questions: probe needs a model "
            "(--provider KIND with --model, or a provider block in the config)"
        )
    wanted = (RefusalKind.NOTHING_TO_COMPACT, RefusalKind.NO_MODEL, RefusalKind.NO_KEY)
    ready = job.readiness(prep, pcfg)
    refuse(ready.of(*wanted))
    session, plan = job.session, prep.plan
    probe = plan_probe(
        session,
        plan,
        summary,
        specifics_of(session, plan)(),
        _get_compaction_config(job.config.raw),
        model=prep.compaction_model,
        base_model=job.base_model,
        limit=args.questions,
    )
    out = sys.stdout
    show = visible if out.isatty() else str
    if not probe.questions:
        print(
            "probe: no questions: the compacted messages hold no request, task, edited "
            "file, command, error or decision that the kept messages do not already hold",
            file=sys.stderr,
        )
    else:
        print(f"probe: sending {probe.describe()} to {pcfg.describe()}", file=sys.stderr)
        sys.stderr.flush()
    report = ask_all(probe, pcfg)
    if args.json:
        data = {
            "session": str(session.ref),
            "summary": args.summary,
            "provider": pcfg.kind,
            "model": probe.bodies[0].get("model") if probe.bodies else None,
            "requests": len(probe.bodies),
            "estimated_tokens": probe.estimated_tokens,
        }
        data.update(report.to_json())
        print_json(data)
    elif probe.questions:
        out.write(show(report.to_text()))
    failed = report.failed
    if failed:
        first = failed[0]
        raise ProviderFailure(
            f"{len(failed)} of {len(report.answers)} probe requests failed "
            f"(question {first.question.number}: {first.error})"
        )
    return 0

"""`preview`: the exact request that would be sent (never a key, never tools)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.commands.common import (
    add_provider_args,
    add_session_args,
    load_and_prepare,
    provider_config,
    write_split_lines,
)
from kimi_compact_tui.commands.jsonout import print_json
from kimi_compact_tui.commands.options import ProviderOptions, SessionOptions
from kimi_compact_tui.commands.rounds import (
    Rounds,
    add_revise_args,
    check_rounds,
    dropped_note,
)
from kimi_compact_tui.wording import number

if TYPE_CHECKING:
    from kimi_compact_tui.job import CompactionJob, Preparation, Readiness
    from kimi_compact_tui.job.window import Window
    from kimi_compact_tui.providers import ProviderConfig

#: The one-line help of the command (listed by the top-level --help).
HELP = "show the exact compaction request body"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("preview", help=HELP)
    add_session_args(p, instructions=True)
    add_provider_args(p)
    add_revise_args(p, alone=False)
    p.add_argument(
        "--json",
        action="store_true",
        help='print the request as JSON: its body (what is POSTed) under "body"',
    )


def not_enabled_line(prep: Preparation) -> str:
    return (
        f"NOT ENABLED  compaction is not enabled: {prep.disabled_reason}. The request "
        "below would not be sent; compact and the TUI refuse\n"
    )


def model_line(model: str | None, pcfg: ProviderConfig) -> str:
    """The request model, or why there is none (never ``None``)."""
    if model:
        return f"model    {model}\n"
    if pcfg.offline:
        return "model    none: the offline extractive summarizer writes the summary, no model\n"
    return (
        f"model    not configured: the {pcfg.kind} provider needs one (provider.model or "
        "compaction_model in the config, or --model); compact refuses without it\n"
    )


def window_line(window: Window, need: int, room: int) -> str:
    """The model's context window, and whether the request fits it (an unknown one is said)."""
    if window.tokens is None:
        return f"window   unknown ({window.source}): the request is not checked against it\n"
    fits = "fits" if need + room <= window.tokens else "does NOT fit"
    return (
        f"window   {window.tokens:,} tokens ({window.source}): the request (~{need:,}) and "
        f"{room:,} kept for the summary {fits}\n"
    )


def preview_json(
    prep: Preparation,
    body: dict[str, Any] | None,
    ready: Readiness,
    rounds: Rounds | None = None,
    window: Window | None = None,
) -> dict[str, Any]:
    """``preview --json``: the request body exactly as POSTed (None for a
    no-op), beside what decides whether it is sent: the job's refusals. With
    ``--revise``: ``"kind": "revision"`` and what ``revision`` holds (the
    rounds asked for, sent and left out)."""
    data: dict[str, Any] = {
        "session": str(prep.session.ref),
        "kind": "revision" if rounds is not None else "compaction",
        "noop": prep.plan.noop,
        "enabled": prep.enabled,
        "disabled_reason": prep.disabled_reason,
        "refusals": [{"kind": r.kind.value, "message": r.message} for r in ready.refusals],
        # The model's context window (null: the offline provider, no model).
        "context_window": window.to_json() if window is not None else None,
    }
    if rounds is not None:
        request = prep.request
        data["revision"] = {
            "from_summary": rounds.names[-1],
            "rounds": len(rounds.feedback),
            "rounds_sent": len(request.revisions) if request is not None else 0,
            "dropped": request.dropped_rounds if request is not None else 0,
        }
    data["body"] = body
    return data


def refused_lines(ready: Readiness) -> str:
    """The job's other refusals: the request below would not be sent (those the
    text view says in its own lines already left out)."""
    from kimi_compact_tui.job import RefusalKind

    shown = (RefusalKind.NOTHING_TO_COMPACT, RefusalKind.DISABLED)
    return "".join(
        f"NOT SENT {r.message}; compact and the TUI refuse\n"
        for r in ready.refusals
        if r.kind not in shown
    )


def revision_lines(prep: Preparation, rounds: Rounds, show: Any) -> str:
    """The label of a revision request: what is revised, the rounds sent and
    any left out."""
    request = prep.request
    assert request is not None
    n = len(rounds.feedback)
    sent = len(request.revisions)
    text = (
        f"REVISION of the summary in {show(rounds.where(n - 1))}: the compaction request "
        f"below, then {sent} round{'' if sent == 1 else 's'} of summary and feedback "
        "(not the spec's two-message request)\n"
    )
    if request.dropped_rounds:
        text += f"NOTE     {dropped_note(request.dropped_rounds)}\n"
    return text


@dataclass(frozen=True)
class PreviewOptions:
    """``preview``'s options, built from argparse once."""

    session: SessionOptions
    provider: ProviderOptions
    json: bool = False
    from_summary: tuple[str, ...] = ()
    revise: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> PreviewOptions:
        return cls(
            session=SessionOptions.from_args(args, instructions=True),
            provider=ProviderOptions.from_args(args),
            json=args.json,
            from_summary=tuple(args.from_summary),
            revise=tuple(args.revise),
        )


def run(args: argparse.Namespace) -> int:
    """The command, as its steps."""
    opts = PreviewOptions.from_args(args)
    # bad options: before anything is loaded
    rounds = check_rounds(opts.from_summary, opts.revise, alone=False)
    job, prep = load_and_prepare(opts.session, opts.provider)
    pcfg = provider_config(job.config, opts.provider)
    if rounds is not None:
        from kimi_compact_tui.job.revise import revise

        # The request a model is sent (the offline provider, which has no
        # model, is told the feedback as instructions instead).
        prep = revise(prep, rounds.rounds(), None if pcfg.offline else pcfg)
    ready, window = what_compact_refuses(job, prep, pcfg)
    if opts.json:
        print_preview_json(prep, ready, rounds, window)
    elif prep.request is None:
        if not prep.enabled:
            sys.stdout.write(not_enabled_line(prep))
        sys.stdout.write(f"NO-OP: {prep.plan.noop}\nNothing would be sent.\n")
    else:
        write_preview(job, prep, pcfg, ready, rounds, window)
    return 0


def what_compact_refuses(
    job: CompactionJob, prep: Preparation, pcfg: ProviderConfig
) -> tuple[Readiness, Window | None]:
    """The job's refusals before the request (with a request too large for the
    model's known window), and the window (None: the offline provider)."""
    from kimi_compact_tui.job import Readiness

    ready = job.readiness(prep)
    window = None if pcfg.offline else job.window(prep, pcfg)
    if window is not None and prep.request is not None:
        too_large = job.window_refusal(prep, pcfg)
        if too_large is not None:
            ready = Readiness((*ready.refusals, too_large))
    return ready, window


def print_preview_json(
    prep: Preparation, ready: Readiness, rounds: Rounds | None, window: Window | None
) -> None:
    body = prep.request.body if prep.request is not None else None
    print_json(preview_json(prep, body, ready, rounds, window))
    if body is not None and not prep.enabled:
        print(
            f"kimi-compact-tui: note: compaction is not enabled: {prep.disabled_reason}; "
            "this request would not be sent",
            file=sys.stderr,
        )


def write_preview(
    job: CompactionJob,
    prep: Preparation,
    pcfg: ProviderConfig,
    ready: Readiness,
    rounds: Rounds | None,
    window: Window | None,
) -> None:
    """The text preview: what decides whether it is sent, then the request."""
    from kimi_compact_tui.sanitize import visible

    request = prep.request
    assert request is not None
    body = request.body
    show = visible if sys.stdout.isatty() else (lambda s: s)  # keep controls out of a terminal
    w = sys.stdout.write
    tokens = prep.token_figures()
    if not prep.enabled:
        w(not_enabled_line(prep))
    w(refused_lines(ready))
    w(model_line(body.get("model"), pcfg))
    w(f"provider {pcfg.describe()}\n")
    if window is not None:
        w(window_line(window, tokens["request_estimated"] or 0, job.output_room()))
    if rounds is not None:
        w(revision_lines(prep, rounds, show))
        if pcfg.offline:
            w(
                "offline  no model reads this request: the offline summarizer writes the "
                "summary again from the messages, with the feedback read as custom instructions\n"
            )
    w(f"prompt   {prep.prompt.describe()}\n")
    w(
        f"messages {number(len(prep.plan.request_indices))} sent "
        f"({number(len(prep.plan.compact_indices))} replaced) · request ≈ "
        f"{number(tokens['request_estimated'])} tokens\n"
    )
    write_split_lines(prep, w)
    if request.custom_instruction:
        w(f"instructions {show(request.custom_instruction)}\n")
    label = "" if prep.enabled else " (not enabled: would not be sent)"
    w(f"\n===== system{label} =====\n")
    w(show(body["messages"][0]["content"]) + "\n")
    w(f"\n===== user (synthetic transcript){label} =====\n")
    w(show(request.transcript))
    if not request.transcript.endswith("\n"):
        w("\n")
    for i, round_ in enumerate(request.revisions, 1 + request.dropped_rounds):
        for turn, title in zip(round_.turns(), ("summary", "feedback"), strict=True):
            w(f"\n===== {turn['role']} (round {i}: {title}){label} =====\n")
            w(show(turn["content"]))
            if not turn["content"].endswith("\n"):
                w("\n")
    other = {k: v for k, v in body.items() if k != "messages"}
    w("\n===== other body fields =====\n")
    w(json.dumps(other, ensure_ascii=False, indent=2) + "\n")

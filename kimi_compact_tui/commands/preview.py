"""`preview`: the exact request that would be sent (never a key, never tools)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.commands.common import (
    add_provider_args,
    add_session_args,
    load_and_prepare,
    provider_config,
    write_split_lines,
)
from kimi_compact_tui.commands.jsonout import print_json
from kimi_compact_tui.wording import number

if TYPE_CHECKING:
    from kimi_compact_tui.job import Preparation, Readiness
    from kimi_compact_tui.providers import ProviderConfig

#: The one-line help of the command (listed by the top-level --help).
HELP = "show the exact compaction request body"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("preview", help=HELP)
    add_session_args(p, instructions=True)
    add_provider_args(p)
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


def preview_json(
    prep: Preparation, body: dict[str, Any] | None, ready: Readiness
) -> dict[str, Any]:
    """``preview --json``: the request body exactly as POSTed (None for a
    no-op), beside what decides whether it is sent: the job's refusals."""
    return {
        "session": str(prep.session.ref or prep.session.path),
        "noop": prep.plan.noop,
        "enabled": prep.enabled,
        "disabled_reason": prep.disabled_reason,
        "refusals": [{"kind": r.kind.value, "message": r.message} for r in ready.refusals],
        "body": body,
    }


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


def run(args: argparse.Namespace) -> int:
    from kimi_compact_tui.sanitize import visible

    job, prep = load_and_prepare(args)
    config = job.config
    ready = job.readiness(prep)  # what compact would refuse before the request
    tty = sys.stdout.isatty()
    show = visible if tty else (lambda s: s)  # keep controls out of a terminal
    w = sys.stdout.write
    if prep.request is None:
        if args.json:
            print_json(preview_json(prep, None, ready))
        else:
            if not prep.enabled:
                w(not_enabled_line(prep))
            w(f"NO-OP: {prep.plan.noop}\nNothing would be sent.\n")
        return 0
    body = prep.request.body
    if args.json:
        print_json(preview_json(prep, body, ready))
        if not prep.enabled:
            print(
                f"kimi-compact-tui: note: compaction is not enabled: {prep.disabled_reason}; "
                "this request would not be sent",
                file=sys.stderr,
            )
        return 0
    tokens = prep.token_figures()
    if not prep.enabled:
        w(not_enabled_line(prep))
    w(refused_lines(ready))
    pcfg = provider_config(config, args)
    w(model_line(body.get("model"), pcfg))
    w(f"provider {pcfg.describe()}\n")
    w(f"prompt   {prep.prompt.describe()}\n")
    w(
        f"messages {number(len(prep.plan.request_indices))} sent "
        f"({number(len(prep.plan.compact_indices))} replaced) · request ≈ "
        f"{number(tokens['request_estimated'])} tokens\n"
    )
    write_split_lines(prep, w)
    if prep.request.custom_instruction:
        w(f"instructions {show(prep.request.custom_instruction)}\n")
    label = "" if prep.enabled else " (not enabled: would not be sent)"
    w(f"\n===== system{label} =====\n")
    w(show(body["messages"][0]["content"]) + "\n")
    w(f"\n===== user (synthetic transcript){label} =====\n")
    w(show(prep.request.transcript))
    if not prep.request.transcript.endswith("\n"):
        w("\n")
    other = {k: v for k, v in body.items() if k != "messages"}
    w("\n===== other body fields =====\n")
    w(json.dumps(other, ensure_ascii=False, indent=2) + "\n")
    return 0

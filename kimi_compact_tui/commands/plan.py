"""`plan`: show the regions of a compaction (what is sent, replaced and kept)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.commands.common import (
    add_session_args,
    load_and_prepare,
    split_json,
    write_split_lines,
)
from kimi_compact_tui.commands.jsonout import print_json
from kimi_compact_tui.commands.options import SessionOptions
from kimi_compact_tui.compaction.plan import (
    REGION_AFTER,
    REGION_COMPACT,
    REGION_KEPT,
    REGION_LEADING,
    REGION_TAIL,
)
from kimi_compact_tui.previews import message_preview
from kimi_compact_tui.specifics import UNSENT
from kimi_compact_tui.wording import count, number

if TYPE_CHECKING:
    from kimi_compact_tui.job import Preparation

#: The one-line help of the command (listed by the top-level --help).
HELP = "show which messages are sent, replaced and kept"

REGION_LABELS = {
    REGION_LEADING: "leading system (kept and sent)",
    REGION_COMPACT: "compactable (sent, then replaced by the summary)",
    REGION_TAIL: "preserved tail (kept verbatim)",
    REGION_AFTER: "after the explicit boundary (kept, not sent)",
    REGION_KEPT: "kept (no compaction)",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("plan", help=HELP)
    add_session_args(p)
    p.add_argument("--json", action="store_true", help="print the plan as JSON")


def plan_json(prep: Preparation) -> dict[str, Any]:
    session = prep.session
    out = {
        "session": str(session.ref),
        "format": session.format.name,
        "messages": len(session.messages),
    }
    out.update(prep.plan.to_json())
    out["enabled"] = prep.enabled
    out["disabled_reason"] = prep.disabled_reason
    out["prompt"] = prep.prompt.to_json()
    out["compaction_model"] = prep.compaction_model
    out["tokens"] = prep.token_figures()
    usage = session.format.context_usage(session)  # the context meter (docs/hooks.md)
    out["context"] = usage.to_json() if usage is not None else None
    out.update(split_json(prep))
    return out


@dataclass(frozen=True)
class PlanOptions:
    """``plan``'s options, built from argparse once."""

    session: SessionOptions
    json: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> PlanOptions:
        return cls(SessionOptions.from_args(args), json=args.json)


def run(args: argparse.Namespace) -> int:
    opts = PlanOptions.from_args(args)
    job, prep = load_and_prepare(opts.session)
    session = job.session
    if opts.json:
        print_json(plan_json(prep))
        return 0
    plan = prep.plan
    w = sys.stdout.write
    tokens = prep.token_figures()
    w(
        f"session  {session.ref} ({session.format.name}, {count(len(session.messages), 'message')})\n"
    )
    recorded = tokens["recorded"]
    w(
        f"tokens   recorded {number(recorded) if recorded is not None else '-'} · estimated "
        f"{number(tokens['estimated_before'])} → {number(tokens['estimated_after'])} after\n"
    )
    usage = session.format.context_usage(session)
    if usage is not None:
        w(f"context  {usage.describe()}\n")
    w(f"prompt   {prep.prompt.describe()}\n")
    if not prep.enabled:
        w(f"DISABLED {prep.disabled_reason}\n")
    mode = (
        f"explicit boundary after message {plan.up_to}"
        if plan.mode == "explicit"
        else (f"preserved tail (last {plan.max_preserved_messages} user/assistant messages)")
    )
    w(f"mode     {mode}\n")
    if plan.noop:
        w(f"NO-OP    {plan.noop}\n")
    write_split_lines(prep, w)
    w("\n")
    current = None
    for i, message in enumerate(session.messages):
        region = plan.region_of(i)
        if region != current:
            w(f"-- {REGION_LABELS[region]}\n")
            current = region
        preview = message_preview(message, 70)
        # a request the person saw but the agent never sent to its model, so marked
        role = "not sent" if session.format.bookkeeping(message) == UNSENT else message.role
        w(f"{i + 1:>6}  {str(role)[:9]:<9} {prep.message_tokens[i]:>7,}t  {preview}\n")
    return 0

"""`preview`: the exact request that would be sent (never a key, never tools)."""

from __future__ import annotations

import argparse
import json
import sys

from kimi_compact_tui.commands.common import (
    add_provider_args,
    add_session_args,
    load_and_prepare,
    print_json,
)
from kimi_compact_tui.tui.sanitize import visible


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("preview", help="show the exact compaction request body")
    add_session_args(p, instructions=True)
    add_provider_args(p)
    p.add_argument(
        "--json", action="store_true", help="print only the JSON body POSTed to /chat/completions"
    )


def run(args: argparse.Namespace) -> int:
    _session, _config, prep = load_and_prepare(args)
    if prep.request is None:
        if args.json:
            print_json({"noop": prep.plan.noop, "body": None})
        else:
            sys.stdout.write(f"NO-OP: {prep.plan.noop}\nNothing would be sent.\n")
        return 0
    body = prep.request.body
    if args.json:
        print_json(body)
        return 0
    tty = sys.stdout.isatty()
    show = visible if tty else (lambda s: s)  # keep controls out of a terminal
    w = sys.stdout.write
    tokens = prep.token_figures()
    w(f"model    {body.get('model')}\n")
    w(f"prompt   {prep.prompt.describe()}\n")
    w(
        f"messages {len(prep.plan.request_indices)} sent "
        f"({len(prep.plan.compact_indices)} replaced) · request ≈ "
        f"{tokens['request_estimated']} tokens\n"
    )
    if prep.request.custom_instruction:
        w(f"instructions {show(prep.request.custom_instruction)}\n")
    w("\n===== system =====\n")
    w(show(body["messages"][0]["content"]) + "\n")
    w("\n===== user (synthetic transcript) =====\n")
    w(show(prep.request.transcript))
    if not prep.request.transcript.endswith("\n"):
        w("\n")
    other = {k: v for k, v in body.items() if k != "messages"}
    w("\n===== other body fields =====\n")
    w(json.dumps(other, ensure_ascii=False, indent=2) + "\n")
    return 0

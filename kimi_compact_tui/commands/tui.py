"""`tui` command: ``kimi-compact-tui [SESSION]`` opens the review TUI."""

from __future__ import annotations

import argparse

from kimi_compact_tui.commands.common import add_provider_args, positive_int


def add_app_args(p: argparse.ArgumentParser) -> None:
    """The options shared by ``tui`` and ``serve``."""
    p.add_argument(
        "session",
        metavar="SESSION",
        nargs="?",
        default=None,
        help="context.jsonl, a kimi-cli session folder, or an OpenAI-style .json/.jsonl "
        "(none: pick one from your kimi-cli sessions and the samples)",
    )
    p.add_argument("--config", metavar="FILE", default=None, help="YAML config file")
    add_provider_args(p)
    p.add_argument("--prompt-file", metavar="FILE", default=None, help="use this compaction prompt")
    p.add_argument(
        "--up-to",
        type=positive_int,
        metavar="N",
        default=None,
        help="start with an explicit boundary: compact messages 1..N",
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tui",
        help="open the review TUI (the default: 'kimi-compact-tui [SESSION]')",
        description="Review a compaction interactively: regions, boundary, preview, "
        "stream, diff, edit, write and undo.",
    )
    add_app_args(p)


def build_app(args: argparse.Namespace):
    """The app for ``args`` (config and provider errors raise UserError here)."""
    from kimi_compact_tui.tui.app import create_app

    return create_app(
        args.session,
        config_path=args.config,
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        prompt_file=args.prompt_file,
        up_to=args.up_to,
    )


def run(args: argparse.Namespace) -> int:
    app = build_app(args)
    app.run()
    return int(app.return_code or 0)

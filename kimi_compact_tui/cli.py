"""Command line front end: a thin layer over the engine.

Each subcommand lives in ``kimi_compact_tui/commands/<name>.py`` and exposes
``register(subparsers)`` (adds its parser) and ``run(args) -> int``.
``kimi-compact-tui SESSION`` (no subcommand) opens the review TUI.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from kimi_compact_tui import __version__
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.tui.sanitize import visible

COMMANDS = ("plan", "preview", "compact", "diff", "restore", "serve", "tui", "retention")
PROG = "kimi-compact-tui"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Review a conversation compaction before it is applied.",
        epilog=f"Run '{PROG} SESSION' to open the review TUI on a session.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"kimi_compact_tui.commands.{name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `kimi-compact-tui [SESSION] [options]` means the TUI.
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["tui", *argv]
    parser = build_parser()
    args = parser.parse_args(argv)
    module = importlib.import_module(f"kimi_compact_tui.commands.{args.command}")
    try:
        return int(module.run(args) or 0)
    except UserError as exc:
        # Paths, YAML keys and provider messages come from outside: on a terminal,
        # control characters in them are shown, not obeyed.
        text = visible(str(exc)) if sys.stderr.isatty() else str(exc)
        print(f"{PROG}: error: {text}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: cancelled", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0

"""`tui` command: ``kimi-compact-tui [SESSION]`` opens the review TUI."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kimi_compact_tui.commands.common import add_provider_args, positive_int, session_kinds
from kimi_compact_tui.errors import SessionFormatError

if TYPE_CHECKING:
    from kimi_compact_tui.tui.app import ReviewApp


#: The one-line help of the command (listed by the top-level --help).
HELP = "open the review TUI (the default: 'kimi-compact-tui [SESSION]')"


def add_app_args(p: argparse.ArgumentParser) -> None:
    """The options shared by ``tui`` and ``serve``."""
    p.add_argument(
        "session",
        metavar="SESSION",
        nargs="?",
        default=None,
        help=f"a session file or folder ({session_kinds()}), or a session id "
        "(none: pick one from the sessions on this machine and the samples)",
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


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "tui",
        help=HELP,
        description="Review a compaction interactively: regions, boundary, preview, "
        "stream, diff, edit, write and undo.",
    )
    add_app_args(p)


def build_app(args: argparse.Namespace) -> ReviewApp:
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


def check_session_file(session: str | None) -> None:
    """A cheap check before the TUI takes the terminal: SESSION resolves to a
    file (a path, a session folder, an id) whose first bytes a format
    recognises. A typo is then the CLI's one line and exit 2, not a full-screen
    error; the whole file is parsed by the app (once)."""
    from kimi_compact_tui.formats import registry

    if session is None:
        return
    path = registry.resolve_session_path(session)
    try:
        with open(path, "rb") as fh:
            head = fh.read(registry.HEAD_BYTES)
    except OSError as exc:
        raise SessionFormatError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not head.strip():
        raise SessionFormatError(f"{path}: file is empty")
    registry.detect(path, head)


def run(args: argparse.Namespace) -> int:
    app = build_app(args)  # config and provider first, as the other commands
    check_session_file(args.session)
    app.run()
    return int(app.return_code or 0)

"""`serve` command: the same review TUI in a browser, through textual-serve."""

from __future__ import annotations

import argparse
import ipaddress
import shlex
import sys
from pathlib import Path

from kimi_compact_tui.commands.tui import add_app_args
from kimi_compact_tui.errors import UserError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the review TUI in a browser (textual-serve, 127.0.0.1 by default)",
        description="Serve the review TUI through textual-serve. It has no authentication: "
        "keep the default loopback host unless you know who can reach the port.",
    )
    add_app_args(p)
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _absolute(path: str) -> str:
    """Paths are resolved here: the served app may run from another folder."""
    return str(Path(path).expanduser().absolute())


def app_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve runs for each browser session."""
    argv = [sys.executable, "-m", "kimi_compact_tui", "tui"]
    if args.session:
        argv.append(_absolute(args.session))
    for flag, value in (
        ("--config", args.config and _absolute(args.config)),
        ("--provider", args.provider),
        ("--model", args.model),
        ("--base-url", args.base_url),
        ("--prompt-file", args.prompt_file and _absolute(args.prompt_file)),
        ("--up-to", args.up_to),
    ):
        if value is not None:
            argv += [flag, str(value)]
    return shlex.join(argv)


def run(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        raise UserError(f"--port {args.port}: must be between 1 and 65535")
    # Fail early, with the CLI's text, on a bad config or provider.
    from kimi_compact_tui.commands.tui import build_app

    build_app(args)
    if not is_loopback(args.host):
        print(
            f"kimi-compact-tui: warning: serving on {args.host}, which is not a loopback "
            "address; textual-serve has no authentication, so anyone who can reach "
            f"port {args.port} can read and change your sessions",
            file=sys.stderr,
        )
    from textual_serve.server import Server

    server = Server(app_command(args), host=args.host, port=args.port, title="kimi-compact-tui")
    server.serve()
    return 0

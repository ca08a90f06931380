"""`tui` command: ``kimi-compact-tui [SESSION]`` opens the review TUI."""

from __future__ import annotations

import argparse
import gc
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kimi_compact_tui.commands.common import add_provider_args, positive_int, session_kinds
from kimi_compact_tui.commands.options import ProviderOptions
from kimi_compact_tui.errors import SessionFormatError

if TYPE_CHECKING:
    from kimi_compact_tui.hooks.pending import GateState
    from kimi_compact_tui.tui.app import ReviewApp
    from kimi_compact_tui.tui.gate import Gate


#: The one-line help of the command (listed by the top-level --help).
HELP = "open the review TUI (the default: 'kimi-compact-tui [SESSION]')"
#: What ``--help`` of the command says it does.
DESCRIPTION = (
    "Review a compaction interactively: regions, boundary, preview, "
    "stream, diff, edit, write and undo."
)


def add_app_args(p: argparse.ArgumentParser) -> None:
    """The options shared by ``tui`` and ``serve``."""
    p.add_argument(
        "session",
        metavar="SESSION",
        nargs="?",
        default=None,
        help=f"a session file or folder ({session_kinds()}), a session id or its start "
        "(the short id the picker shows), or sample:NAME (a bundled sample); none: pick "
        "one from the sessions on this machine and the samples",
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
    p = sub.add_parser("tui", help=HELP, description=DESCRIPTION)
    add_app_args(p)


@dataclass(frozen=True)
class AppOptions:
    """The options of ``tui`` and ``serve`` (:func:`add_app_args`), built from argparse once."""

    session: str | None = None
    config: str | None = None
    provider: ProviderOptions = field(default_factory=ProviderOptions)
    prompt_file: str | None = None
    up_to: int | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> AppOptions:
        return cls(
            session=args.session,
            config=args.config,
            provider=ProviderOptions.from_args(args),
            prompt_file=args.prompt_file,
            up_to=args.up_to,
        )


def gate_of(state: GateState | None = None) -> Gate:
    """The gate for the app, as plain data (the ``tui`` layer may not import
    ``hooks``): the pending reviews in ``state`` (default: this tool's state
    folder) and ``hook allow`` on one of them."""
    from kimi_compact_tui.hooks.pending import GateState
    from kimi_compact_tui.tui.gate import Gate, Held

    gate = state if state is not None else GateState()

    def pending() -> list[Held]:
        return [Held(p.agent, p.session, p.transcript, p.trigger, p.blocks) for p in gate.pending()]

    def allow(held: Held) -> str:
        gate.allow(held.agent, held.session)  # what ``hook allow`` does
        return f"allowed once: {held.agent}'s next compaction of {held.session} goes through"

    return Gate(pending, allow)


def build_app(opts: AppOptions) -> ReviewApp:
    """The app for ``opts`` (config and provider errors raise UserError here)."""
    from kimi_compact_tui.tui.app import create_app

    return create_app(
        opts.session,
        config_path=opts.config,
        provider=opts.provider.provider,
        model=opts.provider.model,
        base_url=opts.provider.base_url,
        prompt_file=opts.prompt_file,
        up_to=opts.up_to,
        gate=gate_of(),
    )


#: Sessions larger than this say on stderr that they are being loaded (before
#: the TUI starts, the terminal shows nothing else while a large file is read).
LOUD_BYTES = 16 * 1024 * 1024


def open_session_first(app: ReviewApp, session: str | None, up_to: int | None) -> None:
    """Load SESSION before the TUI takes the terminal, and hand it to the app
    (loaded once). A session that cannot be opened (a path, a session folder,
    an id or the start of one, ``sample:NAME``) is then the CLI's one line
    naming the file and line, and exit 2, not a dialog over the picker."""
    from kimi_compact_tui.formats import registry

    if session is None:
        return
    from kimi_compact_tui.tui.app import open_session

    ref = registry.resolve(session)
    path = ref.path
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    if size > LOUD_BYTES:
        print(f"kimi-compact-tui: loading {path} ({size / 1e6:,.1f} MB)…", file=sys.stderr)
    enabled = gc.isenabled()
    gc.disable()  # as the other commands load: no collection walks the new objects
    try:
        outcome = open_session(app.state.loader(), ref, up_to)
    finally:
        if enabled:
            gc.enable()
    if outcome.job is None:
        raise SessionFormatError(outcome.error or f"{path}: cannot open")
    app.preloaded = outcome


def run(args: argparse.Namespace) -> int:
    opts = AppOptions.from_args(args)
    app = build_app(opts)  # config and provider first, as the other commands
    open_session_first(app, opts.session, opts.up_to)
    app.run()
    return int(app.return_code or 0)

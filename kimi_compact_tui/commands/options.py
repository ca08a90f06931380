"""The options every command shares, typed, built from argparse once.

A command's ``run(args)`` turns the ``argparse.Namespace`` into its own
frozen options object (``CompactOptions``, ``ProbeOptions``, …, each built by
its ``from_args``) on its first line; nothing below it sees the Namespace.
The shared parts are here: :class:`SessionOptions` (the session and how it
is planned) and :class:`ProviderOptions` (the ``--provider`` flags).

Light to import (the command line imports every command): dataclasses only.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass


@dataclass(frozen=True)
class SessionOptions:
    """SESSION and the options that plan it (``add_session_args``)."""

    session: str
    up_to: int | None = None
    config: str | None = None
    prompt_file: str | None = None
    instructions: str = ""  # only the commands that take --instructions

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, instructions: bool = False) -> SessionOptions:
        """``instructions``: the command registered ``--instructions``."""
        return cls(
            session=args.session,
            up_to=args.up_to,
            config=args.config,
            prompt_file=args.prompt_file,
            instructions=(args.instructions or "") if instructions else "",
        )


@dataclass(frozen=True)
class ProviderOptions:
    """``--provider``, ``--model`` and ``--base-url`` (``add_provider_args``);
    all None: the config file's provider block, else offline."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ProviderOptions:
        return cls(provider=args.provider, model=args.model, base_url=args.base_url)

"""``compact``'s options, typed, built from argparse once (:meth:`CompactOptions.from_args`)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, replace

from kimi_compact_tui.commands.options import ProviderOptions, SessionOptions


@dataclass(frozen=True)
class CompactOptions:
    """Everything ``compact`` was asked (see ``register`` for each flag's help)."""

    session: SessionOptions
    provider: ProviderOptions = field(default_factory=ProviderOptions)
    output: str | None = None
    force: bool = False
    in_place: bool = False
    yes: bool = False
    min_retention: tuple[str, ...] = ()
    anchor: bool = False
    anchor_budget: int = 0
    json: bool = False
    allow_split: bool = False
    allow_truncated: bool = False
    from_summary: tuple[str, ...] = ()
    revise: tuple[str, ...] = ()
    repair: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CompactOptions:
        return cls(
            session=SessionOptions.from_args(args, instructions=True),
            provider=ProviderOptions.from_args(args),
            output=args.output,
            force=args.force,
            in_place=args.in_place,
            yes=args.yes,
            min_retention=tuple(args.min_retention),
            anchor=args.anchor,
            anchor_budget=args.anchor_budget,
            json=args.json,
            allow_split=args.allow_split,
            allow_truncated=args.allow_truncated,
            from_summary=tuple(args.from_summary),
            revise=tuple(args.revise),
            repair=args.repair,
        )

    def on_session(self, session: str) -> CompactOptions:
        """The same options on another SESSION (a bundled sample's copy)."""
        return replace(self, session=replace(self.session, session=session))

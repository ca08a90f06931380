"""Command palette provider: every main-screen key that can run now, by its
description (from the key table, :data:`kimi_compact_tui.tui.keys.MAIN_KEYS`)."""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from kimi_compact_tui.tui.keys import MAIN_KEYS, Key


class ReviewCommands(Provider):
    """Lists the review actions that are currently available, and runs the chosen one."""

    def _main(self) -> Any:
        """The main screen (the bottom of the stack: the palette is above it)."""
        stack = self.app.screen_stack
        return stack[0] if stack else None

    def _entries(self) -> list[Key]:
        main = self._main()
        if main is None or not hasattr(main, "state"):
            return []
        return [k for k in MAIN_KEYS if k.action and main.check_action(k.action, ()) is True]

    def _run(self, action: str) -> Any:
        return partial(self.app.run_action, action, self._main())

    async def discover(self) -> Hits:
        for k in self._entries():
            yield DiscoveryHit(k.help.capitalize(), self._run(k.action), help=f"key: {k.shown_key}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for k in self._entries():
            text = k.help.capitalize()
            score = matcher.match(text)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(text), self._run(k.action), help=f"key: {k.shown_key}"
                )

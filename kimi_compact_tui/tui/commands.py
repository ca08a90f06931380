"""Command palette provider: every key of the main screen, by its description."""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

# (key shown, action, long description) for the help screen and the palette.
HELP_KEYS: list[tuple[str, str, str]] = [
    ("↑ ↓ j k", "", "move the highlight one message"),
    ("PgUp PgDn Home End", "", "move by a page / to the first or last message"),
    ("enter", "detail", "show the highlighted message in the detail pane"),
    ("b", "boundary", "compact up to here (explicit boundary at the highlighted message)"),
    ("escape", "reset_boundary", "back to the default preserved tail"),
    ("p", "preview", "preview the request (transcript, prompt, JSON body, tokens)"),
    ("i", "instructions", "edit the custom compaction instructions"),
    ("m", "model", "choose the compaction model (per-session override)"),
    ("c", "compact", "compact: stream the summary"),
    ("d", "diff", "diff the session before and after"),
    ("e", "edit", "edit the summary"),
    ("w", "write", "write the compacted session (asks to confirm)"),
    ("u", "undo", "undo the last write"),
    ("/", "search", "search messages (n / N: next / previous match)"),
    ("o", "open", "open another session (the session picker)"),
    ("?", "help", "this help"),
    ("ctrl+p", "", "command palette: every action by name"),
    ("q", "quit", "quit"),
]
COMPACTION_ACTIONS = {"boundary", "reset_boundary", "preview", "instructions", "model"}
COMPACTION_ACTIONS |= {"compact", "diff", "edit", "write"}
MAIN_ACTIONS = COMPACTION_ACTIONS | {"detail", "undo", "search", "search_next", "search_prev"}
MAIN_ACTIONS |= {"help", "quit", "open"}


def availability(state: Any, action: str) -> bool | None:
    """Whether a main-screen action is available (True), shown but not
    available now (None), or absent (False: compaction disabled in config)."""
    if action not in MAIN_ACTIONS:
        return True
    if action not in COMPACTION_ACTIONS:
        return True if action != "undo" or state.session_path is not None else None
    if state.session is None:
        return None
    if state.preparation is not None and not state.preparation.enabled:
        return False  # compaction disabled in config: keys absent
    if action in ("preview", "compact"):
        return True if state.can_compact else None
    if action in ("diff", "edit"):
        return True if state.summary is not None else None
    if action == "write":
        return True if state.writable else None
    if action == "reset_boundary":
        return True if state.up_to is not None else None
    return True


class ReviewCommands(Provider):
    """Lists the review actions (the same table as the help screen) that are
    currently available, and runs the chosen one."""

    def _entries(self) -> list[tuple[str, str, str]]:
        app = self.app
        entries = getattr(app, "command_entries", None)
        if entries is None:
            return []
        out = []
        for key, action, description in entries():
            # The palette is a screen on top of the main one: ask as the main screen would.
            available = app.check_action_main(action) if hasattr(app, "check_action_main") else True
            if available:
                out.append((key, action, description))
        return out

    async def discover(self) -> Hits:
        for key, action, description in self._entries():
            yield DiscoveryHit(
                description.capitalize(),
                partial(self.app.run_action, action),
                help=f"key: {key}",
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for key, action, description in self._entries():
            text = description.capitalize()
            score = matcher.match(text)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(text),
                    partial(self.app.run_action, action),
                    help=f"key: {key}",
                )

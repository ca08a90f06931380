"""Command palette provider: every key of the main screen, by its description."""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from kimi_compact_tui.tui.review_extras import extras_of

# (key shown, action, long description) for the help screen and the palette.
HELP_KEYS: list[tuple[str, str, str]] = [
    ("↑ ↓ j k", "", "move the highlight one message"),
    ("PgUp PgDn Home End", "", "move by a page / to the first or last message"),
    ("enter", "detail", "show the highlighted message in the detail pane"),
    ("b", "boundary", "compact up to here (explicit boundary at the highlighted message)"),
    ("s", "safe_boundary", "move the boundary so no tool call is cut off from its results"),
    ("escape", "reset_boundary", "back to the default preserved tail"),
    ("p", "preview", "preview the request (transcript, prompt, JSON body, tokens)"),
    ("i", "instructions", "edit the custom compaction instructions"),
    ("m", "model", "choose the compaction model (per-session override)"),
    ("P", "prompt", "edit the prompt for this review (a copy; no prompt file changes)"),
    ("c", "compact", "compact: stream the summary"),
    ("d", "diff", "diff the session before and after"),
    ("e", "edit", "edit the summary"),
    ("C", "candidates", "candidates: every finished run, compare two, choose one to write"),
    ("w", "write", "write the compacted session (asks to confirm)"),
    ("u", "undo", "undo this tool's last write (asks to confirm)"),
    ("r", "restore_points", "restore points: every earlier version, labelled by origin"),
    ("/", "search", "search messages (n / N: next / previous match)"),
    ("o", "open", "open another session (the session picker)"),
    ("?", "help", "this help"),
    ("ctrl+p", "", "command palette: every action by name"),
    ("q", "quit", "quit"),
]
COMPACTION_ACTIONS = {"boundary", "reset_boundary", "preview", "instructions", "model", "prompt"}
COMPACTION_ACTIONS |= {"compact", "diff", "edit", "write", "safe_boundary"}
FILE_ACTIONS = {"undo", "restore_points"}
MAIN_ACTIONS = COMPACTION_ACTIONS | FILE_ACTIONS | {"detail", "search", "search_next"}
MAIN_ACTIONS |= {"search_prev", "help", "quit", "open", "candidates"}


def availability(state: Any, action: str) -> bool | None:
    """Whether a main-screen action is available (True), shown but not
    available now (None), or absent (False: compaction disabled in config)."""
    if action not in MAIN_ACTIONS:
        return True
    if action == "candidates":
        return True if len(extras_of(state).candidates) else False  # absent until a run
    if action not in COMPACTION_ACTIONS:
        return True if action not in FILE_ACTIONS or state.session_path is not None else None
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
    if action == "safe_boundary":  # shown only when the boundary splits a tool exchange
        return True if state.known_splits else False
    return True


def why_unavailable(state: Any, action: str) -> str:
    """One short line: why ``action`` cannot run now (for the notification)."""
    if action == "candidates":
        return "no candidates yet: every finished run (c) becomes one"
    if action in FILE_ACTIONS and state.session_path is None:
        return "no session file is open"
    if state.session is None:
        return "no session is loaded"
    prep = state.preparation
    if prep is None:
        return "the compaction could not be prepared (see the legend)"
    if not prep.enabled:
        return f"compaction is disabled: {prep.disabled_reason or 'see the config'}"
    if action in ("preview", "compact") and prep.plan.noop:
        return f"nothing to compact: {prep.plan.noop}"
    if action in ("diff", "edit"):
        return "no summary yet: press c to compact first"
    if action == "write":
        result = state.stream_result
        if result is not None and result.status != "complete":
            return f"the last run was {result.status}: nothing to write (press c)"
        return "nothing to write yet: press c to compact first"
    if action == "reset_boundary":
        return "already the default preserved tail"
    if action == "safe_boundary":
        return "the boundary splits no tool exchange"
    return "not available now"


class ReviewCommands(Provider):
    """Lists the review actions (the same table as the help screen) that are
    currently available, and runs the chosen one."""

    def _main(self) -> Any:
        """The main screen (the bottom of the stack: the palette is above it)."""
        stack = self.app.screen_stack
        return stack[0] if stack else None

    def _entries(self) -> list[tuple[str, str, str]]:
        main = self._main()
        if main is None or not hasattr(main, "state"):
            return []
        out = []
        for key, action, description in HELP_KEYS:
            if action and main.check_action(action, ()):
                out.append((key, action, description))
        return out

    def _run(self, action: str):
        return partial(self.app.run_action, action, self._main())

    async def discover(self) -> Hits:
        for key, action, description in self._entries():
            yield DiscoveryHit(description.capitalize(), self._run(action), help=f"key: {key}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for key, action, description in self._entries():
            text = description.capitalize()
            score = matcher.match(text)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(text),
                    self._run(action),
                    help=f"key: {key}",
                )

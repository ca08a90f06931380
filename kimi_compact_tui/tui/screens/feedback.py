"""The feedback box: what the reviewer tells the model about a summary.

Opened with ``f`` on the stream screen once a summary is finished. ``ctrl+s``
dismisses with the feedback (the stream screen then asks for the revision);
an empty box is not sent. ``escape`` dismisses with None: nothing is sent.
Its text is shown as ``Text`` (never parsed as markup).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Static, TextArea

from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.screens.text_box import TextBoxScreen
from kimi_compact_tui.tui.widgets.footer import KeysFooter


class FeedbackScreen(TextBoxScreen):
    BINDINGS = keys.bindings(keys.FEEDBACK_KEYS)

    def __init__(
        self,
        number: int,
        summary: str,
        *,
        rounds: int = 0,
        edited: bool = False,
        offline: bool = False,
    ) -> None:
        super().__init__()
        self.number = number
        self.summary = summary
        self.rounds = rounds  # the rounds of feedback that made this summary
        self.edited = edited
        self.offline = offline  # no model: the summary is kept, rules applied

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text(f"Feedback on candidate #{self.number}", style="bold")
            if self.rounds:
                title.append(f" (a revision: round {self.rounds + 1})", style="dim")
            yield Static(title, id="feedback-title")
            what = "your edit of the summary" if self.edited else "the summary"
            hint = (
                f"No model (offline): {what} is kept as it is, and only feedback a rule can "
                'follow ("keep X": X added verbatim) is applied; the rest is named as not '
                "followed. The revision is a new candidate. ctrl+s sends · escape cancels"
                if self.offline
                else f"The model gets the same compaction request, then {what} and this "
                "feedback; the revision is a new candidate. ctrl+s sends · escape cancels"
            )
            yield Static(Text(hint), classes="hint")
            size = f"{len(self.summary):,} characters"
            yield Static(
                Text(f"revising candidate #{self.number}'s summary ({size})"),
                classes="hint",
                id="feedback-summary",
            )
            yield self.text_area("", "feedback")
        yield KeysFooter()  # the box's own keys, not the screen beneath's

    def action_send(self) -> None:
        text = self.query_one(TextArea).text.strip()
        if not text:
            self.notify("write the feedback first (escape: cancel)", markup=False, timeout=3)
            return
        self.dismiss(text)


EDIT_KEPT_OFFLINE = (
    "With no model (offline), your edit stays in the revision, and only feedback a "
    "rule can follow is applied. The revision then becomes the summary to write."
)
EDIT_REPLACED = (
    "Your edit goes to the model as the summary it revises. The revision "
    "then becomes the summary to write, in place of your edit."
)


def ask_feedback(
    screen: Screen[Any],
    number: int,
    summary: str,
    send: Callable[[str], object],
    *,
    rounds: int = 0,
    edited: bool = False,
    offline: bool = False,
) -> None:
    """The feedback box on candidate ``number``'s ``summary`` (as the reviewer has
    it); ``send`` gets the feedback. An edit lives only in the summary the
    revision replaces: it is sent, but asked about first (pins hold on the
    revision, and the run stays a candidate: nothing else is lost)."""
    from kimi_compact_tui.tui.screens.confirm import AskScreen

    def done(feedback: str | None) -> None:
        if not feedback:
            return
        if not edited:
            send(feedback)
            return

        def answered(ok: bool | None) -> None:
            if ok:
                send(feedback)

        body = EDIT_KEPT_OFFLINE if offline else EDIT_REPLACED
        ask = AskScreen("Send the feedback?", body, yes="Send (y)")
        screen.app.push_screen(ask, answered)

    box = FeedbackScreen(number, summary, rounds=rounds, edited=edited, offline=offline)
    screen.app.push_screen(box, done)

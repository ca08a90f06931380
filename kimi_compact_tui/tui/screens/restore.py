"""Undo and restore points: nothing is restored without a confirmation naming files.

:class:`RestoreConfirmScreen` shows a :class:`~kimi_compact_tui.job.offers.RestoreOffer`:
which file becomes live, where it came from, where the current file goes.
When the live file changed since this tool wrote it, the plain restore is
refused and only the separate force button ("keep current as restore point
and restore", ``f``) goes ahead. It dismisses with ``"restore"``, ``"force"``
or None.

:class:`RestorePointsScreen` lists every restore point beside the session,
each labelled with its origin (this tool's audit log, or kimi-cli's own
rotation); it dismisses with the chosen point or None. A kimi-cli rotation is
restored only from here, never by ``u``.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from kimi_compact_tui.job.offers import RestoreOffer
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.screens.dialog import dialog_css


class RestoreConfirmScreen(ModalScreen[str | None]):
    AUTO_FOCUS = None
    BINDINGS = keys.bindings(keys.RESTORE_KEYS)
    DEFAULT_CSS = dialog_css("RestoreConfirmScreen", "$warning")

    def __init__(self, offer: RestoreOffer, *, title: str = "Undo the last write?") -> None:
        super().__init__()
        self.offer = offer
        self.title_text = title

    def body_text(self) -> Text:
        text = Text()
        for i, line in enumerate(self.offer.lines()):
            if i:
                text.append("\n")
            style = "bold red" if self.offer.changed and line == self.offer.changed else ""
            text.append(visible(line), style=style)
        return text

    def compose(self) -> ComposeResult:
        offer = self.offer
        with Vertical():
            yield Static(Text(self.title_text), classes="dialog-title", id="restore-title")
            yield Static(self.body_text(), classes="dialog-body", id="restore-body")
            with Horizontal():
                if offer.available and not offer.changed:
                    yield Button("Restore (y)", id="restore-yes", variant="warning")
                if offer.available and offer.changed:
                    yield Button(
                        "Keep current as restore point and restore (f)",
                        id="restore-force",
                        variant="error",
                    )
                yield Button("Cancel (n)", id="restore-no")

    def on_mount(self) -> None:
        for button in self.query(Button):
            button.can_focus = False

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        choice = {"restore-yes": "restore", "restore-force": "force"}.get(event.button.id or "")
        self.dismiss(choice)

    def action_restore(self) -> None:
        offer = self.offer
        if not offer.available:
            self.dismiss(None)
        elif offer.changed:
            self.notify(
                "refused: the live file changed since the write; f keeps it and restores",
                severity="warning",
                markup=False,
            )
        else:
            self.dismiss("restore")

    def action_force(self) -> None:
        if self.offer.available and self.offer.changed:
            self.dismiss("force")

    def action_cancel(self) -> None:
        self.dismiss(None)


class RestorePointsScreen(ModalScreen[Any]):
    BINDINGS = keys.bindings(keys.RESTORE_POINTS_KEYS)
    DEFAULT_CSS = dialog_css("RestorePointsScreen", "$accent") + """
    RestorePointsScreen OptionList { height: auto; max-height: 20; }
    """

    def __init__(self, points: list[Any]) -> None:
        super().__init__()
        self.points = points

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Restore points (newest first)"), classes="dialog-title")
            if not self.points:
                yield Static(Text("no restore points beside this session"), id="points-none")
            options = []
            for i, point in enumerate(self.points):
                label = Text(visible(point.path.name), style="bold")
                label.append(f"  {point.size:,} bytes  ")
                label.append(visible(point.origin), style="italic")
                options.append(Option(label, id=str(i)))
            yield OptionList(*options, id="points")
            yield Static(Text("enter: restore the highlighted one (asks first) · escape: back"))

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.points[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)

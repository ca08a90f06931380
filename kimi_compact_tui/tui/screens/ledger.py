"""The ledger of the open session (``H``): its compactions, the agent's own and
ours, oldest first, with what each summary lost (``job/ledger.py``, as
``history`` prints them), read in a thread worker. For the agent's latest own
compaction, whose summary the agent resumes from, ``p`` offers repair (as
``compact --repair``): the screen dismisses with :data:`REPAIR` and the app
shows the block, asks, and writes it with a restore point (``u`` undoes it).
Earlier compactions are history: listed, never repaired.

Session text (lost items, the block) is shown as ``Text`` through
:func:`visible`, never parsed as markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.job.ledger import RepairPlan, figures, keeps, ledger, made_by, repair_plan
from kimi_compact_tui.sanitize import one_line, visible
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.widgets.footer import KeysFooter
from kimi_compact_tui.wording import count

REPAIR = "repair"
SHOWN_LOST = 12


def ledger_text(entries: list[dict[str, Any]], repair: RepairPlan | None, why: str | None) -> Text:
    """The ledger as text: one entry per compaction, then what repair would do."""
    out = Text()
    if not entries:
        out.append("no compaction recorded (neither the agent's own nor ours)\n", style="dim")
    for e in entries:
        out.append(f"{e['number']:>3}  {visible(e['time'] or '?')}  ", style="bold")
        out.append(visible(made_by(e)), style="bold")
        out.append(f"  {figures(e)}")
        if e["latest_agent_compaction"]:
            out.append("  [latest of the agent's own: it resumes from this]", style="bold")
        out.append("\n")
        ret = e["retention"]
        if ret is not None:
            out.append(f"     {keeps(ret)}\n")
            if ret["line"]:
                out.append(f"     ! {visible(ret['line'])}\n", style="bold red")
            for item in ret["missing"][:SHOWN_LOST]:
                mark = "! " if item["critical"] else ""
                out.append(f"     lost: {mark}[{item['category']}] ", style="red" if mark else "")
                out.append(one_line(item["item"], 120))
                out.append("\n")
            if len(ret["missing"]) > SHOWN_LOST:
                out.append(
                    f"     … and {len(ret['missing']) - SHOWN_LOST} more lost\n", style="dim"
                )
        for note in e["notes"]:
            out.append(f"     {visible(note)}\n", style="dim")
    out.append("\n")
    if repair is not None and repair.needed:
        out.append(
            f"p repairs the latest: puts the block of its "
            f"{count(len(repair.anchored.items), 'lost item')} into that summary, in place "
            "(shows it and asks first; u undoes it)",
            style="bold",
        )
    elif repair is not None:
        out.append("nothing to repair: the latest summary keeps every item checked", style="dim")
    else:
        out.append(f"repair: {visible(why or 'not offered')}", style="dim")
    return out


class LedgerScreen(ModalScreen[str | None]):
    """The ledger of ``session``; dismisses with :data:`REPAIR` (``p``) or None."""

    DEFAULT_CSS = """
    LedgerScreen { align: center middle; }
    LedgerScreen > Vertical {
        width: 95%; height: 95%; border: thick $accent; background: $surface; padding: 0 1;
    }
    LedgerScreen #ledger-scroll { height: 1fr; }
    """
    BINDINGS = keys.bindings(keys.LEDGER_KEYS)

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.entries: list[dict[str, Any]] | None = None
        self.repair: RepairPlan | None = None
        self.why: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text("Ledger: this session's compactions", style="bold"))
            with VerticalScroll(id="ledger-scroll"):
                yield Static(Text("reading the ledger…", style="dim"), id="ledger-body")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.run_worker(self._read, thread=True, exclusive=True, group="ledger")

    def _read(self) -> None:
        try:
            entries = ledger(self.session)
        except Exception as exc:  # noqa: BLE001 - one line, never a traceback
            self.app.call_from_thread(self._show, [], None, f"cannot read the ledger: {exc}")
            return
        repair, why = None, None
        try:
            repair = repair_plan(self.session)
        except UserError as exc:
            why = str(exc)
        self.app.call_from_thread(self._show, entries, repair, why)

    def _show(
        self, entries: list[dict[str, Any]], repair: RepairPlan | None, why: str | None
    ) -> None:
        self.entries, self.repair, self.why = entries, repair, why
        self.query_one("#ledger-body", Static).update(ledger_text(entries, repair, why))
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "repair":
            return self.repair is not None and self.repair.needed
        return True

    def action_repair(self) -> None:
        if self.repair is not None and self.repair.needed:
            self.dismiss(REPAIR)

    def action_close(self) -> None:
        self.dismiss(None)

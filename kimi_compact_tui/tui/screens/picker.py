"""The session picker: every agent's sessions on this machine, then the samples.

The sessions come from each format's ``discover`` (through
:func:`kimi_compact_tui.formats.registry.discover_all`), looked up in a worker
thread so a home with thousands of sessions never blocks the screen. Each row
shows the agent it belongs to, the title (the first user message, or the
title the user gave), the work folder, when it was last active (the time of
its last record where the session records one, else the file's time, marked
"file time") and how many messages it holds; a session that cannot be opened
(a binary file included) is flagged ✗ with one line saying why.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Sequence
from pathlib import Path

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.base import SessionInfo
from kimi_compact_tui.formats.registry import (
    describe_path,
    discover_all,
    discovery_note,
    short_ids,
)
from kimi_compact_tui.formats.storage import SessionRef, check_bytes
from kimi_compact_tui.samples import resolve_sample_name, samples_dir
from kimi_compact_tui.sanitize import one_line, visible
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.widgets.footer import KeysFooter

MAX_ROWS = 2000  # newest first; older sessions can still be opened by path
ERROR_MARK = "✗"
PROBE_BYTES = 64 * 1024  # read from a row that shows no message, to flag a binary file
TIME_FORMAT = "%Y-%m-%d %H:%M"
AGENT_CELLS = 12  # the agent column's widest ("Claude Code", "Gemini CLI")


def agent_of(info: SessionInfo) -> str:
    """Who writes the session, for people: the format's agent ("Claude Code"),
    else its label ("OpenAI messages .json"), else "?"."""
    try:
        fmt = registry.get(info.format)
    except (KeyError, UserError):
        return "?"
    return fmt.agent or fmt.label


def when_of(info: SessionInfo) -> str | None:
    """When the session was last active: its last record's own time, else the
    file's time, marked as such."""
    if info.last_record is not None:
        return _dt.datetime.fromtimestamp(info.last_record).strftime(TIME_FORMAT)
    if info.updated is not None:
        return _dt.datetime.fromtimestamp(info.updated).strftime(TIME_FORMAT) + " (file time)"
    return None


def flag_unreadable(infos: Sequence[SessionInfo]) -> None:
    """Flag (``error``) a row that shows no message because its file is no session
    text (NUL bytes: a binary file; empty), in the loader's words. Reads only
    the first :data:`PROBE_BYTES` of such rows; runs in the scan's thread."""
    for info in infos:
        if info.error or info.message_count not in (0, None) or info.ref.key is not None:
            continue  # (a session kept in a database is rows, not text)
        path = info.path
        try:
            path = registry.resolve(info.ref).path
            with open(path, "rb") as fh:
                head = fh.read(PROBE_BYTES)
            check_bytes(head, path)
        except UserError as exc:  # the row names the file: its name is enough
            info.error = str(exc).replace(str(path), path.name)
        except OSError as exc:
            info.error = f"{info.path}: cannot read ({exc.strerror or exc})"


def session_label(
    info: SessionInfo, *, sample: bool = False, agent_width: int = 0, short_id: str | None = None
) -> Text:
    """Two lines (three when it cannot be opened): the agent and the title, then
    where and when."""
    out = Text(no_wrap=True, overflow="ellipsis")
    if info.error:
        out.append(f"{ERROR_MARK} ", style="bold red")
    agent = agent_of(info)
    out.append(visible(agent).ljust(agent_width) + "  ", style="italic")
    title = one_line(info.title, 100) if info.title else ""
    out.append(title or f"(untitled) {visible(info.session_id or info.path.name)}", style="bold")
    details = []
    if info.work_dir:
        details.append(visible(info.work_dir))
    when = when_of(info)
    if when is not None:
        details.append(when)
    if info.message_count is not None and not info.error:
        count = info.message_count
        details.append(f"{count:,} message{'s' if count != 1 else ''}")
    if sample:
        details.append(f"sample:{visible(info.path.name)} (opens a copy)")
    elif info.session_id and title:
        details.append(visible(short_id or info.session_id[:8]))
    details.extend(visible(mark) for mark in info.marks)  # the agent's: "archived", ...
    out.append("\n  " + " · ".join(details), style="dim")
    if info.error:
        out.append(f"\n  {ERROR_MARK} cannot open: {one_line(info.error, 160)}", style="red")
    return out


def sample_sessions(folder: Path | None = None) -> list[SessionInfo]:
    """The bundled samples (:mod:`kimi_compact_tui.samples`: opened as copies)."""
    folder = folder or samples_dir()
    if folder is None:
        return []
    out = []
    for item in sorted(folder.iterdir()):
        if item.name.startswith(".") or not (item.is_dir() or item.suffix in (".json", ".jsonl")):
            continue
        info = describe_path(item)
        info.title = item.name if item.is_dir() else info.title
        info.updated = info.last_record = info.session_id = None
        out.append(info)
    flag_unreadable(out)
    return out


class PickerScreen(ModalScreen[str | SessionRef | None]):
    """Choose a session; dismiss with its path, or None (escape / q).

    ``sessions`` given: shown as they are (no lookup); otherwise the kimi-cli
    sessions are looked up in a worker and the samples follow them."""

    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > Vertical {
        width: 90%; height: 90%; border: thick $accent; background: $surface; padding: 0 1;
    }
    PickerScreen #picker-list { height: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    PickerScreen #picker-path { margin-top: 1; }
    PickerScreen #picker-note { color: $text-muted; }
    PickerScreen.-no-color OptionList > .option-list--option-highlighted {
        text-style: bold reverse;
    }
    """
    BINDINGS = keys.bindings(keys.PICKER_KEYS)

    def __init__(
        self,
        sessions: Sequence[SessionInfo] | None = None,
        samples: Sequence[SessionInfo] | None = None,
    ) -> None:
        super().__init__()
        self._given = sessions is not None
        self.sessions: list[SessionInfo] = list(sessions or [])
        self.samples: list[SessionInfo] = list(samples if samples is not None else ())
        self.entries: list[SessionInfo] = []
        self.scanning = not self._given

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text("Open a session", style="bold"))
            yield OptionList(id="picker-list")
            yield Static(Text(""), id="picker-note")
            yield Input(placeholder="…or type a path and press enter", id="picker-path")
        yield KeysFooter()  # the picker's own keys, not the main screen's behind it

    def on_mount(self) -> None:
        self.set_class(self.app.no_color, "-no-color")  # the highlight in reverse video
        if self._given:
            self._show(self.sessions, self.samples)
        else:
            self._note("Looking for sessions…")
            self.query_one("#picker-path").focus()
            self.run_worker(self._scan, thread=True, exclusive=True, group="picker")

    def _scan(self) -> None:
        try:
            sessions = discover_all(os.environ, Path.home())
        except Exception as exc:  # never a traceback: one line, and the samples still
            note = f"cannot list the sessions on this machine: {exc}"
            self.app.call_from_thread(self._show, [], sample_sessions(), note)
            return
        flag_unreadable(sessions)
        samples = sample_sessions()
        self.app.call_from_thread(self._show, sessions, samples)

    def _note(self, text: str) -> None:
        self.query_one("#picker-note", Static).update(Text(visible(text)))

    def _show(
        self,
        sessions: Sequence[SessionInfo],
        samples: Sequence[SessionInfo],
        note: str | None = None,
    ) -> None:
        self.scanning = False
        newest = sorted(sessions, key=lambda s: s.last_record or s.updated or 0.0, reverse=True)
        self.sessions = newest[:MAX_ROWS]
        self.samples = list(samples)
        self.entries = self.sessions + self.samples
        short = short_ids(list(sessions))  # each shown id names one session
        # One column as wide as the agents' names (a longer format label runs over).
        width = max((cell_len(visible(agent_of(s))) for s in self.entries), default=0)
        width = min(width, AGENT_CELLS)
        options = [
            Option(
                session_label(s, agent_width=width, short_id=short.get(s.session_id or "")),
                id=str(i),
            )
            for i, s in enumerate(self.sessions)
        ]
        start = len(self.sessions)
        options += [
            Option(session_label(s, sample=True, agent_width=width), id=str(start + i))
            for i, s in enumerate(self.samples)
        ]
        listing = self.query_one("#picker-list", OptionList)
        listing.clear_options()
        listing.add_options(options)
        if note is not None:
            self._note(note)
        else:
            broken = sum(1 for s in sessions if s.error)
            more = f" (newest {MAX_ROWS:,} shown)" if len(sessions) > MAX_ROWS else ""
            flagged = f", {broken:,} cannot be opened ({ERROR_MARK})" if broken else ""
            self._note(discovery_note(list(sessions)) + more + flagged)
        if self.entries:
            listing.highlighted = 0
            listing.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.entries[int(event.option.id or 0)].ref)  # the row's own reference

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        try:  # a sample by its name is opened as the sample's path is: as a copy
            sample = resolve_sample_name(text)
        except LookupError as exc:
            self._note(str(exc))
            return
        # Anything else (a path, an id or its start) is resolved as the CLI does.
        self.dismiss(str(sample) if sample is not None else text)

    def action_cancel(self) -> None:
        self.dismiss(None)

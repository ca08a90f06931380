"""The session picker: every agent's sessions on this machine, then the samples.

The sessions come from each format's ``discover`` (through
:func:`kimi_compact_tui.formats.registry.discover_all`), looked up in a worker
thread so a home with thousands of sessions never blocks the screen. Each row
shows the agent it belongs to, the title (the first user message, or the
title the user gave), the work folder, when it was last active (the time of
its last record where the session records one, else the file's time, marked
"file time") and how many messages it holds; a session that cannot be opened
(a binary file included) is flagged ✗ with one line saying why.

Sessions whose compaction the gate holds (pending reviews, from the app's
:class:`~kimi_compact_tui.tui.gate.Gate`) come first, marked with the trigger
and how many times they were held; ``A`` lets the agent's next compaction of
one through once (asks first). Every row shows its context meter
(``context 73% · compacts at 84%``) where it can be read from the session's end
(:func:`~kimi_compact_tui.formats.meter.meter_of`, as ``meter_line``; nothing
when it would need a full read, or when no window is known to measure against).
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.base import SessionInfo
from kimi_compact_tui.formats.meter import meter_of
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
from kimi_compact_tui.tui.gate import Gate, Held, held_for
from kimi_compact_tui.tui.widgets.footer import KeysFooter

MAX_ROWS = 2000  # newest first; older sessions can still be opened by path
ERROR_MARK = "✗"
PENDING_MARK = "⏸"
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
    info: SessionInfo,
    *,
    sample: bool = False,
    agent_width: int = 0,
    short_id: str | None = None,
    held: Held | None = None,
    meter: str | None = None,
) -> Text:
    """Two lines (three when it cannot be opened): the agent and the title (after
    the pending review's mark, ``held``), then the context meter, where and when."""
    out = Text(no_wrap=True, overflow="ellipsis")
    if info.error:
        out.append(f"{ERROR_MARK} ", style="bold red")
    agent = agent_of(info)
    out.append(visible(agent).ljust(agent_width) + "  ", style="italic")
    if held is not None:
        out.append(f"{PENDING_MARK} {held.line()}  ", style="bold reverse")
    title = one_line(info.title, 100) if info.title else ""
    out.append(title or f"(untitled) {visible(info.session_id or info.path.name)}", style="bold")
    details = []
    if meter is not None:
        details.append(f"context {meter}")
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
        *,
        gate: Gate | None = None,
    ) -> None:
        super().__init__()
        self.gate = gate or Gate()
        #: Each listed session's pending review and context meter (by position).
        self.held: dict[int, Held] = {}
        self.meters: dict[int, str] = {}
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
            self._show(self.sessions, self.samples, annotations=self._annotate(self.sessions))
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
        sessions += self._held_elsewhere(sessions)
        flag_unreadable(sessions)
        samples = sample_sessions()
        annotations = self._annotate(sessions)
        self.app.call_from_thread(self._show, sessions, samples, None, annotations)

    def _held_elsewhere(self, found: Sequence[SessionInfo]) -> list[SessionInfo]:
        """The sessions of pending reviews that discovery does not find (a transcript
        outside the folders it scans): listed too, so a held compaction is never out
        of sight."""
        known = {os.path.realpath(info.path) for info in found}
        out = []
        for held in self._pending():
            if not held.transcript or not os.path.isfile(held.transcript):
                continue
            real = os.path.realpath(held.transcript)
            if real not in known:
                known.add(real)
                out.append(describe_path(Path(held.transcript)))
        return out

    def _pending(self) -> list[Held]:
        try:
            return self.gate.pending()
        except Exception:  # noqa: BLE001 - the gate's bookkeeping never hides the sessions
            return []

    def _annotate(
        self, sessions: Sequence[SessionInfo]
    ) -> dict[int, tuple[Held | None, str | None]]:
        """Each session's pending review and meter line, keyed by ``id`` (read in
        the scan's thread: the meter reads the end of each file)."""
        pending = self._pending()
        out: dict[int, tuple[Held | None, str | None]] = {}
        for info in sessions[: MAX_ROWS + len(pending)]:
            meter = None
            if not info.error:
                try:
                    usage, _why = meter_of(info)
                except Exception:  # noqa: BLE001 - a row's meter is never worth a traceback
                    usage = None
                if usage is not None and usage.percent is not None:  # a window is known
                    meter = usage.line()
            out[id(info)] = (held_for(info, pending), meter)
        return out

    def _note(self, text: str) -> None:
        self.query_one("#picker-note", Static).update(Text(visible(text)))

    def _show(
        self,
        sessions: Sequence[SessionInfo],
        samples: Sequence[SessionInfo],
        note: str | None = None,
        annotations: dict[int, tuple[Held | None, str | None]] | None = None,
    ) -> None:
        self.scanning = False
        annotations = annotations or {}
        newest = sorted(sessions, key=lambda s: s.last_record or s.updated or 0.0, reverse=True)
        held = [s for s in newest if annotations.get(id(s), (None, None))[0] is not None]
        rest = [s for s in newest if annotations.get(id(s), (None, None))[0] is None]
        self.sessions = held + rest[:MAX_ROWS]  # pending reviews first
        self.held = {}
        self.meters = {}
        for i, s in enumerate(self.sessions):
            pending, meter = annotations.get(id(s), (None, None))
            if pending is not None:
                self.held[i] = pending
            if meter is not None:
                self.meters[i] = meter
        self.samples = list(samples)
        self.entries = self.sessions + self.samples
        short = short_ids(list(sessions))  # each shown id names one session
        # One column as wide as the agents' names (a longer format label runs over).
        width = max((cell_len(visible(agent_of(s))) for s in self.entries), default=0)
        width = min(width, AGENT_CELLS)
        options = [
            Option(
                session_label(
                    s,
                    agent_width=width,
                    short_id=short.get(s.session_id or ""),
                    held=self.held.get(i),
                    meter=self.meters.get(i),
                ),
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
            waiting = len(self.held)
            held_note = (  # first: the note is long where agents were not found
                f"{waiting} pending review{'s' if waiting != 1 else ''} first "
                f"({PENDING_MARK}; A lets one through once). "
                if waiting
                else ""
            )
            self._note(held_note + discovery_note(list(sessions)) + more + flagged)
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

    def highlighted_held(self) -> Held | None:
        index = self.query_one("#picker-list", OptionList).highlighted
        return None if index is None else self.held.get(index)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "allow_once":  # only on a pending session, with a gate to ask
            return self.gate.allow is not None and self.highlighted_held() is not None
        return True

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.refresh_bindings()  # A is offered on a pending row only

    def action_allow_once(self) -> None:
        held = self.highlighted_held()
        if held is None or self.gate.allow is None:
            return
        allow = self.gate.allow
        ask_allow(self, held, allow)


def ask_allow(screen: Screen[Any], held: Held, allow: Callable[[Held], str]) -> None:
    """Ask, then let the agent's next compaction of ``held`` through once (``hook
    allow``): the review stays pending until one is written."""
    from kimi_compact_tui.tui.screens.confirm import AskScreen

    body = (
        f"{held.line()}: {held.agent} session {held.session}.\n\n"
        "Let the agent's next compaction of this session through once, without a "
        "review (as `kimi-compact-tui hook allow`)? Its summary is then written by the "
        "agent, blind."
    )

    def done(yes: bool | None) -> None:
        if not yes:
            return
        try:
            line = allow(held)
        except OSError as exc:
            screen.app.notify(f"cannot allow: {exc}", severity="error", markup=False)
            return
        screen.app.notify(line, title="Allowed once", markup=False)

    screen.app.push_screen(
        AskScreen("Let the next compaction through?", body, yes="Allow once (y)"), done
    )

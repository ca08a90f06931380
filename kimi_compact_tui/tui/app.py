"""The review app: its default screen is the :class:`MainScreen`.

``create_app`` builds it for the CLI, ``serve`` and tests. The app owns the
work that touches files: loading a session, writing, undo and restore. Each
runs in a thread worker given everything it needs, taken on the UI thread (a
:class:`JobLoader`, a draft, a restore offer): it reads no state and touches
no widget, and returns an :class:`Outcome` that the UI thread applies in
:meth:`ReviewApp.on_worker_state_changed`.
"""

from __future__ import annotations

import gc
import io
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from textual import events, on, work
from textual.app import App, SystemCommand
from textual.content import Content
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from kimi_compact_tui import samples
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.loader import Fingerprint
from kimi_compact_tui.formats.registry import resolve
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.job import CompactionJob, Preparation
from kimi_compact_tui.job.ledger import RepairPlan, write_repair
from kimi_compact_tui.job.offers import RestoreOffer, carry_out
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.tui.gate import Gate, held_at
from kimi_compact_tui.tui.palette import ReviewCommands
from kimi_compact_tui.tui.screens.confirm import AskScreen, ConfirmWriteScreen, disk_check
from kimi_compact_tui.tui.screens.error import RELOAD, ErrorDialog
from kimi_compact_tui.tui.screens.ledger import REPAIR, LedgerScreen
from kimi_compact_tui.tui.screens.main import MainScreen
from kimi_compact_tui.tui.screens.picker import PickerScreen, ask_allow
from kimi_compact_tui.tui.screens.restore import RestoreConfirmScreen, RestorePointsScreen
from kimi_compact_tui.tui.snapshot import JobLoader
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.message_list import MessageList
from kimi_compact_tui.wording import count

# The interpreter's thread switch interval, set once when the app starts: a
# loading or diffing thread keeps the GIL longer before the UI thread takes it
# back (Python's default is 0.005 s), which keeps a 100k-message load fast
# while the UI still redraws 50 times a second.
SWITCH_INTERVAL = 0.02
SCREENSHOTS = "screenshots"  # under the state folder (kimi_compact_tui.samples.state_dir)
SCREENSHOT_DELIVERY = "review-screenshot"  # Textual's own "screenshot" handler stays quiet
QUIT_PURPOSE = "quit"
NOTICE_SECONDS = 4  # a load's notice (it covers part of the message list at 80x24)
HEADER_SIDES = 18  # the header's icon (8 cells) and its right-hand space (10)


def loading_label(path: Path | SessionRef) -> str:
    """``wire.jsonl (86.1 MB)``: what is being loaded, and how much (a name
    that is not a path, such as an id, is shown as typed: it is looked up
    by the load, off the UI thread)."""
    if isinstance(path, SessionRef) and path.key is not None:
        return visible(str(path))
    if not (path.path if isinstance(path, SessionRef) else path.expanduser()).exists():
        return visible(str(path))
    try:
        target = resolve(path).path
        size = target.stat().st_size
    except (UserError, OSError):
        return visible(str(path))
    return f"{visible(target.name)} ({size / 1e6:.1f} MB)"


@dataclass(frozen=True)
class Regrown:
    """A write refused because the agent only appended turns after the loaded
    ones: the same compaction on the session as it is now
    (``CompactionJob.regrown``), for the job it was made from."""

    base: CompactionJob
    job: CompactionJob
    preparation: Preparation

    @property
    def added(self) -> int:
        return len(self.job.session.messages) - len(self.base.session.messages)


@dataclass(frozen=True)
class Outcome:
    """What a file worker returns: the one-line report or error, and the
    session read back afterwards (None when it could not be read)."""

    message: str | None = None
    error: str | None = None
    job: CompactionJob | None = None
    up_to: int | None = None
    #: The file changed on disk since it was loaded (a refused write): offer a reload.
    stale: bool = False
    #: The change was only turns appended after the loaded ones: offer the write on them.
    grown: Regrown | None = None


def open_session(
    loader: JobLoader, path: str | Path | SessionRef, up_to: int | None = None
) -> Outcome:
    """Load ``path`` (any thread): a bundled sample as a fresh copy of it, with
    a note saying so; an error line instead when it cannot be opened."""
    try:
        ref = resolve(path)
        copy = ref.path if ref.key is not None else samples.open_path(ref.path)
    except OSError as exc:
        return Outcome(error=f"{path}: cannot copy the sample ({exc.strerror or exc})")
    except Exception as exc:
        return Outcome(error=_error_line(exc, path))
    opened = ref if copy == ref.path else SessionRef(copy)  # a sample: a fresh copy of it
    note = None
    origin = samples.copied_sample(opened.path) if opened != ref else None
    if origin is not None:
        # short, and shown briefly: at 80x24 a notice covers the message list
        # (the title names the copy: "(copy of the sample)")
        note = f"opened a copy of the sample {origin} (it never changes)"
    try:
        return Outcome(job=loader.load(opened), up_to=up_to, message=note)
    except Exception as exc:
        return Outcome(error=_error_line(exc, path))


def _error_line(exc: Exception, path: object = None) -> str:
    if isinstance(exc, UserError):
        return str(exc)
    where = f"{path}: cannot open " if path is not None else ""
    return f"{where}({type(exc).__name__}: {exc})"  # never a traceback: one line


class ReviewApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "kimi-compact-tui"
    COMMANDS = App.COMMANDS | {ReviewCommands}
    #: Times and rates on screen (the stream, the candidates); off for pictures
    #: that must not change between runs (scripts/screenshots.py).
    show_timing = True

    def __init__(
        self,
        state: ReviewState,
        session_path: str | Path | None = None,
        *,
        up_to: int | None = None,
        gate: Gate | None = None,
    ) -> None:
        super().__init__()
        self.state = state
        #: The pending reviews and ``hook allow`` (given by the command line).
        self.gate = gate or Gate()
        self.session_arg = session_path
        self.initial_up_to = up_to
        #: A session loaded before the app started (``open_session``): shown
        #: first, instead of loading ``session_path`` again.
        self.preloaded: Outcome | None = None
        self.last_error: str | None = None
        self.main_screen = MainScreen(state)
        self._switch_interval = sys.getswitchinterval()
        self._depth = 1  # the screens on the stack when it last changed

    def format_title(self, title: str, sub_title: str) -> Content:
        """The header's title. When ``app — session`` does not fit, the session
        (the sub-title) is shown alone, and when even that does not fit it is cut
        at its front, so its end (``(copy of the sample)``) stays whole."""
        room = self.size.width - HEADER_SIDES
        if not sub_title or cell_len(f"{title} — {sub_title}") <= room:
            return super().format_title(title, sub_title)
        if cell_len(sub_title) > room > 1:
            while cell_len(sub_title) > room - 1:
                sub_title = sub_title[1:]
            sub_title = "…" + sub_title
        return Content(sub_title)

    def get_default_screen(self) -> MainScreen:
        return self.main_screen

    @property
    def message_list(self) -> MessageList:
        return self.main_screen.message_list

    def refresh_view(self) -> None:
        self.main_screen.refresh_view()

    def on_load(self) -> None:
        """Process-wide settings, made once when the app starts (see SWITCH_INTERVAL)."""
        sys.setswitchinterval(SWITCH_INTERVAL)

    def main_ready(self) -> None:
        """Called by the main screen once it is mounted: open what was asked for."""
        if self.state.session is not None:
            self.main_screen.show_session()
        elif self.preloaded is not None:
            outcome, self.preloaded = self.preloaded, None
            self.apply_outcome(outcome, "load")
        elif self.session_arg is not None:
            self.load(self.session_arg, up_to=self.initial_up_to)
        else:
            self.open_picker()

    def on_mount(self) -> None:
        self.screen_change_signal.subscribe(self, self._screen_changed)

    def _screen_changed(self, screen: Screen[Any]) -> None:
        """A screen or a dialog opened: the notices shown before it go, so none
        covers its text (a notice raised while it is open still shows)."""
        depth = len(self.screen_stack)
        if depth > self._depth:
            self.clear_notifications()
        self._depth = depth

    def on_unmount(self) -> None:
        gc.unfreeze()  # see _adopt: let the collector reclaim it all again
        sys.setswitchinterval(self._switch_interval)

    def show_error(
        self, message: str, title: str = "Error", *, dialog: bool = False, reload: bool = False
    ) -> None:
        """``reload``: the dialog offers R, reloading the session (the file changed)."""
        self.last_error = message
        if dialog:

            def done(choice: str | None) -> None:
                if choice == RELOAD:
                    self.reload_session()

            self.push_screen(ErrorDialog(message, title=title, reload=reload), done)
        else:
            self.notify(visible(message), title=title, severity="error", markup=False, timeout=10)

    # --- leaving with unwritten work ----------------------------------------------
    def ask_unwritten(self, what: str, then: Callable[[], object], *, purpose: str = "") -> None:
        """Run ``then`` now, or after asking when a summary or an edit is not
        written (quitting or opening another session would lose it)."""
        state = self.state
        runs = state.unwritten_runs()
        if not state.has_work and not runs:
            then()
            return
        paid = "" if state.offline else " (a model wrote it: running again costs another request)"
        if state.has_work:
            edited = " and your edit" if state.summary_edited else ""
            pins = len(state.pinned_keys())
            pinned = f" with its {count(pins, 'pinned item')}" if pins else ""
            note = state.revision_note()
            body = f"The summary{note}{pinned}{edited} is not written{paid}. {what} loses it."
        else:  # the last run left nothing to write; earlier runs of the range are kept
            numbers = ", ".join(f"#{n}" for n in runs)
            body = (
                f"The last run left nothing to write, but {count(len(runs), 'earlier run')} "
                f"of this range ({numbers}, C: candidates) {'is' if len(runs) == 1 else 'are'} "
                f"not written{paid}. {what} loses {'it' if len(runs) == 1 else 'them'}."
            )

        def done(ok: bool | None) -> None:
            if ok:
                then()

        ask = AskScreen("Discard the unwritten summary?", body, yes="Discard (y)", purpose=purpose)
        self.push_screen(ask, done)

    def reload_session(self) -> None:
        """Read the session file again (after the agent wrote to it): asked
        first when a summary or an edit is not written. The reviewer's choices
        (instructions, model, boundary) stay."""
        path = self.state.session_ref
        if path is None:
            return
        up_to = self.state.up_to
        self.ask_unwritten("Reloading the session", lambda: self.load(path, up_to=up_to))

    def quit_review(self) -> None:
        if isinstance(self.screen, AskScreen) and self.screen.purpose == QUIT_PURPOSE:
            return  # already asking (ctrl+q pressed twice)
        self.ask_unwritten("Quitting", self.exit, purpose=QUIT_PURPOSE)

    async def action_quit(self) -> None:
        """Every other way to quit (Textual's ctrl+q, the palette's Quit) asks
        first too, as ``q`` does."""
        self.quit_review()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's palette commands, less its "Quit": the review's own
        (from the key table, asking first) is the one Quit in the palette."""
        for command in super().get_system_commands(screen):
            if command.title != "Quit":
                yield command

    # --- the palette's screenshot -------------------------------------------------
    def deliver_screenshot(
        self,
        filename: str | None = None,
        path: str | None = None,
        time_format: str | None = None,
    ) -> str | None:
        """Save an SVG of the screen in a folder that exists (Textual's default,
        ~/Downloads, often does not): ``path``, else this app's state folder's
        ``screenshots/`` (created). The notification names the file."""
        folder = Path(path) if path else samples.state_dir() / SCREENSHOTS
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.show_error(f"cannot save the screenshot in {folder}: {exc.strerror or exc}")
            return None
        stamp = time.strftime(time_format or "%Y-%m-%dT%H_%M_%S")
        name = filename or f"{self.title} {stamp}.svg"
        return self.deliver_text(
            io.StringIO(self.export_screenshot()),
            save_directory=folder,
            save_filename=name,
            open_method="browser",
            mime_type="image/svg+xml",
            name=SCREENSHOT_DELIVERY,
        )

    @on(events.DeliveryComplete)
    def _screenshot_saved(self, event: events.DeliveryComplete) -> None:
        if event.name == SCREENSHOT_DELIVERY:
            where = f" to {event.path}" if event.path is not None else ""
            self.notify(f"Saved the screenshot{where}", title="Screenshot", markup=False)

    @on(events.DeliveryFailed)
    def _screenshot_failed(self, event: events.DeliveryFailed) -> None:
        if event.name == SCREENSHOT_DELIVERY:
            self.show_error(f"cannot save the screenshot: {event.exception}", "Screenshot")

    # --- loading ------------------------------------------------------------------
    def load(self, path: str | Path | SessionRef, *, up_to: int | None = None) -> None:
        named = path if isinstance(path, SessionRef) else Path(path)
        self.message_list.show_loading(f"Loading {loading_label(named)}…")
        self._load_worker(self.state.loader(), named, up_to)

    @work(
        thread=True,
        exclusive=True,
        group="load",
        name="load",
        description="load",
        exit_on_error=False,
    )
    def _load_worker(
        self, loader: JobLoader, path: str | Path | SessionRef, up_to: int | None
    ) -> Outcome:
        return open_session(loader, path, up_to)

    def _adopt(self, outcome: Outcome) -> str | None:
        """Apply a worker's session to the state (UI thread); an error line or None."""
        if outcome.job is None:
            return outcome.error
        try:
            self.state.adopt(outcome.job, up_to=outcome.up_to)
        except UserError as exc:  # a bad --up-to: the session stays, the error is shown
            return str(exc)
        finally:
            # The loaded messages live as long as the session and hold no cycles:
            # keep them out of every later collection (100k messages are ~700k
            # objects, 0.3 s per full pass otherwise). What an earlier load froze
            # goes back to the collector first; the app unfreezes all on exit.
            gc.unfreeze()
            gc.freeze()
        return outcome.error

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.name not in ("load", "file") or event.state != WorkerState.SUCCESS:
            return
        outcome = worker.result
        assert isinstance(outcome, Outcome)
        self.apply_outcome(outcome, worker.name)

    def apply_outcome(self, outcome: Outcome, kind: str) -> None:
        """Show what a file worker (``kind``: "load" or "file") returned (UI thread)."""
        self.message_list.show_loading(None)
        self.message_list.loading = False
        error = self._adopt(outcome)
        self._read_held(kind)
        if self.state.session is not None:
            self.main_screen.show_session()
            if outcome.job is not None:
                self._warn_skipped(outcome.job.session.warnings)
        if error is None:
            if outcome.message:
                self.notify(visible(outcome.message), markup=False, timeout=NOTICE_SECONDS)
            return
        if outcome.message:  # done, then an error: both in the dialog (a notice would go)
            error = f"{outcome.message}\n\n{error}"
        if kind == "load":
            if self.state.session is None:
                self.open_picker()  # the picker, with the error dialog above it
            self.show_error(error, "Cannot open the session", dialog=True)
        elif outcome.grown is not None:
            self.offer_grown(outcome.grown, error)
        else:
            self.show_error(error, dialog=True, reload=outcome.stale)

    def offer_grown(self, grown: Regrown, error: str) -> None:
        """The write was refused because the agent appended turns after the
        loaded ones: the summary still holds for the compacted range. Asked
        once; yes moves the review onto the grown session (summary, pins and
        candidates kept) and shows the new diff, from which ``w`` writes."""
        self.last_error = error
        added = grown.added
        they = "it joins" if added == 1 else "they join"
        body = (
            f"{error}\n\nThe agent added {count(added, 'message')} after the ones loaded; "
            f"{they} the kept tail. Review the new diff and write?"
        )

        def done(yes: bool | None) -> None:
            if not yes:
                self.notify(
                    "nothing written: R reloads the session", markup=False, timeout=NOTICE_SECONDS
                )
                return
            if self.state.job is not grown.base:  # the review moved on meanwhile
                self.show_error(error, dialog=True, reload=True)
                return
            self.state.regrow(grown.job, grown.preparation)
            self.main_screen.show_session()
            self.main_screen.action_diff()

        ask = AskScreen(
            "The session grew while you reviewed",
            body,
            yes="Review the diff (y)",
            no="Not now (n)",
        )
        self.push_screen(ask, done)

    def _warn_skipped(self, warnings: list[str]) -> None:
        """The lines the format skipped on load, as the agent does (each named)."""
        if not warnings:
            return
        shown = "\n".join(visible(w) for w in warnings[:5])
        more = f"\n… and {len(warnings) - 5} more" if len(warnings) > 5 else ""
        title = f"{len(warnings)} line{'s' if len(warnings) != 1 else ''} skipped on load"
        self.notify(shown + more, title=title, severity="warning", markup=False, timeout=15)

    def _read_held(self, kind: str) -> None:
        """The open session's pending review, read again after a load or a write:
        said on load; after a write that cleared it (the store's write does), said
        too, with what to do next."""
        before = self.state.held
        path = self.state.session_path
        held = None
        if path is not None:
            try:
                pending = self.gate.pending()
                held = held_at(str(path), None, pending)
            except Exception:  # noqa: BLE001 - the gate's bookkeeping never blocks a review
                held = None
        self.state.held = held
        if held is not None and kind == "load":
            self.notify(
                f"{held.line()}: the agent waits for this review. Write a summary (w) to "
                "clear it, then resume the agent; A lets its next compaction through "
                "unreviewed.",
                title="Pending review",
                markup=False,
                timeout=NOTICE_SECONDS,
            )
        elif before is not None and held is None and kind == "file":
            self.notify(
                f"the pending review of {before.session} is cleared: resume {before.agent}, "
                "which carries on from what you wrote",
                title="Review written",
                markup=False,
                timeout=NOTICE_SECONDS,
            )

    def open_ledger(self) -> None:
        """``H``: the ledger of the open session; ``p`` there repairs the agent's
        latest own summary: the block shown, asked, then written as a file
        operation (a restore point kept; ``u`` undoes it)."""
        session = self.state.session
        if session is None:
            return
        screen = LedgerScreen(session)

        def done(choice: str | None) -> None:
            plan = screen.repair
            if choice != REPAIR or plan is None or not plan.needed:
                return
            self.confirm_repair(plan)

        self.push_screen(screen, done)

    def confirm_repair(self, plan: RepairPlan) -> None:
        anchored = plan.anchored
        body = (
            f"{plan.agent}'s latest summary ({plan.latest.time}) loses "
            f"{count(len(anchored.items), 'item')}; this block goes into it, in place "
            f"(a restore point is kept; u undoes it):\n\n{anchored.block.rstrip()}"
        )
        if anchored.note():
            body += f"\n\n{anchored.note()}"
        loaded = self.state.fingerprint

        def repair() -> str:
            result, warnings = write_repair(plan, loaded)
            more = "".join(f"\nwarning: {w}" for w in warnings)
            return f"repaired: {result['path']} (restore point {result['backup']}){more}"

        def done(yes: bool | None) -> None:
            if yes:
                self._file_worker(repair, "Repairing…")

        self.push_screen(
            AskScreen("Repair the agent's latest summary?", body, yes="Repair (y)"), done
        )

    def allow_held(self) -> None:
        """``A`` on the main screen: the open session's pending review let through once."""
        held, allow = self.state.held, self.gate.allow
        if held is not None and allow is not None:
            ask_allow(self.screen, held, allow)

    def open_picker(self) -> None:
        def done(path: str | SessionRef | None) -> None:
            if path is not None:
                self.ask_unwritten("Opening another session", lambda: self.load(path))
            elif self.state.session is None:
                self.exit()

        self.push_screen(PickerScreen(gate=self.gate), done)

    # --- writing, undo and restore (asked first, then a thread worker) --------------
    def confirm_write(self) -> None:
        screen = ConfirmWriteScreen(self.state)

        def done(ok: bool | None) -> None:
            snap = self.state.snapshot()
            if not ok or snap is None or snap.draft is None:
                return
            job, draft, provider, prep = snap.job, snap.draft, snap.provider, snap.preparation
            split = bool(screen.splits)

            def write() -> str:
                return job.commit(draft, provider, allow_split=split).describe()

            def regrow() -> Regrown | None:
                found = job.regrown(prep)
                return None if found is None else Regrown(job, *found)

            self._file_worker(write, "Writing…", regrow=regrow)

        self.push_screen(screen, done)

    def confirm_undo(self) -> None:
        try:
            offer = self.state.undo_offer()
        except UserError as exc:
            self.show_error(str(exc), dialog=True)
            return
        self._confirm_restore(offer, "Undo this tool's last write?")

    def pick_restore_point(self) -> None:
        try:
            points = self.state.restore_points()
        except UserError as exc:
            self.show_error(str(exc), dialog=True)
            return

        def done(point: object) -> None:
            if point is not None:
                offer = self.state.restore_offer(point)  # type: ignore[arg-type]
                self._confirm_restore(offer, "Restore this version?")

        self.push_screen(RestorePointsScreen(points), done)

    def _confirm_restore(self, offer: RestoreOffer, title: str) -> None:
        def done(choice: str | None) -> None:
            if choice in ("restore", "force"):
                force = choice == "force"
                self._file_worker(lambda: carry_out(offer, force=force).describe(), "Restoring…")

        self.push_screen(RestoreConfirmScreen(offer, title=title), done)

    def _file_worker(
        self,
        op: Callable[[], str],
        progress: str,
        *,
        regrow: Callable[[], Regrown | None] | None = None,
    ) -> None:
        self.notify(progress, markup=False, timeout=3)
        self.message_list.loading = True
        state = self.state
        self._run_file_op(op, state.loader(), state.session_ref, state.fingerprint, regrow)

    @work(
        thread=True,
        exclusive=True,
        group="file",
        name="file",
        description="file",
        exit_on_error=False,
    )
    def _run_file_op(
        self,
        op: Callable[[], str],
        loader: JobLoader,
        path: SessionRef | None,
        loaded: Fingerprint | None,
        regrow: Callable[[], Regrown | None] | None = None,
    ) -> Outcome:
        """Write or restore (``op`` carries its own inputs), then read the file
        back; the UI thread adopts it. A refused op on a file that changed since
        it was loaded (``loaded``, its fingerprint then) says so: the error
        dialog offers the reload, or, when the change was only turns appended
        after the loaded ones (``regrow``, a write's), the write on them."""
        try:
            message = op()
        except Exception as exc:
            stale = path is not None and loaded is not None and disk_check(path, loaded) is not None
            grown = None
            if stale and regrow is not None:
                try:
                    grown = regrow()
                except Exception:  # noqa: BLE001 - the refusal stands, with the reload
                    grown = None
            return Outcome(error=_error_line(exc), stale=stale, grown=grown)
        try:
            job = loader.load(path) if path is not None else None
        except Exception as exc:
            return Outcome(message=message, error=_error_line(exc, path))
        return Outcome(message=message, job=job)


def create_app(
    session_path: str | Path | None = None,
    *,
    config_path: str | Path | None = None,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    prompt_file: str | None = None,
    up_to: int | None = None,
    gate: Gate | None = None,
) -> ReviewApp:
    """The app for ``session_path`` (None opens the session picker). Config and
    provider errors raise :class:`UserError` before the app starts, as in the CLI."""
    state = ReviewState.create(
        config_path=config_path,
        provider=provider,
        model=model,
        base_url=base_url,
        prompt_file=prompt_file,
    )
    return ReviewApp(state, session_path, up_to=up_to, gate=gate)

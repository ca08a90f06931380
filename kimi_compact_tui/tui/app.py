"""The review app: the main screen (list, detail, legend, status) and its keys.

``create_app`` builds it for the CLI, ``serve`` and tests. The flow screens
(preview, stream, diff, edit, confirm, help, instructions, model) live in
``tui/screens`` and are imported when their key is pressed.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Header, Static

from kimi_compact_tui.compaction.plan import REGION_KEPT
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.tui.commands import HELP_KEYS, MAIN_ACTIONS, ReviewCommands, availability
from kimi_compact_tui.tui.sanitize import one_line, visible
from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.edit import EditSummaryScreen
from kimi_compact_tui.tui.screens.error import ErrorDialog
from kimi_compact_tui.tui.screens.help import HelpScreen
from kimi_compact_tui.tui.screens.instructions import InstructionsScreen
from kimi_compact_tui.tui.screens.model import ModelScreen
from kimi_compact_tui.tui.screens.picker import PickerScreen
from kimi_compact_tui.tui.screens.preview import PreviewScreen
from kimi_compact_tui.tui.screens.search import SearchScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.detail import DetailPane, render_detail
from kimi_compact_tui.tui.widgets.footer import KeysFooter
from kimi_compact_tui.tui.widgets.legend import Legend
from kimi_compact_tui.tui.widgets.message_list import MessageList
from kimi_compact_tui.tui.widgets.status import StatusLine, session_label

LOAD_SWITCH_INTERVAL = 0.05  # seconds (Python's default is 0.005)


def loading_label(path: Path) -> str:
    """``context.jsonl (86.1 MB)``: what is being loaded, and how much."""
    target = path / "context.jsonl" if path.is_dir() else path
    try:
        size = target.stat().st_size
    except OSError:
        return visible(str(path))
    return f"{visible(target.name)} ({size / 1e6:.1f} MB)"


class ReviewApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "kimi-compact-tui"
    COMMANDS = App.COMMANDS | {ReviewCommands}
    BINDINGS = [
        Binding("enter", "detail", "Detail", show=False, id="detail"),
        Binding("b", "boundary", "Up to here", id="boundary"),
        Binding("escape", "reset_boundary", "Tail", key_display="esc", id="reset"),
        Binding("p", "preview", "Preview", id="preview"),
        Binding("i", "instructions", "Instruct", id="instructions"),
        Binding("m", "model", "Model", id="model"),
        Binding("c", "compact", "Compact", id="compact"),
        Binding("d", "diff", "Diff", id="diff"),
        Binding("e", "edit", "Edit", id="edit"),
        Binding("w", "write", "Write", id="write"),
        Binding("u", "undo", "Undo", id="undo"),
        Binding("slash", "search", "Search", key_display="/", id="search"),
        Binding("n", "search_next", "Next match", show=False, id="search_next"),
        Binding("N", "search_prev", "Previous match", show=False, id="search_prev"),
        Binding("o", "open", "Open", show=False, id="open"),
        Binding("question_mark", "help", "Help", key_display="?", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
    ]

    def __init__(
        self,
        state: ReviewState,
        session_path: str | Path | None = None,
        *,
        up_to: int | None = None,
    ) -> None:
        super().__init__()
        self.state = state
        self.session_arg = session_path
        self.initial_up_to = up_to
        self.last_search = ""
        self.last_error: str | None = None

    # --- layout -------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        yield Static(Text(""), id="system-prompt")
        with Horizontal(id="main"):
            yield MessageList(id="messages")
            yield DetailPane(id="detail")
        yield Legend(id="legend")
        yield StatusLine(id="status")
        yield KeysFooter(compact=True, show_command_palette=False)

    @property
    def message_list(self) -> MessageList:
        # Held from mount on: App.query_one searches the active screen, which is a
        # dialog or the picker whenever one is open.
        found = getattr(self, "_message_list", None)
        return found if found is not None else self._main("#messages", MessageList)

    def _main(self, selector: Any, expect: Any = None) -> Any:
        """A widget of the main screen (the bottom of the stack), whatever
        dialog or picker is open above it."""
        screen = self.screen_stack[0] if self.screen_stack else self.screen
        return screen.query_one(selector, expect) if expect else screen.query_one(selector)

    def on_mount(self) -> None:
        self._message_list = self._main("#messages", MessageList)
        self._detail_pane = self._main(DetailPane)
        self._main("#system-prompt").display = False
        if self.state.session is not None:
            self._show_session()
        elif self.session_arg is not None:
            self.load(self.session_arg, up_to=self.initial_up_to)
        else:
            self.action_open()

    def on_unmount(self) -> None:
        gc.unfreeze()  # see ReviewState.load: let the collector reclaim it all again

    # --- loading ------------------------------------------------------------------
    def load(self, path: str | Path, *, up_to: int | None = None) -> None:
        self.message_list.show_loading(f"Loading {loading_label(Path(path))}…")
        self._load_worker(Path(path), up_to)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load_worker(self, path: Path, up_to: int | None) -> None:
        before = self.state.session
        # While a session loads the screen only shows a still line: let the loading
        # thread hold the GIL longer before the event loop takes it back.
        switch = sys.getswitchinterval()
        sys.setswitchinterval(LOAD_SWITCH_INTERVAL)
        try:
            self.state.load(path)
            if up_to is not None:
                self.state.set_boundary(up_to - 1)
        except UserError as exc:
            loaded = self.state.session is not before
            self.call_from_thread(self._load_done, str(exc), loaded)
        except Exception as exc:  # never a traceback: one line, like the CLI
            self.call_from_thread(self._load_done, f"{path}: cannot open ({exc})", False)
        else:
            self.call_from_thread(self._load_done, None, True)
        finally:
            sys.setswitchinterval(switch)

    def _load_done(self, error: str | None, loaded: bool) -> None:
        self.message_list.show_loading(None)
        if loaded or self.state.session is not None:  # the new session, or the one before
            self._show_session()
        if error is not None:
            if self.state.session is None:
                self.action_open()  # the picker, with the error dialog above it
            self.show_error(error, "Cannot open the session", dialog=True)

    def _show_session(self) -> None:
        state = self.state
        session = state.session
        assert session is not None
        self.sub_title = session_label(state.session_path)
        pinned = self._main("#system-prompt", Static)
        if session.system_prompt is not None:
            text = Text("system prompt ", style="bold")
            text.append("(session metadata, kept) ", style="dim")
            text.append(one_line(session.system_prompt, 300))
            pinned.update(text)
        pinned.display = session.system_prompt is not None
        self.message_list.set_messages(session.messages, state.message_tokens, self._region_of())
        self.message_list.focus()
        self.refresh_view()

    def _region_of(self):
        prep = self.state.preparation
        if prep is None:
            return None
        if not prep.enabled:  # disabled: nothing will happen, so no misleading regions
            return lambda _index: REGION_KEPT
        return prep.plan.region_of

    def refresh_view(self) -> None:
        """Re-read the state: regions, legend, status, detail and the keys."""
        ml = self.message_list
        region_of = self._region_of()
        if region_of is not None:
            ml.set_regions(region_of)
        self._main(Legend).update_from(
            self.state, lambda r: ml.get_component_rich_style(f"message-list--{r}")
        )
        self._main(StatusLine).update_from(self.state)
        self._show_detail(ml.cursor)
        self.refresh_bindings()

    def on_message_list_highlighted(self, event: MessageList.Highlighted) -> None:
        self._show_detail(event.index)

    def on_message_list_selected(self, event: MessageList.Selected) -> None:
        self.action_detail()

    def _show_detail(self, index: int) -> None:
        detail = getattr(self, "_detail_pane", None)
        if detail is None or not detail.is_attached:  # not mounted yet, or shutting down
            return
        session, prep = self.state.session, self.state.preparation
        if session is None or not 0 <= index < len(session.messages):
            detail.clear("no message")
            return
        region = self.message_list.region_at(index)
        in_request = (
            self.state.can_compact and prep is not None and index in prep.plan.request_indices
        )
        tokens = self.state.message_tokens[index]
        detail.show(
            render_detail(session.messages[index], index, region, tokens, in_request=in_request)
        )

    def show_error(self, message: str, title: str = "Error", *, dialog: bool = False) -> None:
        self.last_error = message
        if dialog:
            self.push_screen(ErrorDialog(message, title=title))
        else:
            self.notify(visible(message), title=title, severity="error", markup=False, timeout=10)

    def _apply(self, change, *args: Any) -> None:
        """Run a state change; a UserError becomes a notification."""
        try:
            change(*args)
        except UserError as exc:
            self.show_error(str(exc))
        self.refresh_view()

    # --- keys ---------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in MAIN_ACTIONS:
            return True
        if len(self.screen_stack) > 1:
            return False  # the main keys belong to the main screen
        return self.check_action_main(action)

    def check_action_main(self, action: str) -> bool | None:
        """Whether ``action`` is available on the main screen (True), shown but
        unavailable (None) or absent (False: compaction disabled)."""
        if action not in MAIN_ACTIONS:
            return True
        return availability(self.state, action)

    def command_entries(self) -> list[tuple[str, str, str]]:
        return [(k, a, d) for k, a, d in HELP_KEYS if a]

    def action_detail(self) -> None:
        detail = self._detail_pane
        if detail.has_focus_within:
            self.message_list.focus()
        else:
            detail.focus()

    def action_boundary(self) -> None:
        self._apply(self.state.set_boundary, self.message_list.cursor)

    def action_reset_boundary(self) -> None:
        self._apply(self.state.set_boundary, None)

    def action_preview(self) -> None:
        self.push_screen(PreviewScreen(self.state))

    def action_instructions(self) -> None:
        def done(text: str | None) -> None:
            if text is not None:
                self._apply(self.state.set_custom_instruction, text)

        screen = InstructionsScreen(self.state.custom_instruction)
        self.push_screen(screen, done)

    def action_model(self) -> None:
        def done(model: str | None) -> None:
            if model is not None:
                self._apply(self.state.set_compaction_model, model)

        screen = ModelScreen(self.state.compaction_model, self.state.compaction_model_suggestions())
        self.push_screen(screen, done)

    def action_compact(self) -> None:
        self.push_screen(StreamScreen(self.state), lambda _r: self.refresh_view())

    def action_diff(self) -> None:
        self.push_screen(DiffScreen(self.state))

    def action_edit(self) -> None:
        def done(text: str | None) -> None:
            if text is not None:
                self._apply(self.state.set_summary, text)

        self.push_screen(EditSummaryScreen(self.state), done)

    def action_write(self) -> None:
        def done(ok: bool | None) -> None:
            if ok:
                self._write_worker()

        self.push_screen(ConfirmWriteScreen(self.state), done)

    @work(thread=True, exclusive=True, group="apply", exit_on_error=False)
    def _write_worker(self) -> None:
        self._file_op(self.state.write, "Writing the compacted session…")

    def action_undo(self) -> None:
        if self.state.session_path is not None:
            self._undo_worker()

    @work(thread=True, exclusive=True, group="apply", exit_on_error=False)
    def _undo_worker(self) -> None:
        self._file_op(self.state.undo, "Restoring the session…")

    def _file_op(self, op, progress: str) -> None:
        """Run a write or undo in this worker thread, then reload the session."""
        self.call_from_thread(self.notify, progress, markup=False, timeout=3)
        self.call_from_thread(setattr, self.message_list, "loading", True)
        message = error = None
        try:
            message = op()
            self.state.reload()
        except UserError as exc:
            error = str(exc)
        except Exception as exc:  # never a traceback
            error = f"{exc.__class__.__name__}: {exc}"
        self.call_from_thread(self._file_op_done, message, error)

    def _file_op_done(self, message: str | None, error: str | None) -> None:
        self.message_list.loading = False
        if self.state.session is not None:
            self._show_session()
        if message:
            self.notify(visible(message), markup=False, timeout=8)
        if error:
            self.show_error(error, dialog=True)

    def action_search(self) -> None:
        def done(query: str | None) -> None:
            if query:
                self.last_search = query
                self._search(forward=True)

        self.push_screen(SearchScreen(self.last_search), done)

    def action_search_next(self) -> None:
        self._search(forward=True)

    def action_search_prev(self) -> None:
        self._search(forward=False)

    def _search(self, *, forward: bool) -> None:
        from kimi_compact_tui.tui.screens.search import find_message

        if not self.last_search or self.state.session is None:
            return
        ml = self.message_list
        found = find_message(self.state.session.messages, self.last_search, ml.cursor, forward)
        if found is None:
            self.notify(f"not found: {visible(self.last_search)}", markup=False, timeout=3)
        else:
            ml.move_to(found)

    def action_help(self) -> None:
        self.push_screen(HelpScreen([(k, d) for k, _a, d in HELP_KEYS]))

    def action_open(self) -> None:
        def done(path: str | Path | None) -> None:
            if path is not None:
                self.load(path)
            elif self.state.session is None:
                self.exit()

        self.push_screen(PickerScreen(), done)


def create_app(
    session_path: str | Path | None = None,
    *,
    config_path: str | Path | None = None,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    prompt_file: str | None = None,
    up_to: int | None = None,
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
    return ReviewApp(state, session_path, up_to=up_to)

"""The main screen: message list, detail, legend, status and the review keys.

Returned by ``ReviewApp.get_default_screen``. It reads :class:`ReviewState`
and changes it only through its methods. File operations (write, undo,
restore) and loading belong to the app, which runs them in worker threads;
this screen asks for them. A key that is shown but unavailable says why in a
short notification instead of doing nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Header, Static
from textual.worker import Worker, WorkerState

from kimi_compact_tui.compaction.pairs import safe_boundaries
from kimi_compact_tui.compaction.plan import REGION_KEPT
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.sanitize import one_line, visible
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.flow import (
    AddInstructions,
    FlowRequest,
    JumpToMessage,
    OpenEditor,
    RerunRequested,
    ReviseRequested,
    WriteRequested,
)
from kimi_compact_tui.tui.keys import MAIN_KEYS
from kimi_compact_tui.tui.screens.candidates import CandidatesScreen, FeedbackOn
from kimi_compact_tui.tui.screens.confirm import AskScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.edit import EditSummaryScreen
from kimi_compact_tui.tui.screens.feedback import ask_feedback
from kimi_compact_tui.tui.screens.help import HelpScreen
from kimi_compact_tui.tui.screens.instructions import InstructionsScreen
from kimi_compact_tui.tui.screens.model import ModelScreen
from kimi_compact_tui.tui.screens.preview import PreviewScreen
from kimi_compact_tui.tui.screens.prompt_edit import EditPromptScreen
from kimi_compact_tui.tui.screens.search import SearchScreen, find_message
from kimi_compact_tui.tui.screens.stream import StreamScreen
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.detail import DetailPane, render_detail
from kimi_compact_tui.tui.widgets.footer import KeysFooter
from kimi_compact_tui.tui.widgets.legend import Legend
from kimi_compact_tui.tui.widgets.message_list import MessageList
from kimi_compact_tui.tui.widgets.status import StatusLine, session_label

#: What a change of boundary, instructions or model discards.
DISCARD_TITLE = "Discard the summary?"


class MainScreen(Screen[None]):
    BINDINGS = keys.bindings(MAIN_KEYS)

    def __init__(self, state: ReviewState) -> None:
        super().__init__(id="main-screen")
        self.state = state
        self.last_search = ""
        self._safe_for: int | None = None  # the load generation being scanned

    @property
    def review(self) -> Any:
        """The app (a ReviewApp: it owns loading, writing and restoring)."""
        return self.app

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
        return self.query_one("#messages", MessageList)

    def on_mount(self) -> None:
        self.query_one("#system-prompt").display = False
        self.review.main_ready()

    def show_session(self) -> None:
        state = self.state
        session = state.session
        assert session is not None
        self.sub_title = session_label(session)
        self.app.sub_title = self.sub_title
        pinned = self.query_one("#system-prompt", Static)
        system_prompt = session.meta.system_prompt
        if system_prompt is not None:
            text = Text("system prompt ", style="bold")
            text.append("(session metadata, kept) ", style="dim")
            text.append(one_line(system_prompt, 300))
            pinned.update(text)
        pinned.display = system_prompt is not None
        self.message_list.set_messages(session.messages, state.message_tokens, self._region_of())
        self.message_list.focus()
        self.refresh_view()

    @work(
        thread=True,
        exclusive=True,
        group="safe",
        name="safe",
        description="safe",
        exit_on_error=False,
    )
    def _find_safe_boundaries(self, generation: int, session: Session) -> tuple[int, list[bool]]:
        """Which boundaries keep every tool call with its results (off the UI thread)."""
        return generation, safe_boundaries(session.messages)

    def _region_of(self) -> Callable[[int], str] | None:
        prep = self.state.preparation
        if prep is None:
            return None
        if not prep.enabled:  # disabled: nothing will happen, so no misleading regions
            return lambda _index: REGION_KEPT
        return prep.plan.region_of

    def refresh_view(self) -> None:
        """Re-read the state: regions, legend, status, detail and the keys."""
        if not self.is_attached:
            return
        ml = self.message_list
        region_of = self._region_of()
        if region_of is not None:
            ml.set_regions(region_of)
        legend = self.query_one(Legend)
        legend.update_from(self.state, lambda r: ml.get_component_rich_style(f"message-list--{r}"))
        legend.display = not self.state.known_splits  # the status's warning takes its line
        self.query_one(StatusLine).update_from(self.state)
        self._show_detail(ml.cursor)
        self.refresh_bindings()
        state = self.state
        # An explicit boundary may split a tool exchange (the default tail never
        # should): find the safe boundaries once per session, off the UI thread.
        if state.safe is None and state.up_to is not None and state.session is not None:
            if self._safe_for != state.generation:
                self._safe_for = state.generation
                self._find_safe_boundaries(state.generation, state.session)

    def on_message_list_highlighted(self, event: MessageList.Highlighted) -> None:
        self._show_detail(event.index)

    def on_message_list_selected(self, event: MessageList.Selected) -> None:
        self.action_detail()

    def _show_detail(self, index: int) -> None:
        if not self.is_attached:  # shutting down
            return
        detail = self.query_one(DetailPane)
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

    def _apply(self, change: Callable[..., Any], *args: Any) -> None:
        """Run a state change; a UserError becomes a notification."""
        try:
            change(*args)
        except UserError as exc:
            self.review.show_error(str(exc))
        self.refresh_view()

    def _replan(self, what: str, change: Callable[..., Any], *args: Any) -> None:
        """A change that discards the summary (or edit): asked first when one exists."""
        if not self.state.has_work:
            self._apply(change, *args)
            return
        edited = " and your edit" if self.state.summary_edited else ""
        note = self.state.revision_note()
        body = f"{what} discards the summary{note}{edited}: a new one must be compacted (c)."

        def done(ok: bool | None) -> None:
            if ok:
                self._apply(change, *args)

        self.app.push_screen(AskScreen(DISCARD_TITLE, body, yes="Discard (y)"), done)

    # --- keys ---------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return keys.check(MAIN_KEYS, action, self.state)

    def footer_priority(self) -> tuple[str, ...]:
        """The keys the footer shows first: once a summary exists, write, diff and
        edit (found only through ? at 80 columns before); else compact."""
        if self.state.summary is not None:
            return ("write", "diff", "edit", "compact", "candidates")
        return ("compact", "boundary", "preview", "instructions")

    def on_key(self, event: events.Key) -> None:
        """A review key that is unavailable now says why (the binding does not run)."""
        key = keys.key_for(MAIN_KEYS, event.key)
        if key is None or self.check_action(key.action, ()) is True:
            return
        event.stop()
        event.prevent_default()
        reason = keys.why_not(MAIN_KEYS, key.action, self.state)
        self.notify(visible(reason), markup=False, timeout=4)

    def action_detail(self) -> None:
        detail = self.query_one(DetailPane)
        if detail.has_focus_within:
            self.message_list.focus()
        else:
            detail.focus()

    def action_boundary(self) -> None:
        self._replan("Moving the boundary", self.state.set_boundary, self.message_list.cursor)

    def action_reset_boundary(self) -> None:
        self._replan("Going back to the default tail", self.state.set_boundary, None)

    def action_safe_boundary(self) -> None:
        def move() -> None:
            up_to = self.state.move_to_safe_boundary()
            self.message_list.move_to(up_to - 1)
            self.notify(f"boundary moved: up to message {up_to}", markup=False, timeout=4)

        self._replan("Moving the boundary", move)

    def action_preview(self) -> None:
        prep = self.state.preparation
        if prep is None or prep.build_request is None:
            self.app.push_screen(PreviewScreen(self.state))
            return
        self._build_request(prep.build_request)

    @work(
        thread=True,
        exclusive=True,
        group="request",
        name="request",
        description="request",
        exit_on_error=False,
    )
    def _build_request(self, build: Callable[[], Any]) -> Any:
        """The exact request, built off the UI thread (its messages and body
        too: about 1 s at 100,000 messages)."""
        return build().build()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name == "safe" and event.state == WorkerState.SUCCESS:
            result = event.worker.result
            assert isinstance(result, tuple)
            generation, safe = result
            self.state.set_safe(generation, safe)
            self.refresh_view()
        if event.worker.name != "request":
            return
        if event.state == WorkerState.SUCCESS:
            self.app.push_screen(PreviewScreen(self.state, event.worker.result))
        elif event.state == WorkerState.ERROR:
            self.review.show_error(f"cannot build the request: {event.worker.error}")

    def action_instructions(self) -> None:
        def done(text: str | None) -> None:
            if text is not None and text != self.state.custom_instruction:
                self._replan("New instructions", self.state.set_custom_instruction, text)

        self.app.push_screen(InstructionsScreen(self.state.custom_instruction), done)

    def action_prompt(self) -> None:
        def done(text: str | None) -> None:
            if text is not None and text != self.state.prompt.text:
                self._replan("Another prompt", self.state.set_prompt_text, text or None)

        prompt = self.state.prompt
        self.app.push_screen(EditPromptScreen(prompt.text, prompt.describe()), done)

    def action_model(self) -> None:
        def done(model: str | None) -> None:
            if model is not None:
                self._replan("Another model", self.state.set_compaction_model, model)

        screen = ModelScreen(self.state.compaction_model, self.state.compaction_model_suggestions())
        self.app.push_screen(screen, done)

    def _after_flow(self, request: FlowRequest | None) -> None:
        """Back from a flow screen: refresh, and do what it asked for."""
        self.refresh_view()
        if isinstance(request, WriteRequested):
            self.action_write()
        elif isinstance(request, RerunRequested):
            self.app.push_screen(StreamScreen(self.state, run=True), self._after_flow)
        elif isinstance(request, ReviseRequested):
            revision = StreamScreen(self.state, revision=request.link)
            self.app.push_screen(revision, self._after_flow)
        elif isinstance(request, JumpToMessage):
            self.message_list.move_to(request.number - 1)
            self.message_list.focus()
        elif isinstance(request, OpenEditor):
            screen = EditSummaryScreen(self.state, append=request.block)
            self.app.push_screen(screen, lambda _r: self.refresh_view())
        elif isinstance(request, AddInstructions):
            old = self.state.custom_instruction.rstrip()
            text = f"{old}\n\n{request.text}" if old else request.text

            def change() -> None:
                self.state.set_custom_instruction(text)
                self.app.push_screen(StreamScreen(self.state, run=True), self._after_flow)

            self._replan("New instructions", change)

    def action_candidates(self) -> None:
        def done(number: int | FeedbackOn | None) -> None:
            if isinstance(number, FeedbackOn):
                self.feedback_on(number.number)
            elif number is not None:
                self._apply(self.state.choose_candidate, number)
                if self.state.summary is not None and self.state.runs.candidates.chosen == number:
                    self.notify(f"candidate #{number} is the summary to write", markup=False)

        self.app.push_screen(
            CandidatesScreen(self.state.runs.candidates, self.state.runs.links), done
        )

    def feedback_on(self, number: int) -> None:
        """Feedback on candidate ``number`` (``f`` on the candidates screen): the
        box, then its revision streams (asked first when it is the summary under
        review and an edit: the revision replaces the edit)."""
        state = self.state
        result = state.runs.results.get(number)
        if result is None:
            return
        under = result is state.stream_result and state.summary is not None
        summary = (state.summary_to_write or result.summary) if under else result.summary
        edited = under and state.summary_edited
        link = state.runs.links.get(number)

        def send(feedback: str) -> None:
            self._after_flow(ReviseRequested(state.revision_link(number, summary, feedback)))

        rounds = len(link.rounds) if link is not None else 0
        offline = state.provider is None or state.provider.offline
        ask_feedback(self, number, summary, send, rounds=rounds, edited=edited, offline=offline)

    def action_compact(self) -> None:
        self.app.push_screen(StreamScreen(self.state), self._after_flow)

    def action_diff(self) -> None:
        self.app.push_screen(DiffScreen(self.state), self._after_flow)

    def action_edit(self) -> None:
        self.app.push_screen(EditSummaryScreen(self.state), lambda _r: self.refresh_view())

    def action_write(self) -> None:
        self.review.confirm_write()

    def action_undo(self) -> None:
        self.review.confirm_undo()

    def action_restore_points(self) -> None:
        self.review.pick_restore_point()

    def action_search(self) -> None:
        def done(query: str | None) -> None:
            if query:
                self.last_search = query
                self._search(forward=True)

        self.app.push_screen(SearchScreen(self.last_search), done)

    def action_search_next(self) -> None:
        self._search(forward=True)

    def action_search_prev(self) -> None:
        self._search(forward=False)

    def _search(self, *, forward: bool) -> None:
        if not self.last_search or self.state.session is None:
            return
        ml = self.message_list
        found = find_message(self.state.session.messages, self.last_search, ml.cursor, forward)
        if found is None:
            self.notify(f"not found: {visible(self.last_search)}", markup=False, timeout=3)
        else:
            ml.move_to(found)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_reload(self) -> None:
        self.review.reload_session()

    def action_ledger(self) -> None:
        self.review.open_ledger()

    def action_allow_once(self) -> None:
        self.review.allow_held()

    def action_open(self) -> None:
        self.review.open_picker()

    def action_quit(self) -> None:
        self.review.quit_review()

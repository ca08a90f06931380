"""Preview of the compaction request: exactly what will be sent.

Tabs: the synthetic transcript (``## Message N`` blocks), the prompt with its
provenance, the custom instructions, and the JSON body POSTed to the provider
(pretty-printed; it never holds a key or tools). Each is a read-only
``TextArea`` so text can be selected; ``b`` and ``t`` copy the exact body and
transcript to the clipboard. Token figures sit on top. A no-op plan (or
disabled compaction) shows its reason instead.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import (
    LoadingIndicator,
    Static,
    TabbedContent,
    TabPane,
    TextArea,
)
from textual.worker import Worker, WorkerState

from kimi_compact_tui.compaction.request import CUSTOM_INSTRUCTION_HEADER
from kimi_compact_tui.sanitize import one_line, visible
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.footer import KeysFooter
from kimi_compact_tui.tui.widgets.stream_view import raw_area
from kimi_compact_tui.tui.widgets.text_lines import TextLines
from kimi_compact_tui.wording import noop_line, span

EXACT_BADGE = "exact kimi-cli prompt"


_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _nested(value: Any) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return any(isinstance(v, dict | list) and v for v in items)


def _pretty(value: Any, level: int, out: list[str]) -> None:
    if isinstance(value, dict | list) and value and _nested(value):
        pad = "  " * (level + 1)
        is_dict = isinstance(value, dict)
        out.append("{\n" if is_dict else "[\n")
        items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        for n, (key, item) in enumerate(items):
            out.append(pad)
            if is_dict:
                out.append(_ENCODER.encode(key) + ": ")
            _pretty(item, level + 1, out)
            out.append(",\n" if n < len(items) - 1 else "\n")
        out.append("  " * level + ("}" if is_dict else "]"))
    else:
        out.append(_ENCODER.encode(value))


def body_json(body: dict[str, Any]) -> str:
    """The request body as readable JSON: nested objects indented, each flat
    object (a message part) on one line. It parses to exactly the body sent;
    much faster than ``indent=`` for a 100,000-message request."""
    out: list[str] = []
    _pretty(body, 0, out)
    return "".join(out)


#: Texts longer than this are shown in a line-based view (TextArea is too slow).
BIG_TEXT = 200_000


def read_only_area(text: str, *, id: str, soft_wrap: bool = True) -> TextArea | TextLines:
    """A selectable read-only view of ``text``: a TextArea, or for a long
    text the line-based :class:`TextLines`."""
    if len(text) > BIG_TEXT:
        return TextLines(text, id=id)
    return raw_area(text, id=id, soft_wrap=soft_wrap, show_cursor=True)


def token_line(state: ReviewState, request: Any = None) -> Text:
    """The token figures: the state's one before/after estimate (as on the
    status line, the diff and the confirm dialog) and the request's size."""
    text = Text("tokens: ", style="bold")
    recorded = state.session.meta.recorded_tokens if state.session is not None else None
    if recorded is not None:
        text.append(f"recorded {recorded:,} · ")
    text.append(f"estimated {state.tokens_before:,} → ~{state.tokens_after():,}")
    if request is not None and request.estimated_input_tokens():
        text.append(f" · request ~{request.estimated_input_tokens():,}")
    return text


def prompt_line(prompt: Any) -> Text:
    text = Text("prompt: ", style="bold")
    text.append(one_line(prompt.source, 40), style="cyan")
    if prompt.path:
        text.append(" ")
        text.append(one_line(str(prompt.path), 120))
    text.append(f" · sha256 {prompt.sha256[:16]}")
    if prompt.upstream_exact:
        text.append(" ")
        text.append(f" {EXACT_BADGE} ", style="bold black on green")
    return text


class PreviewScreen(Screen[None]):
    """What ``c`` would send, before it is sent."""

    BINDINGS = keys.bindings(keys.PREVIEW_KEYS)

    DEFAULT_CSS = """
    PreviewScreen #preview-head {
        height: auto;
        padding: 0 1;
    }
    PreviewScreen #preview-title {
        text-style: bold;
    }
    PreviewScreen #preview-noop {
        padding: 1 2;
        color: $warning;
        text-style: bold;
    }
    PreviewScreen TabbedContent {
        height: 1fr;
    }
    PreviewScreen TabPane {
        padding: 0;
    }
    PreviewScreen TextArea {
        height: 1fr;
    }
    """

    def __init__(
        self,
        state: ReviewState,
        request: Any = None,
        *,
        name: str | None = None,
        id: str | None = None,
    ) -> None:
        """``request`` is the built request (the main screen builds it in a
        thread worker); without it, the preparation builds it here."""
        super().__init__(name=name, id=id)
        self.state = state
        self.preparation = state.preparation
        if request is None and self.preparation is not None and not self.preparation.plan.noop:
            request = self.preparation.request
        self.request = request
        self._body_text: str | None = None
        self.transcript = request.transcript if request is not None else ""

    @property
    def body_text(self) -> str:
        """The body as shown and copied (built once, on first use)."""
        if self._body_text is None:
            self._body_text = body_json(self.request.body) if self.request is not None else ""
        return self._body_text

    def _reason(self) -> str | None:
        prep = self.preparation
        if prep is None:
            return "no session is loaded"
        if not prep.enabled:
            return f"compaction is disabled: {prep.disabled_reason}"
        if prep.plan.noop:
            return noop_line(prep.plan.noop)
        if self.request is None:
            return "nothing to compact"
        return None

    def _title(self) -> Text:
        prep = self.preparation
        text = Text("Request preview", style="bold")
        if prep is None or self.request is None:
            return text
        plan = prep.plan
        sent = len(plan.request_indices)
        text.append(
            f" · sends {span(1, sent)} · replaces {len(plan.compact_indices):,}"
            f" · keeps {len(plan.preserved_indices):,}"
        )
        if plan.mode == "explicit":
            text.append(f" · explicit boundary at message {plan.up_to}")
        if self.request.model:
            text.append(" · model ")
            text.append(one_line(str(self.request.model), 60), style="bold cyan")
        return text

    def compose(self) -> ComposeResult:
        prep = self.preparation
        reason = self._reason()
        with Vertical(id="preview-head"):
            yield Static(self._title(), id="preview-title")
            if prep is not None:
                yield Static(token_line(self.state, self.request), id="tokens")
                yield Static(prompt_line(prep.prompt), id="prompt-source")
        if reason is not None:
            yield Static(Text(visible(reason)), id="preview-noop")
            yield KeysFooter()
            return
        assert self.request is not None
        custom = self.request.custom_instruction
        with TabbedContent(id="preview-tabs"):
            with TabPane("Transcript", id="tab-transcript"):
                yield read_only_area(self.transcript, id="transcript")
            with TabPane("Prompt", id="tab-prompt"):
                yield read_only_area(self.request.prompt.text, id="prompt")
            with TabPane("Custom instructions", id="tab-custom"):
                if custom:
                    yield read_only_area(
                        CUSTOM_INSTRUCTION_HEADER.lstrip("\n") + custom, id="custom"
                    )
                else:
                    yield Static(
                        Text("No custom instructions (press i on the main screen to add some)."),
                        id="custom-none",
                    )
            with TabPane("Body (JSON)", id="tab-body"):
                yield LoadingIndicator(id="body-loading")
        yield KeysFooter()

    def on_mount(self) -> None:
        if self.request is not None and self._reason() is None:
            self._build_body()

    @work(
        thread=True,
        exclusive=True,
        group="preview-body",
        name="body",
        description="body",
        exit_on_error=False,
    )
    def _build_body(self) -> str:
        """Build the JSON text off the UI thread (seconds for 100,000 messages)."""
        return body_json(self.request.body) if self.request is not None else ""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name == "body" and event.state == WorkerState.SUCCESS:
            self._body_text = str(event.worker.result)
            self._show_body(self._body_text)

    def _show_body(self, text: str) -> None:
        pane = self.query_one("#tab-body", TabPane)
        for loading in pane.query("#body-loading"):
            loading.remove()
        pane.mount(read_only_area(text, id="body", soft_wrap=False))

    # --- actions ------------------------------------------------------------------
    def action_close(self) -> None:
        self.dismiss(None)

    def action_copy_body(self) -> None:
        if not self.body_text:
            self.notify("Nothing to copy: no request", severity="warning", markup=False)
            return
        self.app.copy_to_clipboard(self.body_text)
        self.notify(f"Copied the request body ({len(self.body_text):,} characters)", markup=False)

    def action_copy_transcript(self) -> None:
        if not self.transcript:
            self.notify("Nothing to copy: no request", severity="warning", markup=False)
            return
        self.app.copy_to_clipboard(self.transcript)
        self.notify(f"Copied the transcript ({len(self.transcript):,} characters)", markup=False)

"""The live view of a streaming summary: reasoning (dimmed) above the summary.

Chunks are only collected by :meth:`StreamView.push_text` and
:meth:`StreamView.push_reasoning`; the screen calls :meth:`flush` on a timer
(about every 50 ms), so thousands of tiny chunks become a few appends to a
plain-text widget. Once finished, the pane titled "summary as it will be
written" shows exactly the raw text (tags and backticks included); rendered
Markdown is an optional view (:meth:`StreamView.toggle_markdown`), built
once by :meth:`finish`, never per chunk. :class:`SummaryPane` is the same
raw/rendered pair for the diff screen. Everything shown passes through
:func:`visible` (controls and bidi overrides made visible) and is never
parsed as markup.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Markdown, Static, TextArea

from kimi_compact_tui.compaction.contract import SECTIONS, check_sections
from kimi_compact_tui.providers import StreamResult
from kimi_compact_tui.sanitize import one_line, visible
from kimi_compact_tui.tui.stream_buffer import StreamBuffer

#: While streaming, only the end of a long reasoning text is shown.
REASONING_TAIL = 6000


def markdown_parser() -> MarkdownIt:
    """CommonMark + tables, with raw HTML shown as text: the summary's
    ``<current_focus>`` tags must stay visible, not vanish as HTML blocks."""
    return MarkdownIt("gfm-like", {"html": False})


_SECTION_TAG = re.compile(
    r"^[ \t]*<[ \t]*(/?)[ \t]*(" + "|".join(SECTIONS) + r")[ \t]*>[ \t]*$", re.IGNORECASE
)


def display_markdown(summary: str) -> str:
    """The summary as given to the Markdown widget (display only; what is
    written is never changed): controls made visible, and each section's
    opening tag on its own line shown as a heading naming the tag, its
    closing tag dropped, so the sections read as sections instead of running
    into the paragraphs around them."""
    lines = []
    for line in visible(summary, tabs=None).split("\n"):
        m = _SECTION_TAG.match(line)
        if m is None:
            lines.append(line)
        elif m.group(1):
            lines.append("")
        else:
            lines += ["", f"### <{m.group(2).lower()}>", ""]
    return "\n".join(lines).strip("\n")


def outcome_lines(result: StreamResult) -> list[tuple[str, str]]:
    """(text, style) lines saying plainly how the run ended."""
    out: list[tuple[str, str]] = []
    if result.status == "complete":
        chars = len(result.summary)
        size = result.figures().tokens_text()  # the run's one figure, as everywhere
        if not result.summary.strip():
            out.append(("complete, but the summary is empty: nothing can be written", "bold red"))
        else:
            out.append((f"complete — {chars:,} characters, {size}", "bold green"))
            check = check_sections(result.summary)
            if check.ok:
                out.append((f"✓ {check.describe()}", "green"))
            for warning in check.warnings():
                out.append((f"⚠ {warning} (a warning: the summary can still be written)", "yellow"))
    elif result.status == "truncated":
        reason = f" (finish reason: {result.finish_reason})" if result.finish_reason else ""
        out.append(
            (
                f"truncated — the model stopped before the summary was finished{reason}; "
                "it cannot be written",
                "bold red",
            )
        )
    elif result.status == "cancelled":
        out.append(("cancelled — the stream was stopped; nothing can be written", "bold yellow"))
    else:
        error = one_line(result.error or "unknown error", 300)
        out.append((f"failed — {error}; nothing can be written", "bold red"))
    return out


class SummaryMarkdown(Markdown):
    """Markdown for model text: no raw HTML, no link following."""

    def __init__(self, summary: str = "", **kwargs: Any) -> None:
        super().__init__(
            display_markdown(summary),
            parser_factory=markdown_parser,
            open_links=False,
            **kwargs,
        )


WRITTEN_TITLE = "summary as it will be written"
RENDERED_TITLE = "summary rendered as Markdown (display only; m: raw text)"


def raw_area(
    text: str, *, soft_wrap: bool = True, show_cursor: bool = False, **kwargs: Any
) -> TextArea:
    """A read-only plain-text view of ``text`` (controls made visible, no line
    numbers), without a cursor unless ``show_cursor``."""
    area = TextArea(
        visible(text, tabs=None),
        read_only=True,
        soft_wrap=soft_wrap,
        show_line_numbers=False,
        show_cursor=show_cursor,
        **kwargs,
    )
    area.cursor_blink = False
    return area


class SummaryPane(Vertical):
    """The summary as it will be written (raw text), or rendered (``toggle``)."""

    DEFAULT_CSS = """
    SummaryPane { border: round $success; }
    SummaryPane > TextArea { height: 1fr; border: none; }
    SummaryPane > VerticalScroll { height: 1fr; display: none; }
    SummaryPane.rendered > TextArea { display: none; }
    SummaryPane.rendered > VerticalScroll { display: block; }
    """

    def __init__(self, summary: str, *, prefix: str = "summary", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.summary = summary
        self.prefix = prefix
        self.border_title = WRITTEN_TITLE

    def compose(self) -> ComposeResult:
        yield raw_area(self.summary, id=f"{self.prefix}-raw")
        with VerticalScroll():
            yield SummaryMarkdown("", id=f"{self.prefix}-md")  # rendered on the first toggle

    @property
    def rendered(self) -> bool:
        return self.has_class("rendered")

    def set_summary(self, summary: str) -> None:
        """Show another text (the summary with pinned items, after a pin)."""
        if summary == self.summary:
            return
        self.summary = summary
        self.query_one(f"#{self.prefix}-raw", TextArea).load_text(visible(summary, tabs=None))
        if self.rendered:
            self.query_one(SummaryMarkdown).update(display_markdown(summary))

    def toggle(self) -> None:
        if not self.rendered:
            markdown = self.query_one(SummaryMarkdown)
            shown = display_markdown(self.summary)
            if markdown.source != shown:
                markdown.update(shown)
        self.toggle_class("rendered")
        self.border_title = RENDERED_TITLE if self.rendered else WRITTEN_TITLE


class StreamView(Vertical):
    """Reasoning (dimmed, separate) and the summary as it streams."""

    DEFAULT_CSS = """
    StreamView {
        height: 1fr;
    }
    StreamView #reasoning-box {
        height: auto;
        max-height: 35%;
        border: round $panel;
        border-title-color: $text-muted;
        display: none;
    }
    StreamView #reasoning-box.has-reasoning {
        display: block;
    }
    StreamView #reasoning {
        color: $text-muted;
        text-style: italic;
    }
    StreamView #summary-live {
        height: 1fr;
        border: round $panel;
    }
    StreamView #summary-box {
        height: 1fr;
        border: round $success;
        display: none;
    }
    StreamView.finished #summary-live {
        border: round $success;
    }
    StreamView.rendered #summary-live {
        display: none;
    }
    StreamView.rendered #summary-box {
        display: block;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Filled by the provider's thread, drained here by the UI thread.
        self.buffer = StreamBuffer()
        self.flushes = 0
        self.finished = False
        self._markdown_source: str | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="reasoning-box") as box:
            box.border_title = "reasoning (not part of the summary)"
            yield Static(Text(""), id="reasoning")
        live = TextArea(
            "",
            id="summary-live",
            read_only=True,
            soft_wrap=True,
            show_line_numbers=False,
            show_cursor=False,
        )
        live.cursor_blink = False
        live.border_title = "summary"
        yield live
        with VerticalScroll(id="summary-box") as box:
            box.border_title = RENDERED_TITLE
            yield SummaryMarkdown("", id="summary-md")

    # --- collecting ---------------------------------------------------------------
    def push_text(self, chunk: str) -> None:
        self.buffer.push_text(chunk)

    def push_reasoning(self, chunk: str) -> None:
        self.buffer.push_reasoning(chunk)

    @property
    def text(self) -> str:
        """All summary text received so far (flushed or not)."""
        return self.buffer.text

    @property
    def reasoning(self) -> str:
        return self.buffer.reasoning

    @property
    def text_chars(self) -> int:
        return self.buffer.text_chars

    @property
    def reasoning_chars(self) -> int:
        return self.buffer.reasoning_chars

    # --- showing ------------------------------------------------------------------
    def flush(self) -> bool:
        """Show what arrived since the last flush. True when anything changed."""
        changed = False
        if self.buffer.take_reasoning():
            self._show_reasoning(final=False)
            changed = True
        chunk = self.buffer.take_text()
        if chunk:
            live = self.query_one("#summary-live", TextArea)
            follow = live.scroll_y >= live.max_scroll_y - 1
            live.insert(visible(chunk, tabs=None), live.document.end)
            if follow:
                self.call_after_refresh(self._follow)
            changed = True
        if changed:
            self.flushes += 1
        return changed

    def _show_reasoning(self, *, final: bool) -> None:
        full = self.buffer.shown_reasoning
        if not full:
            return
        box = self.query_one("#reasoning-box", VerticalScroll)
        box.add_class("has-reasoning")
        if not final and len(full) > REASONING_TAIL:
            cut = len(full) - REASONING_TAIL
            shown = f"… ({cut:,} earlier characters)\n" + full[cut:]
        else:
            shown = full
        self.query_one("#reasoning", Static).update(Text(visible(shown)))
        box.scroll_end(animate=False, immediate=False)

    def finish(self, summary: str | None = None, *, render: bool = True) -> None:
        """Flush, then render the summary (``summary`` or what streamed) as
        Markdown, once. With ``render`` false (a run that did not complete)
        the partial text stays as plain text."""
        self.flush()
        self._show_reasoning(final=True)
        text = self.text if summary is None else summary
        if render and text.strip():
            live = self.query_one("#summary-live", TextArea)
            live.load_text(visible(text, tabs=None))  # exactly the text as written
            live.border_title = WRITTEN_TITLE
            # Reviewed from its start: the cursor too, so a later resize (the
            # retention pane appearing) keeps the start in view.
            live.cursor_location = (0, 0)
            live.scroll_home(animate=False, immediate=True)
            # and once more after the refresh, past any scroll queued while it streamed
            self.call_after_refresh(live.scroll_home, animate=False)
            self._markdown_source = text  # rendered on the first toggle
            self.add_class("finished")
        self.finished = True

    def show_written(self, text: str) -> None:
        """Show ``text`` as the finished summary that will be written (after a
        pin: the model's text with the pinned block), from its start."""
        if not self.finished or not self.has_class("finished"):
            return
        live = self.query_one("#summary-live", TextArea)
        if live.text == visible(text, tabs=None):
            return
        live.load_text(visible(text, tabs=None))
        live.cursor_location = (0, 0)
        live.scroll_home(animate=False, immediate=True)
        if self.has_class("rendered"):
            self.query_one("#summary-md", SummaryMarkdown).update(display_markdown(text))
        else:
            self._markdown_source = text  # rendered on the next toggle

    def _follow(self) -> None:
        """Keep the end of a streaming summary in view (not once it is finished).
        Already after a refresh, so at once: a scroll deferred once more could land
        after :meth:`finish` and leave a finished summary scrolled to its end."""
        if not self.finished:
            self.query_one("#summary-live", TextArea).scroll_end(animate=False, immediate=True)

    def toggle_markdown(self) -> bool:
        """Switch a finished summary between raw text and rendered Markdown;
        False when there is no finished summary to render."""
        if not self.has_class("finished"):
            return False
        source = self._markdown_source
        if source is not None:
            self.query_one("#summary-md", SummaryMarkdown).update(display_markdown(source))
            self._markdown_source = None
        self.toggle_class("rendered")
        return True

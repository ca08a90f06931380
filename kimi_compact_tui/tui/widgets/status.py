"""The status line: format, counts, token figures, model, prompt and provider.

Two lines, each cut with … and never wrapped: the session's figures, then
model · prompt · provider. A split tool exchange adds its warning between them
(the legend's line is given up for it), so the status area stays three lines
at 80x24. The session's name is in the title, not here.

Nothing here is clock- or machine-dependent beyond what the session and config
hold (the prompt shows its source and hash, not an absolute path), so the
picture is stable for snapshots.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.samples import copied_sample
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.tui.state import ReviewState


def session_label(session: Session | None) -> str:
    """A short, stable name for a session file, as its format gives it
    (``<session folder>/context.jsonl`` for kimi-cli, the file name for most),
    saying when it is the copy of a bundled sample that the review opened."""
    if session is None or session.path is None:
        return "(no session)"
    label = visible(session.format.short_name(session.ref))
    origin = copied_sample(session.path)
    if origin is None:
        return label
    return f"{label} (copy of the sample{'' if origin in label else ' ' + visible(origin)})"


def status_text(state: ReviewState) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis", end="")
    session = state.session
    if session is None:
        out.append("no session loaded", style="dim")
        return out
    prep = state.preparation
    n = len(session.messages)
    out.append(session.format.name, style="bold")
    out.append(f" · {n:,} message{'' if n == 1 else 's'}")
    if prep is not None and prep.plan.mode == "explicit" and prep.plan.up_to is not None:
        out.append(f" · up to message {prep.plan.up_to}", style="bold magenta")
    if prep is not None:
        before = state.tokens_before
        out.append(f" · est. {before:,}")
        if prep.plan.noop or not prep.enabled:
            out.append(" (unchanged)", style="dim")
        else:
            after = state.tokens_after()
            approx = "" if state.summary is not None else "~"
            out.append(f" → {approx}{after:,} tokens", style="bold")
    recorded = session.meta.recorded_tokens
    if recorded is not None:  # last: the first figure cut on a narrow terminal
        out.append(f" · recorded {recorded:,} tokens")
    splits = state.known_splits
    if splits:
        out.append("\n")
        out.append(" ⚠ split tool exchange ", style="bold reverse red")
        out.append(" s: nearest safe boundary · ", style="bold")
        out.append(visible(splits[0].describe()))
        if len(splits) > 1:
            out.append(f" (+{len(splits) - 1} more)")
    out.append("\n")
    model = (prep.compaction_model if prep else None) or state.base_model
    out.append("model ")
    if model:
        out.append(visible(model), style="bold")
        if state.compaction_model:
            out.append(" (session override)", style="dim")
    else:
        out.append("(provider default)", style="dim")
    prompt = prep.prompt if prep is not None else None
    if prompt is not None:
        out.append(f" · prompt {prompt.source}:{prompt.sha256[:8]}")
        if prompt.upstream_exact:
            out.append(" ")
            out.append(" exact kimi-cli prompt ", style="bold reverse green")
    if state.offline:
        out.append(" · ")
        out.append(" offline — no model ", style="bold reverse yellow")
    else:
        out.append(" · provider ")
        kind = state.provider.kind if state.provider is not None else "?"
        out.append(visible(str(kind)), style="bold")
    if state.custom_instruction:
        out.append(" · custom instructions set", style="italic")
    if state.stream_result is not None:
        status = state.stream_result.status
        out.append(f" · summary: {status}", style="bold" if status == "complete" else "bold red")
        if state.summary_edited:
            out.append(" (edited)", style="italic")
    return out


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine {
        height: auto; max-height: 3; padding: 0 1; background: $panel;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def update_from(self, state: ReviewState) -> None:
        self.update(status_text(state))

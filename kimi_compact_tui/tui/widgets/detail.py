"""The detail pane: the highlighted message in full, part by part.

Each part is labelled (text, think, image/audio/video reference, tool call
with arguments, tool result) and marked "sent" (goes to the compactor) or
"dropped" / "not sent" (dimmed). What is rendered is capped so that a
50 MB message does not freeze the screen. All text is sanitized and drawn as
a Rich ``Text``, never parsed as markup.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from kimi_compact_tui.compaction.plan import (
    REGION_AFTER,
    REGION_COMPACT,
    REGION_KEPT,
    REGION_LEADING,
    REGION_TAIL,
)
from kimi_compact_tui.model import MEDIA_PART_TYPES, Message
from kimi_compact_tui.sanitize import visible

DETAIL_CAP = 20_000

REGION_LABELS = {
    REGION_LEADING: "leading system — kept and sent",
    REGION_COMPACT: "compactable — sent, then replaced by the summary",
    REGION_TAIL: "preserved tail — kept verbatim, not sent",
    REGION_AFTER: "after the explicit boundary — kept, not sent",
    REGION_KEPT: "kept — no compaction",
}
REGION_STYLES = {
    REGION_LEADING: "bold blue",
    REGION_COMPACT: "bold yellow",
    REGION_TAIL: "bold green",
    REGION_AFTER: "bold magenta",
    REGION_KEPT: "bold",
}


def describe_parts(message: Message, sent: bool) -> list[tuple[str, str, bool]]:
    """(label, body, sent) for every part of ``message``, in order.

    kimi-cli sends the ``text`` parts of messages in the request range (a
    string content is one text part); think parts, media and tool-call
    arguments are dropped from the compaction input."""
    out: list[tuple[str, str, bool]] = []
    content = message.content
    result = message.is_tool_result()
    text_label = "tool result" if result else "text"
    if result and message.tool_call_id:
        text_label += f" (call {message.tool_call_id})"
    if isinstance(content, str):
        out.append((text_label, content, sent))
    elif isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                out.append(("unknown part", repr(part), False))
                continue
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")
                out.append((text_label, text if isinstance(text, str) else repr(text), sent))
            elif kind == "think":
                out.append(("think", str(part.get("think") or ""), False))
            elif kind in MEDIA_PART_TYPES:
                out.append((f"{kind.split('_')[0]} reference", _media_ref(part, kind), False))
            else:
                out.append((f"{kind} part", _json(part), False))
    elif content is None and not message.tool_calls:
        out.append(("empty", "(no content)", False))
    for call in message.tool_calls:
        fn = call.get("function") if isinstance(call, dict) else None
        fn = fn if isinstance(fn, dict) else {}
        cid = call.get("id") if isinstance(call, dict) else None
        label = f"tool call {fn.get('name') or '?'}" + (f" (id {cid})" if cid else "")
        args = fn.get("arguments")
        out.append((label, _pretty_args(args), False))
    return out


def _media_ref(part: dict[str, Any], kind: str) -> str:
    value = part.get(kind)
    url = value.get("url") if isinstance(value, dict) else value
    url = str(url or "")
    if url.startswith("data:"):
        head = url.split(",", 1)[0]
        return f"{head},… ({len(url):,} characters inline)"
    return url


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        return repr(value)


def _pretty_args(args: Any) -> str:
    if isinstance(args, str):
        try:
            return json.dumps(json.loads(args), ensure_ascii=False, indent=2)
        except ValueError:
            return args
    return _json(args)


def render_detail(
    message: Message,
    index: int,
    region: str,
    tokens: int,
    *,
    in_request: bool,
    cap: int = DETAIL_CAP,
) -> Text:
    """The pane's text for one message (sanitized, capped, never markup)."""
    out = Text(no_wrap=False)
    out.append(f"Message {index + 1}", style="bold")
    out.append(" · ")
    out.append(visible(str(message.role)), style="bold")
    out.append(f" · {tokens:,} tokens\n")
    out.append(REGION_LABELS.get(region, region), style=REGION_STYLES.get(region, ""))
    out.append("\n")
    if message.name:
        out.append(f"name: {visible(str(message.name))}\n", style="dim")
    if message.partial:
        out.append("partial: true\n", style="dim")
    budget = cap
    for label, body, sent in describe_parts(message, in_request):
        if in_request:
            status = "sent" if sent else "dropped"
        else:
            status = "kept" if region != REGION_COMPACT else "dropped"
        style = "" if (sent and in_request) else "dim"
        badge_style = "bold reverse green" if status == "sent" else "reverse"
        out.append("\n")
        out.append(f" {status} ", style=badge_style)
        out.append(f" {label}", style="bold " + style if style else "bold")
        out.append(f" · {len(body):,} chars\n", style="dim")
        if budget <= 0:
            out.append("(not shown: display limit reached)\n", style="dim italic")
            continue
        shown = body[:budget]
        budget -= len(shown)
        out.append(visible(shown), style=style)
        if len(shown) < len(body):
            out.append(
                f"\n… showing the first {len(shown):,} of {len(body):,} characters",
                style="dim italic",
            )
        out.append("\n")
    return out


class DetailPane(VerticalScroll, can_focus=True):
    """A scrollable pane showing one message."""

    DEFAULT_CSS = """
    DetailPane { padding: 0 1; }
    DetailPane > #detail-body { width: 100%; }
    """

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="detail-body")

    def show(self, text: Text) -> None:
        self.query_one("#detail-body", Static).update(text)
        self.scroll_home(animate=False)

    def clear(self, note: str = "") -> None:
        self.show(Text(note, style="dim"))

    @property
    def plain(self) -> str:
        body = self.query_one("#detail-body", Static)
        content = body.render()
        return getattr(content, "plain", str(content))

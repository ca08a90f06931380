"""The one-line preview of a message, the same everywhere it is shown.

The TUI's message list and diff panes, ``plan`` and ``diff`` on the command line
all describe a message with :func:`message_preview`: its text on one line
(newlines as ``⏎``, runs of spaces as one), then its tool calls as
``→ Name(arguments)``; a message with neither shows its media (``[image]``), its
thinking (``[thinking] …``) or ``(empty)``. Controls and invisible characters are
made visible (:func:`~kimi_compact_tui.sanitize.visible`), and the line is cut to
``width`` terminal cells (CJK and emoji count two) with an ellipsis. Plain data in,
plain text out: no Textual.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kimi_compact_tui.model import Message
from kimi_compact_tui.sanitize import clip_cells, visible

NEWLINE_MARK = "⏎"
CALL_ARROW = "→"
EMPTY = "(empty)"
#: A line break, or up to 256 characters of a word (a longer word comes in
#: pieces, joined again: the scan stops where the line is full, not at the
#: word's end, so one word of 30 MB costs what one line does).
_TOKEN_RE = re.compile(r"\n|[^\s]{1,256}")
_MORE_RE = re.compile(r"\S")


def flatten(text: str, width: int) -> str:
    """``text`` on one line: words separated by one space, line breaks as ``⏎``
    (blank lines and the ends dropped). Reads only as far as ``width`` needs, so a
    megabyte of tool output costs no more than a line, and so does one word of a
    megabyte (a minified file, a CJK log with no spaces)."""
    from rich.cells import cell_len  # (loaded on the first preview, not with every command)

    words: list[str] = []
    size = 0
    newline = False
    joined_at = -1  # where the last piece of a word ended
    word_cells = 0  # the cells of a long word so far
    for m in _TOKEN_RE.finditer(text):
        token = m.group(0)
        if token == "\n":
            newline = bool(words)
            joined_at = -1
            continue
        if m.start() == joined_at:  # the next piece of a long word
            words[-1] += token
            size += len(token)
            word_cells += cell_len(token)
        else:
            if newline:
                words.append(NEWLINE_MARK)
                size += 2
                newline = False
            words.append(token)
            size += len(token) + 1
            word_cells = cell_len(token) if len(token) == 256 else 0
        joined_at = m.end()
        # More than the width already: the rest is cut anyway (a long word when
        # its cells are past the width: zero-width characters take none).
        if size > width + 1 and (len(token) < 256 or word_cells > width + 1):
            if _MORE_RE.search(text, m.end()):  # "…" only when something is left out
                words.append("…")
            break
    return " ".join(words)


def call_preview(call: Any, width: int) -> str:
    """``Name(arguments)`` of one tool call (arguments as recorded, on one line)."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict):
        return "?()"
    name: str = fn["name"] if isinstance(fn.get("name"), str) and fn.get("name") else "?"
    raw = fn.get("arguments")
    if raw is None:
        args = ""
    elif isinstance(raw, str):
        args = raw
    else:
        args = json.dumps(raw, ensure_ascii=False)
    return f"{flatten(name, width)}({flatten(args, width)})"


def message_preview(message: Message, width: int = 200) -> str:
    """One line describing ``message``, at most ``width`` cells (see the module)."""
    pieces: list[str] = []
    text = flatten(message.text(), width)
    if text:
        pieces.append(text)
    calls = message.tool_calls
    if calls:
        pieces.append(f"{CALL_ARROW} " + ", ".join(call_preview(c, width) for c in calls))
    if not pieces:
        media = [kind.removesuffix("_url") for kind in message.media_types()]
        if media:
            pieces.append(" ".join(f"[{kind}]" for kind in media))
        if message.has_think():
            think = " ".join(
                str(p.get("think") or "")
                for p in message.parts()
                if isinstance(p, dict) and p.get("type") == "think"
            )
            pieces.append(("[thinking] " + flatten(think, width)).rstrip())
    line = " ".join(pieces) or EMPTY
    return clip_cells(visible(line), width)

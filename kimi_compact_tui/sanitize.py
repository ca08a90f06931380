"""Untrusted text made safe to show: never markup, never terminal controls.

Textual passes ESC, C0/C1 control bytes and OSC sequences in widget text
straight to the terminal, and parses markup in many widgets. Everything from
a session goes through :func:`visible` (a string with every control and bidi
override replaced by a visible placeholder) and is shown as ``Text``/
``Content``, never as markup. The text sent and written is never altered:
this is for display only.
"""

from __future__ import annotations

import re

from rich.cells import cell_len, set_cell_size
from rich.text import Text

# C0 (except \n and \t), DEL, C1, and the bidi controls that reorder text.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMES = {
    "\x1b": "␛",
    "\r": "␍",
    "\x00": "␀",
    "\x07": "␇",
    "\x08": "␈",
    "\x7f": "␡",
}


def _placeholder(match: re.Match[str]) -> str:
    ch = match.group(0)
    name = _NAMES.get(ch)
    if name:
        return name
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode control pictures
    return f"<U+{code:04X}>"


def visible(text: str, *, tabs: int | None = 4) -> str:
    """``text`` with control characters and bidi overrides made visible."""
    if text.isascii() and text.isprintable():
        return text
    out = _CONTROL.sub(_placeholder, text)
    if tabs is not None:
        out = out.expandtabs(tabs)
    return out


def one_line(text: str, width: int = 200) -> str:
    """A single-line preview: newlines shown as ⏎, controls made visible."""
    flat = text[: width * 2].replace("\r\n", "\n").replace("\n", " ⏎ ")
    return visible(flat)[:width]


def safe_text(text: str, style: str = "") -> Text:
    """A Rich ``Text`` (never parsed as markup) of ``visible(text)``."""
    return Text(visible(text), style=style, no_wrap=False)


def fit_cells(text: str, width: int, *, ellipsis: str = "…") -> str:
    """``text`` made exactly ``width`` terminal cells wide (Rich's ``cell_len``,
    so CJK and emoji count two): padded with spaces, or cut and ended with
    ``ellipsis``. A wide character that would straddle the edge becomes a space."""
    if width <= 0:
        return ""
    length = cell_len(text)
    if length <= width:
        return text + " " * (width - length)
    mark = ellipsis if cell_len(ellipsis) < width else ""
    return set_cell_size(text, width - cell_len(mark)) + mark


# ----------------------------------------------------------------------------- terminal escapes

# A string terminator: ESC \, BEL or C1 ST.
_ST = "(?:\x1b\\\\|\x07|\x9c)"
_OSC = "(?:\x1b\\]|\x9d)"
_NOT_ST = "[^\x07\x1b\x9c]"
# An OSC 8 hyperlink: the opener names the target, the text follows, an opener with
# no target closes it.
_OSC8_PAIR = re.compile(
    f"{_OSC}8;[^;\x07\x1b\x9c]*;({_NOT_ST}+){_ST}([^\n]*?){_OSC}8;[^;\x07\x1b\x9c]*;{_ST}"
)
_OSC8_OPEN = re.compile(f"{_OSC}8;[^;\x07\x1b\x9c]*;({_NOT_ST}*){_ST}")
_ESCAPE_SEQUENCE = re.compile(
    # OSC, DCS, SOS, PM, APC strings (to their terminator, else the end of the line)
    f"(?:{_OSC}|\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x07\x1b\x9c\n]*(?:{_ST})?"
    # CSI (7-bit or C1): parameters, intermediates, one final byte
    "|(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]?"
    # any other escape: intermediates and one final byte
    "|\x1b[ -/]*[0-~]?"
)
_LONE_CR = re.compile("\r(?!\n)")
_OTHER_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_ANY_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _link(match: re.Match[str]) -> str:
    target = match.group(1)
    label = plain_text(match.group(2)).strip()
    if not label or label == target:
        return target
    return f"{label} <{target}>"


def plain_text(text: str) -> str:
    """``text`` as a terminal would show it, for reading (retention, the offline
    summarizer), never for display: escape sequences (CSI, OSC, DCS...) and other
    C0/C1 controls are dropped (newlines and tabs stay, a lone carriage return
    becomes a newline), and an OSC 8 hyperlink becomes ``text <target>`` so its
    target URL stands alone."""
    if _ANY_CONTROL.search(text) is None:
        return text
    if "8;" in text:
        text = _OSC8_PAIR.sub(_link, text)
        text = _OSC8_OPEN.sub(lambda m: f" <{m.group(1)}> " if m.group(1) else "", text)
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = _LONE_CR.sub("\n", text)
    return _OTHER_CONTROL.sub("", text)

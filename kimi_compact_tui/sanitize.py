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
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Rich loads when a cut or a Text is made, not with every command
    from rich.text import Text

# C0 (except \n and \t), DEL, C1, the bidi controls that reorder text, and the
# invisible characters: zero-width space, non-joiner and joiner (U+200B-U+200D), word
# joiner and invisible operators (U+2060-U+2064), Mongolian vowel separator (U+180E),
# BOM / zero-width no-break space (U+FEFF), line and paragraph separators (U+2028,
# U+2029) and the tag characters (U+E0000-U+E007F), which can hide ASCII text.
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
ZWJ = "\u200d"
VS16 = "\ufe0f"
BLACK_FLAG = "\U0001f3f4"
CANCEL_TAG = "\U000e007f"
_NAMES = {
    "\x1b": "␛",
    "\r": "␍",
    "\x00": "␀",
    "\x07": "␇",
    "\x08": "␈",
    "\x7f": "␡",
}


def _is_emoji(ch: str) -> bool:
    """A pictographic character that a ZWJ sequence joins (an approximation of
    Unicode's Extended_Pictographic: the emoji blocks, dingbats and symbols)."""
    code = ord(ch)
    return (
        0x1F000 <= code <= 0x1FAFF
        or 0x2600 <= code <= 0x27BF
        or 0x2300 <= code <= 0x23FF
        or 0x2B00 <= code <= 0x2BFF
    )


def _in_emoji_sequence(text: str, at: int) -> bool:
    """Is the invisible character at ``text[at]`` part of an emoji sequence: a ZWJ
    between two emoji (👨‍👩‍👧, 🏳️‍🌈), or the tags of a subdivision flag (🏴 + tags
    + cancel tag)?"""
    ch = text[at]
    if ch == ZWJ:
        before = text[at - 1] if at else ""
        after = text[at + 1] if at + 1 < len(text) else ""
        return bool(before and after) and (_is_emoji(before) or before == VS16) and _is_emoji(after)
    if "\U000e0020" <= ch <= CANCEL_TAG:
        start = at
        while start > 0 and "\U000e0020" <= text[start - 1] <= "\U000e007e":
            start -= 1
        end = at
        while end < len(text) and "\U000e0020" <= text[end] <= "\U000e007e":
            end += 1
        return (
            start > 0
            and text[start - 1] == BLACK_FLAG
            and end < len(text)
            and text[end] == CANCEL_TAG
            and end - start <= 6
        )
    return False


def _placeholder(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch >= ZWJ and _in_emoji_sequence(match.string, match.start()):
        return ch
    name = _NAMES.get(ch)
    if name:
        return name
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode control pictures
    return f"<U+{code:04X}>"  # five hex digits for a tag character


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
    from rich.text import Text

    return Text(visible(text), style=style, no_wrap=False)


def clip_cells(text: str, width: int, *, ellipsis: str = "…") -> str:
    """``text`` cut to at most ``width`` terminal cells (Rich's ``cell_len``, so
    CJK and emoji count two), ended with ``ellipsis`` when cut. Cutting twice
    gives what cutting once at the narrower width gives."""
    if width <= 0:
        return ""
    from rich.cells import cell_len, set_cell_size

    text = cells_prefix(text, width)
    if cell_len(text) <= width:
        return text
    mark = ellipsis if cell_len(ellipsis) <= width else ""
    return set_cell_size(text, width - cell_len(mark)).rstrip() + mark


def cells_prefix(text: str, width: int) -> str:
    """The shortest prefix of ``text`` (doubling from ``2 * width`` characters)
    that is wider than ``width`` cells, or ``text`` when it is not: a cut to
    ``width`` cells gives the same on both, and measuring it costs what is
    shown, not the whole text (a 30 MB line is cut in microseconds)."""
    from rich.cells import cell_len

    n = 2 * width + 8
    while n < len(text):
        head = text[:n]
        if cell_len(head) > width:
            return head
        n *= 2
    return text


def fit_cells(text: str, width: int, *, ellipsis: str = "…") -> str:
    """``text`` made exactly ``width`` terminal cells wide: :func:`clip_cells`,
    then padded with spaces."""
    if width <= 0:
        return ""
    from rich.cells import cell_len

    clipped = clip_cells(text, width, ellipsis=ellipsis)
    return clipped + " " * (width - cell_len(clipped))


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
#: Every byte but the ASCII controls :data:`_ANY_CONTROL` matches: an ASCII
#: text with none of them translates to nothing (one C pass, about three
#: times faster than the pattern's search on tool outputs).
_NOT_ASCII_CONTROL = bytes(b for b in range(256) if not (b <= 8 or 11 <= b <= 31 or b == 127))


def has_control(text: str) -> bool:
    """Whether ``text`` holds a C0 or C1 control other than a newline or a tab."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _NOT_ASCII_CONTROL))
    return _ANY_CONTROL.search(text) is not None


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
    if not has_control(text):
        return text
    if "8;" in text:
        text = _OSC8_PAIR.sub(_link, text)
        text = _OSC8_OPEN.sub(lambda m: f" <{m.group(1)}> " if m.group(1) else "", text)
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = _LONE_CR.sub("\n", text)
    return _OTHER_CONTROL.sub("", text)

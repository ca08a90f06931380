"""The JavaScript semantics Gemini CLI's session reading depends on.

- Lines: Node's ``readline`` ends a line at ``\\n``, ``\\r\\n`` or a lone ``\\r``
  and at nothing else (U+2028, U+2029 and U+0085 stay inside a line); the text
  is decoded as UTF-8 with U+FFFD for bad bytes.
- ``JSON.parse`` accepts only JSON whitespace around a value and no ``NaN`` /
  ``Infinity``; ``String.prototype.trim`` removes a set of characters that is
  not Python's ``str.strip`` set.
- ``partToString`` (verbose), which decides whether a user message is resumed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from kimi_compact_tui.formats.jsvalue import js_scalar

_LINE_END = re.compile(rb"\r\n|\n|\r")
# ECMAScript WhiteSpace and LineTerminator code points (what trim() removes).
_JS_SPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def lines(data: bytes) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, byte offset, raw line)`` of each line as readline splits it
    (the last line may have no line end)."""
    start, number = 0, 0
    for match in _LINE_END.finditer(data):
        number += 1
        yield number, start, data[start : match.start()]
        start = match.end()
    if start < len(data):
        yield number + 1, start, data[start:]


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(raw: bytes) -> Any:
    """``JSON.parse`` of one line read as Node reads it; ValueError when it throws."""
    text = raw.decode("utf-8", "replace")
    return json.loads(text, parse_constant=_no_constant)


def js_str(value: Any) -> str:
    """``String(value)`` for the values a template literal meets here."""
    if value is None:
        return "undefined"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join("" if v is None else js_str(v) for v in value)
    scalar = js_scalar(value)
    return "[object Object]" if scalar is None else scalar


def truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value (objects and arrays are true)."""
    if isinstance(value, dict | list):
        return True
    return bool(value)


def part_to_string(value: Any) -> str:
    """Gemini CLI's ``partListUnionToString``: text parts as their text, other
    parts as a bracketed tag (``[Function Response: name]`` ...)."""
    if not truthy(value):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part_to_string(p) for p in value)
    if not isinstance(value, dict):
        return ""
    for key, tag in (
        ("videoMetadata", "[Video Metadata]"),
        ("thought", None),
        ("codeExecutionResult", "[Code Execution Result]"),
        ("executableCode", "[Executable Code]"),
        ("fileData", "[File Data]"),
    ):
        if key in value:
            return tag if tag is not None else f"[Thought: {js_str(value[key])}]"
    if "functionCall" in value:
        return f"[Function Call: {js_str(_get(value['functionCall'], 'name'))}]"
    if "functionResponse" in value:
        return f"[Function Response: {js_str(_get(value['functionResponse'], 'name'))}]"
    if "inlineData" in value:
        return "[Media]"  # only its being non-empty matters here
    text = value.get("text")
    return text if isinstance(text, str) else ("" if text is None else js_str(text))


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None

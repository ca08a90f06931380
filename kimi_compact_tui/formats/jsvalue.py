"""JavaScript value semantics the agents' journals depend on (kimi-code and
Gemini CLI, both Node programs).

``js_stringify`` is ``JSON.stringify`` of a value read from JSON (kimi-code
stores a tool call's ``arguments`` as ``JSON.stringify(args)``; Gemini CLI
writes every record with it): compact, non-ASCII kept, numbers as JavaScript
prints them (``js_number``), integers beyond 2**53 as the double JavaScript
reads, and object keys that are array indices first in ascending order
(JavaScript's property order). ``js_slice_start`` is where
``Array.prototype.slice(n)`` starts.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_MAX_SAFE = 2**53
_MAX_INDEX = 2**32 - 2


def js_number(value: float) -> str:
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    text = repr(abs(value))
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    int_part, _, frac_part = mantissa.partition(".")
    all_digits = int_part + frac_part
    stripped = all_digits.lstrip("0")
    lead = len(all_digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    k = len(digits)
    n = len(int_part) - lead + exponent  # value = 0.<digits> * 10**n
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-")
        out += str(abs(e))
    return sign + out


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_string(text: str) -> str:
    """A JSON string as JavaScript writes it: UTF-8 kept, a lone surrogate (which
    UTF-8 cannot hold) as its ``\\uXXXX`` escape."""
    out = json.dumps(text, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)


def _is_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and str(int(key)) == key and int(key) <= _MAX_INDEX


def js_scalar(value: Any) -> str | None:
    """A boolean or a number as JavaScript prints it (``String(v)`` and
    ``JSON.stringify(v)`` agree on them: an integer beyond 2**53 as the double
    JavaScript reads); None for any other value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) < _MAX_SAFE:
        return str(value)
    if isinstance(value, int | float):
        return js_number(float(value))
    return None


def js_stringify(value: Any) -> str:
    if value is None:
        return "null"
    scalar = js_scalar(value)
    if scalar is not None:
        return scalar
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, list):
        return "[" + ",".join(js_stringify(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = list(value)
        index_keys = sorted((k for k in keys if _is_index(k)), key=int)
        ordered = index_keys + [k for k in keys if not _is_index(k)]
        return "{" + ",".join(js_string(k) + ":" + js_stringify(value[k]) for k in ordered) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def js_slice_start(start: Any, length: int) -> int:
    """``Array.prototype.slice(start)``'s first index for a number ``start``."""
    if isinstance(start, float):
        if math.isnan(start):
            return 0
        if math.isinf(start):
            return 0 if start < 0 else length
        start = math.trunc(start)
    index = int(start)
    if index < 0:
        return max(length + index, 0)
    return min(index, length)

"""A fast first try at decoding one JSON line, exact or not at all.

``msgspec`` (a C decoder) decodes a session line about twice as fast as
Python's ``json`` and returns the very same value for everything it accepts:
big integers stay exact ints, duplicate keys keep the last value in the first
key's place, floats are correctly rounded. It refuses, instead of guessing,
everything where Python's lenient decoder (``json.loads(strict=False)``, what
kimi-cli reads with) would behave differently: raw control characters inside
strings, lone surrogate escapes, ``NaN``/``Infinity``, out-of-range floats,
invalid UTF-8, nesting past the recursion limit. :func:`decode_fast` returns
:data:`MISS` for those, and the caller takes its ordinary ``json`` path, which
decides (value, warning or skip) exactly as before.

Without msgspec installed every line takes the ``json`` path: same results,
only slower. (orjson was measured too: as fast, but it turns integers past 64
bits into floats without an error, so it cannot be trusted to refuse.)
"""

from __future__ import annotations

from typing import Any

MISS: Any = object()  # "not decoded here": a line may decode to None

try:
    import msgspec
except ImportError:  # pragma: no cover - msgspec is a dependency; the fallback is json
    msgspec = None  # type: ignore[assignment]

if msgspec is not None:
    _decode = msgspec.json.Decoder().decode
    _REFUSED: tuple[type[BaseException], ...] = (msgspec.MsgspecError, RecursionError)
else:  # pragma: no cover
    _decode = None
    _REFUSED = ()

AVAILABLE = _decode is not None


def decode_fast(raw: bytes) -> Any:
    """The value of the JSON document ``raw`` (UTF-8 bytes), or :data:`MISS`
    when the fast decoder refuses it (or is not installed)."""
    if _decode is None:  # pragma: no cover
        return MISS
    try:
        return _decode(raw)
    except _REFUSED:
        return MISS

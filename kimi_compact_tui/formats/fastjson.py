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

from collections.abc import Callable
from sys import intern
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


class _Refused(Exception):
    """What :func:`decoder` raises when no fast decoder is installed."""


def _refuse(raw: bytes) -> Any:  # pragma: no cover - msgspec is a dependency
    raise _Refused


def decoder() -> tuple[Callable[[bytes], Any], tuple[type[BaseException], ...]]:
    """The fast decoder and the errors it refuses a line with, for a hot loop
    that calls it directly (:func:`decode_fast` without the call around it)."""
    if _decode is None:  # pragma: no cover
        return _refuse, (_Refused,)
    return _decode, _REFUSED


def decode_fast(raw: bytes) -> Any:
    """The value of the JSON document ``raw`` (UTF-8 bytes), or :data:`MISS`
    when the fast decoder refuses it (or is not installed)."""
    if _decode is None:  # pragma: no cover
        return MISS
    try:
        return _decode(raw)
    except _REFUSED:
        return MISS


# Values repeated in nearly every message: one shared object each instead of a
# new string per occurrence (a decoder makes a new one every time; about a
# fifth of the file size in memory on a session of short messages).
_SHARED = {
    s: s
    for s in (
        "user",
        "assistant",
        "tool",
        "system",
        "text",
        "think",
        "function",
        "image_url",
    )
}


def share_strings(record: dict[str, Any]) -> None:
    """Replace the common role and type values (and tool names) of a decoded
    message by shared equal strings (the same values: nothing else changes)."""
    role = record.get("role")
    if type(role) is str:
        record["role"] = _SHARED.get(role, role)
    content = record.get("content")
    if type(content) is list:
        _share_types(content)
    calls = record.get("tool_calls")
    if type(calls) is list:
        _share_types(calls)
        for call in calls:
            fn = call.get("function") if type(call) is dict else None
            if type(fn) is dict:
                name = fn.get("name")
                if type(name) is str and len(name) < 64:
                    fn["name"] = intern(name)


def _share_types(items: list[Any]) -> None:
    """The ``type`` of each object of ``items`` (parts, tool calls) as a shared string."""
    shared = _SHARED.get
    for item in items:
        if type(item) is dict:
            kind = item.get("type")
            if type(kind) is str:
                item["type"] = shared(kind, kind)


def plain_message(record: dict[str, Any]) -> bool:
    """True when ``record`` (a dict whose role is a string) is a message that
    :func:`kimi_compact_tui.formats.validate.check_message` accepts, checked in
    the same pass that shares its strings (:func:`share_strings`). False: the
    caller checks it the slow way, which names what is wrong. Sharing changes
    no value, so a False after it leaves the record as it was read."""
    shared = _SHARED.get
    role = record["role"]
    record["role"] = shared(role, role)
    content = record.get("content")
    if type(content) is list:
        for part in content:
            if type(part) is not dict:
                return False
            kind = part.get("type")
            if type(kind) is not str:
                return False
            if kind == "text" and type(part.get("text")) is not str:
                return False
            part["type"] = shared(kind, kind)
    elif content is not None and type(content) is not str:
        return False
    if len(record) <= 2:
        return True
    calls = record.get("tool_calls")
    if calls is not None:
        if type(calls) is not list:
            return False
        for call in calls:
            if type(call) is not dict:
                return False
            kind = call.get("type")
            if type(kind) is str:
                call["type"] = shared(kind, kind)
            fn = call.get("function")
            if fn is not None:
                if type(fn) is not dict:
                    return False
                name = fn.get("name")
                if type(name) is str and len(name) < 64:
                    fn["name"] = intern(name)
    call_id = record.get("tool_call_id")
    if call_id is not None and type(call_id) is not str:
        return False
    name = record.get("name")
    if name is not None and type(name) is not str:
        return False
    partial = record.get("partial")
    return partial is None or type(partial) is bool

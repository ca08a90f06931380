"""Validation of decoded messages: one clear error naming the file and place."""

from __future__ import annotations

from typing import Any

from kimi_compact_tui.errors import SessionFormatError

_TYPE_NAMES = {
    dict: "object",
    list: "list",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _wrong(where: str, what: str, must: str, value: Any) -> SessionFormatError:
    """``<where>: <what> must be <must>, got <value's type>``."""
    return SessionFormatError(f"{where}: {what} must be {must}, got {type_name(value)}")


def check_message(data: Any, where: str) -> None:
    """Raise :class:`SessionFormatError` if ``data`` is not a message object.

    ``where`` names the place, e.g. ``"context.jsonl:12"`` or
    ``"chat.json: messages[3]"``. Unknown roles, unknown part types and unknown
    fields are allowed (kept as they are)."""
    if type(data) is not dict:
        raise SessionFormatError(f"{where}: expected a message object, got {type_name(data)}")
    role = data.get("role")
    if type(role) is not str:
        if "role" not in data:
            raise SessionFormatError(f"{where}: message has no 'role' field")
        raise _wrong(where, "field 'role'", "a string", role)
    content = data.get("content")
    if type(content) is list:
        for i, part in enumerate(content):
            if type(part) is not dict:
                raise _wrong(where, f"content[{i}]", "an object", part)
            ptype = part.get("type")
            if type(ptype) is not str:
                raise SessionFormatError(f"{where}: content[{i}] has no string 'type' field")
            if ptype == "text" and type(part.get("text")) is not str:
                raise _wrong(where, f"content[{i}].text", "a string", part.get("text"))
    elif content is not None and type(content) is not str:
        raise _wrong(where, "field 'content'", "a string, a list of parts or null", content)
    if len(data) > 2:
        _check_optional_fields(data, where)


def _check_optional_fields(data: dict[str, Any], where: str) -> None:
    tool_calls = data.get("tool_calls")
    if tool_calls is not None:
        if type(tool_calls) is not list:
            raise _wrong(where, "field 'tool_calls'", "a list", tool_calls)
        for i, call in enumerate(tool_calls):
            if type(call) is not dict:
                raise _wrong(where, f"tool_calls[{i}]", "an object", call)
            fn = call.get("function")
            if fn is not None and type(fn) is not dict:
                raise _wrong(where, f"tool_calls[{i}].function", "an object", fn)
    for key in ("tool_call_id", "name"):
        value = data.get(key)
        if value is not None and type(value) is not str:
            raise _wrong(where, f"field '{key}'", "a string", value)
    partial = data.get("partial")
    if partial is not None and type(partial) is not bool:
        raise _wrong(where, "field 'partial'", "true or false", partial)

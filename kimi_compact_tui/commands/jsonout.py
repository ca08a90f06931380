"""Every command's JSON output: one version number and one printer.

Light on purpose (``json`` and ``sys`` only): ``restore`` and ``diff`` print
JSON without loading the config or the providers.
"""

from __future__ import annotations

import json
import sys
from typing import Any

#: The version of every command's JSON output (its ``"schema"`` field): raised
#: whenever a field changes meaning, is renamed or goes. Message numbers in it
#: are the 1-based numbers the screen shows; only the spec's own fields, named
#: ``…_index`` or ``…_indices`` (``compact_indices``...), are 0-based.
JSON_SCHEMA = 2


def with_schema(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the ``"schema"`` version first."""
    return {"schema": JSON_SCHEMA, **data}


def print_json(value: dict[str, Any]) -> None:
    """A command's JSON output, with its ``schema`` version, pretty on stdout.
    Long lists of plain numbers (message indices) are written on one line
    each: readable, and the C encoder writes them, not the slow pure-Python one
    that ``indent`` needs."""
    sys.stdout.write(_pretty(with_schema(value), "") + "\n")


def print_json_compact(value: dict[str, Any]) -> None:
    """A command's JSON output with its ``schema`` version, on one line (large
    outputs: the diff's rows)."""
    json.dump(with_schema(value), sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


def _pretty(value: Any, pad: str) -> str:
    if isinstance(value, dict) and value:
        inner = pad + "  "
        items = (
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_pretty(v, inner)}"
            for k, v in value.items()
        )
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if (
        isinstance(value, list)
        and value
        and not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value)
    ):
        inner = pad + "  "
        return "[\n" + ",\n".join(inner + _pretty(x, inner) for x in value) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)

"""The accepted range of every number in the config file, in one place (the
the config block of docs/configuration.md gives the same ranges), and config values shown
the way they were written in YAML (``true``, ``null``, ``'text'``), never as
Python (``True``, ``None``).

A value outside its range is an error naming the field: an absurd number
(``max_preserved_messages: 99999999999999999999999``) is a typo, not a wish.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The anchor block's default size in tokens (``compact --anchor``, the pins,
#: repair): about what 20 requests of two lines and a dozen paths and commands
#: take, small beside a summary of a few thousand. Here, so that a command's
#: ``--help`` can say it without loading retention.
DEFAULT_ANCHOR_BUDGET = 800


@dataclass(frozen=True)
class Range:
    low: float
    high: float
    unit: str  # "whole" (an integer) or "seconds" / "number" (any finite number)
    low_open: bool = False  # the low end itself is not allowed (a timeout of 0)
    noun: str = ""  # what is counted, for the message ("tokens", "messages")

    def describe(self) -> str:
        low, high = _figure(self.low), _figure(self.high)
        what = {
            "whole": f"a whole number of {self.noun}" if self.noun else "a whole number",
            "seconds": "a number of seconds",
            "number": "a number",
        }[self.unit]
        if self.low_open:
            return f"{what} above {low}, at most {high}"
        return f"{what} from {low} to {high}"

    def check(self, value: Any) -> int | float:
        """``value`` when it is in range, else ValueError with the message."""
        ok = not isinstance(value, bool) and isinstance(value, int | float)
        if ok and self.unit == "whole" and not isinstance(value, int):
            ok = False
        if ok and isinstance(value, float) and not math.isfinite(value):
            ok = False
        if ok:
            ok = (value > self.low if self.low_open else value >= self.low) and value <= self.high
        if not ok:
            raise ValueError(f"must be {self.describe()}, got {shown(value)}")
        checked: int | float = value
        return checked


def _figure(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


MAX_PRESERVED_MESSAGES = Range(0, 1_000_000, "whole", noun="messages")
CONNECT_TIMEOUT = Range(0, 600, "seconds", low_open=True)
READ_TIMEOUT = Range(0, 3600, "seconds", low_open=True)
RETRY_CAP = Range(0, 600, "seconds")
RETRY_BASE_DELAY = Range(0, 60, "seconds")
MAX_RETRIES = Range(1, 10, "whole", noun="tries")
NUM_CTX = Range(256, 2_000_000, "whole", noun="tokens")
CHUNK_DELAY = Range(0, 10, "seconds")
#: anthropic's ``max_tokens`` setting: any model's output limit is below it.
ANSWER_TOKENS = Range(1, 200_000, "whole", noun="tokens")

#: Request fields checked wherever they are set (``compaction.settings_overrides``,
#: ``provider.extra_body``); other fields are passed on as they are.
REQUEST_FIELDS: dict[str, Range] = {
    "max_tokens": Range(1, 1_000_000, "whole", noun="tokens"),
    "max_completion_tokens": Range(1, 1_000_000, "whole", noun="tokens"),
    "temperature": Range(0, 2, "number"),
    "top_p": Range(0, 1, "number"),
}


def check_request_fields(fields: Mapping[str, Any], where: str) -> str | None:
    """The first out-of-range request field of ``fields`` as ``where.name:
    message``, or None."""
    for name, limit in REQUEST_FIELDS.items():
        if name in fields and fields[name] is not None:
            try:
                limit.check(fields[name])
            except ValueError as exc:
                return f"{where}.{name}: {exc}"
    return None


def shown(value: Any, limit: int = 40) -> str:
    """A config value as YAML spells it: ``true``, ``null``, ``'text'``, ``5``,
    ``a list``, ``a mapping``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
    if isinstance(value, int):
        digits = len(str(abs(value)))
        return str(value) if digits <= 12 else f"a number of {digits} digits"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        text = value if len(value) <= limit else value[: limit - 1] + "…"
        return "'" + text.replace("'", "''") + "'"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return "a value of another kind"

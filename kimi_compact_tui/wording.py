"""How figures are written for people, the same on every front end.

``number`` puts thousands separators in a count or a token figure, ``count``
adds its noun in the singular or the plural, and ``span`` names a range of
messages (``message 3`` for a range of one, ``messages 1–4`` otherwise).
"""

from __future__ import annotations


def number(n: int | None) -> str:
    """``141771`` → ``141,771``; None (not known) → ``-``."""
    return "-" if n is None else f"{n:,}"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 message``, ``2 messages``, ``1,024 messages``."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def span(first: int, last: int, noun: str = "message") -> str:
    """Messages ``first`` to ``last`` (1-based, inclusive)."""
    if first == last:
        return f"{noun} {first:,}"
    return f"{noun}s {first:,}–{last:,}"


def noop_line(reason: str) -> str:
    """Why nothing is compacted, saying "nothing to compact" once."""
    return reason if "nothing to compact" in reason else f"nothing to compact: {reason}"

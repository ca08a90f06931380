"""One pass over a session's messages for everything a plan shows.

``plan`` (and the job's preparation) needs, for every message, its token
estimate; for the request range, the summed token counts of its text parts
(the request's estimate without building the request); and for the tool-call
check, every tool exchange (a call and the results answering it). Each used
to be its own walk over the messages; :func:`scan_messages` does them in one.
It reads only ``Message.data`` (no format).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kimi_compact_tui.compaction.tokens import message_token_parts
from kimi_compact_tui.model import Message

# (tool_call_id, call_index, result_indices)
Exchange = tuple[str, int, tuple[int, ...]]


@dataclass(frozen=True)
class Scan:
    """``tokens[i]``: message ``i``'s estimate (empty when not asked for);
    ``text_counts``: the summed :func:`~.tokens.token_counts` of the text parts
    of the messages before ``end``; ``exchanges``: as
    :func:`~.pairs.tool_exchanges` gives them."""

    tokens: list[int]
    text_counts: tuple[int, int, int]
    exchanges: list[Exchange]


def scan_messages(messages: Sequence[Message], end: int = 0, *, tokens: bool = True) -> Scan:
    """The one pass; ``end``: where the request range stops (text counts of the
    messages before it); ``tokens=False`` for the tool exchanges alone."""
    figures: list[int] = []
    append = figures.append
    a = b = c = 0
    calls: dict[str, int] = {}
    results: dict[str, list[int]] = {}
    for index, message in enumerate(messages):
        data = message.data
        if tokens:
            total, x, y, z = message_token_parts(message)
            append(total)
            if index < end:
                a, b, c = a + x, b + y, c + z
        tool_calls = data.get("tool_calls")
        if tool_calls and type(tool_calls) is list:
            for call in tool_calls:
                if type(call) is dict:
                    call_id = call.get("id")
                    if type(call_id) is str and call_id not in calls:
                        calls[call_id] = index
        call_id = data.get("tool_call_id")
        if type(call_id) is str:
            found = results.get(call_id)
            if found is None:
                results[call_id] = [index]
            else:
                found.append(index)
    exchanges = [
        (call_id, calls[call_id], tuple(found))
        for call_id, found in results.items()
        if call_id in calls
    ]
    return Scan(figures, (a, b, c), exchanges)

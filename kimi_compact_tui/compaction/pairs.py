"""Tool calls and their results: a boundary must never separate them.

An assistant message's ``tool_calls`` and the ``tool`` messages answering them
(``tool_call_id``) form one exchange. If the compacted range ends inside an
exchange, the compacted session holds a result with no call before it (or a
call with no result), which OpenAI-compatible APIs reject: the agent could not
continue the session. ``find_splits`` names such splits for a plan, and
``nearest_safe_up_to`` gives the nearest explicit boundary that splits nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.scan import Exchange, scan_messages
from kimi_compact_tui.model import Message


@dataclass(frozen=True)
class ToolSplit:
    """One tool call cut off from its result(s) by the boundary (0-based indices)."""

    tool_call_id: str
    call_index: int
    result_indices: tuple[int, ...]
    boundary: int  # the first kept index

    def describe(self) -> str:
        results = ", ".join(str(i + 1) for i in self.result_indices)
        plural = "s" if len(self.result_indices) > 1 else ""
        if self.call_index < self.boundary:
            return (
                f"message {self.call_index + 1} (tool call {self.tool_call_id}) is compacted "
                f"but its result{plural} (message{plural} {results}) would be kept"
            )
        return (
            f"message {self.call_index + 1} (tool call {self.tool_call_id}) is kept "
            f"but its result{plural} (message{plural} {results}) would be compacted"
        )


def tool_exchanges(messages: Sequence[Message]) -> list[Exchange]:
    """Every tool call that has a call message and at least one result:
    ``(tool_call_id, call_index, result_indices)``. Calls never answered and
    results with no call are left out (the boundary cannot split them)."""
    return scan_messages(messages, tokens=False).exchanges


def _spans(exchanges: list[Exchange]) -> list[tuple[int, int, int]]:
    """``(first, last, position)`` of each exchange: a boundary ``b`` splits it
    when ``first < b <= last``."""
    return [
        (min(call, *found), max(call, *found), pos)
        for pos, (_, call, found) in enumerate(exchanges)
    ]


def splits_at(
    messages: Sequence[Message], boundary: int, exchanges: list[Exchange] | None = None
) -> list[ToolSplit]:
    """The exchanges a kept range starting at ``boundary`` would split
    (``exchanges``: :func:`tool_exchanges`, when already known)."""
    if exchanges is None:
        exchanges = tool_exchanges(messages)
    out = []
    for first, last, pos in _spans(exchanges):
        if first < boundary <= last:
            call_id, call, found = exchanges[pos]
            other = tuple(i for i in found if (i < boundary) != (call < boundary))
            out.append(ToolSplit(call_id, call, other or found, boundary))
    return out


def find_splits(
    messages: Sequence[Message], plan: CompactionPlan, exchanges: list[Exchange] | None = None
) -> list[ToolSplit]:
    """The tool exchanges ``plan`` would split (none for a no-op)."""
    if plan.noop:
        return []
    return splits_at(messages, plan.boundary, exchanges)


def safe_boundaries(
    messages: Sequence[Message], exchanges: list[Exchange] | None = None
) -> list[bool]:
    """``safe[b]`` for every boundary ``0..n``: True when no exchange is split."""
    n = len(messages)
    cover = [0] * (n + 2)
    if exchanges is None:
        exchanges = tool_exchanges(messages)
    for first, last, _ in _spans(exchanges):
        cover[first + 1] += 1
        cover[last + 1] -= 1
    safe, running = [], 0
    for b in range(n + 1):
        running += cover[b]
        safe.append(running == 0)
    return safe


def nearest_safe_up_to(
    messages: Sequence[Message],
    boundary: int,
    leading: int,
    exchanges: list[Exchange] | None = None,
) -> int | None:
    """The explicit ``--up-to`` (1-based: the last compacted message) nearest to
    a kept range starting at ``boundary`` that splits no tool exchange and
    still compacts something; on a tie the later one (the whole exchange is
    compacted). None when there is none."""
    safe = safe_boundaries(messages, exchanges)
    n = len(messages)
    for distance in range(0, n + 1):
        for b in (boundary + distance, boundary - distance):
            if leading < b <= n and safe[b]:
                return b
    return None

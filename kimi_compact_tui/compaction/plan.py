"""The compaction plan: which messages are sent, deleted and kept.

Regions are contiguous. With ``L`` leading system messages (``system`` or
``developer``: :data:`LEADING_ROLES`), a boundary ``B``
and ``n`` messages: leading system ``[0, L)`` (sent when the range starts at
the beginning, always kept), compactable ``[L, B)`` (sent, then replaced by
the summary), and kept ``[B, n)`` — the preserved tail in ``tail`` mode, or
the messages after an explicit boundary (kept, not sent) in ``explicit``
mode. Request indices ``[0, B)`` and deletion indices ``[L, B)`` are separate
sets, as the spec requires.

Injected context: a format may mark user messages the agent injected (a
reminder, not a prompt the person typed; ``SessionFormat.injected``), and the
caller passes that predicate as ``injected``. Such a message belongs to the
turn it was injected into, so the preserved-tail scan counts only real prompts
and assistant messages, and a tail that starts at a prompt also keeps the
injected messages right before it: the boundary never lands between a prompt
and its reminders. Without a predicate (kimi-cli) the scan is kimi-cli's.
An explicit boundary is exact either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.model import COMPACTION_ROLES, Message

REGION_LEADING = "leading_system"
#: The roles of the leading system region: ``system``, and ``developer``,
#: OpenAI's current name for the system role (a leading run of either, in any
#: order, is the spec's "leading system message(s)": always kept, never
#: compacted).
LEADING_ROLES = ("system", "developer")
REGION_COMPACT = "compact"
REGION_TAIL = "preserved_tail"
REGION_AFTER = "after_boundary"
REGION_KEPT = "kept"  # no-op: everything stays

#: Whether a message is context the agent injected (see the module docstring).
Injected = Callable[[Message], bool]


@dataclass(frozen=True)
class CompactionPlan:
    mode: str  # "tail" | "explicit"
    total: int
    leading: int  # L
    boundary: int  # B (== leading for a no-op)
    noop: str | None = None
    up_to: int | None = None  # 1-based, explicit mode
    max_preserved_messages: int = 2

    @property
    def leading_system_indices(self) -> range:
        return range(0, self.leading)

    @property
    def request_indices(self) -> range:
        return range(0, 0) if self.noop else range(0, self.boundary)

    @property
    def compact_indices(self) -> range:
        return range(0, 0) if self.noop else range(self.leading, self.boundary)

    @property
    def preserved_indices(self) -> range:
        start = self.leading if self.noop else self.boundary
        return range(start, self.total)

    def region_of(self, index: int) -> str:
        if index < self.leading:
            return REGION_LEADING
        if self.noop:
            return REGION_KEPT
        if index < self.boundary:
            return REGION_COMPACT
        return REGION_TAIL if self.mode == "tail" else REGION_AFTER

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "noop": self.noop,
            "up_to": self.up_to,
            "max_preserved_messages": self.max_preserved_messages,
            "leading_system_indices": list(self.leading_system_indices),
            "request_indices": list(self.request_indices),
            "compact_indices": list(self.compact_indices),
            "preserved_indices": list(self.preserved_indices),
        }


def count_leading_system(messages: Sequence[Message]) -> int:
    n = 0
    for m in messages:
        if m.role not in LEADING_ROLES:
            break
        n += 1
    return n


def make_plan(
    messages: Sequence[Message],
    *,
    max_preserved_messages: int = 2,
    up_to: int | None = None,
    injected: Injected | None = None,
) -> CompactionPlan:
    """Plan a compaction. ``up_to`` (1-based) is an explicit end: messages
    1..N are compacted exactly, no tail preservation (the spec's Decision 2).
    Without it the last ``max_preserved_messages`` user/assistant messages and
    everything after them are preserved (kimi-cli's backward scan; with
    ``injected``, injected messages are not counted and stay with their
    prompt). A plan that would do nothing carries the reason in ``noop``; it
    never raises for a valid ``up_to``."""
    total = len(messages)
    leading = count_leading_system(messages)
    if up_to is not None:
        if not isinstance(up_to, int) or isinstance(up_to, bool) or not 1 <= up_to <= total:
            raise UserError(
                f"--up-to {up_to}: out of range (the session has {total} message"
                f"{'' if total == 1 else 's'}, numbered 1 to {total})"
            )
        noop = None
        if up_to <= leading:
            noop = (
                f"messages 1..{up_to} are all leading system messages, which are always "
                "kept: nothing to compact"
            )
        return CompactionPlan(
            "explicit",
            total,
            leading,
            leading if noop else up_to,
            noop,
            up_to,
            max_preserved_messages,
        )

    def noop_plan(reason: str) -> CompactionPlan:
        return CompactionPlan("tail", total, leading, leading, reason, None, max_preserved_messages)

    if total == 0:
        return noop_plan("the session has no messages")
    if max_preserved_messages <= 0:
        return noop_plan(
            f"max_preserved_messages is {max_preserved_messages} (<= 0): "
            "kimi-cli does not compact with this setting"
        )
    found = skipped = 0
    boundary = total
    for index in range(total - 1, -1, -1):
        message = messages[index]
        if message.role not in COMPACTION_ROLES:
            continue
        if injected is not None and injected(message):
            skipped += 1
            continue
        found += 1
        if found == max_preserved_messages:
            boundary = index
            break
    not_counted = f" (not counting {skipped} injected)" if skipped else ""
    if found < max_preserved_messages:
        return noop_plan(
            f"only {found} user/assistant message{'' if found == 1 else 's'}{not_counted}; "
            f"the last {max_preserved_messages} are preserved, so there is nothing to compact"
        )
    if injected is not None and messages[boundary].role == "user":
        # the messages injected right before a kept prompt stay with it
        while boundary > leading and injected(messages[boundary - 1]):
            boundary -= 1
    if boundary <= leading:
        return noop_plan(
            "nothing to compact before the preserved tail "
            f"(the last {max_preserved_messages} user/assistant messages{not_counted})"
        )
    return CompactionPlan("tail", total, leading, boundary, None, None, max_preserved_messages)

"""The extractor's output: typed items, and the kinds' buckets they are collected in."""

from __future__ import annotations

from dataclasses import dataclass, field

from kimi_compact_tui.specifics import kinds
from kimi_compact_tui.specifics.declare import OPEN_STATUSES

OPEN = "open"
RESOLVED = "resolved"


@dataclass
class Item:
    """One specific: ``text`` as shown (a request verbatim), ``key`` its
    normalised form, ``messages`` the 0-based indices it comes from (ascending),
    ``weight``, ``status`` (a plan item's, a command's exit, an error's
    open/resolved) and ``extra`` (data for matching, e.g. an error's type)."""

    category: str
    key: str
    text: str
    messages: list[int] = field(default_factory=list)
    extra: tuple[str, ...] = ()
    weight: int = 1
    status: str | None = None

    def add(self, index: int) -> None:
        messages = self.messages
        if not messages or index > messages[-1]:  # the walk's order: no scan
            messages.append(index)
        elif index not in messages:
            messages.append(index)

    @property
    def first(self) -> int:
        return self.messages[0] if self.messages else 0


@dataclass
class Specifics:
    """The items of a range by kind (each kind: key → item, in message order),
    and the work folder absolute paths were made relative to."""

    items: dict[str, dict[str, Item]]
    root: str | None = None
    plan_message: int | None = None  # the message that set the last plan
    #: A failed command's key → the keys of the errors its last failed result showed.
    causes: dict[str, list[str]] = field(default_factory=dict)
    #: A resolved error's key → what fixed it (a later run, or an edit then a pass).
    fixes: dict[str, str] = field(default_factory=dict)
    #: What the assistant concluded: the last words of each of its turns
    #: (message index, text), in order.
    findings: list[tuple[int, str]] = field(default_factory=list)

    def of(self, kind: str) -> list[Item]:
        if kind == kinds.OPEN_TASKS:
            return [i for i in self.items[kinds.PLAN].values() if i.status in OPEN_STATUSES]
        return list(self.items.get(kind, {}).values())

    def by_weight(self) -> list[Item]:
        """Every item, heaviest first (message order within a weight)."""
        every = [i for kind in kinds.KINDS for i in self.items[kind].values()]
        return sorted(every, key=lambda i: (-i.weight, i.first))


class Buckets:
    """Every kind's items as they are collected (key → item, first seen first)."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Item]] = {k: {} for k in kinds.KINDS}

    def add(
        self,
        kind: str,
        key: str,
        text: str,
        index: int,
        *,
        extra: tuple[str, ...] = (),
        weight: int | None = None,
        status: str | None = None,
    ) -> Item:
        bucket = self.items[kind]
        item = bucket.get(key)
        if item is None:
            w = kinds.WEIGHTS[kind] if weight is None else weight
            item = bucket[key] = Item(kind, key, text, [], tuple(extra), w, status)
        elif status is not None:
            item.status = status
        item.add(index)
        return item

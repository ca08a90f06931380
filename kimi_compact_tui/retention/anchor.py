"""Anchors: put back what a summary lost, as the one marked block of exact references.

:func:`anchor` appends to a summary the block the retention pane already writes
to the editor (:func:`~.report.editor_block`: ``- label: text (message N)``
lines between the two markers), holding what the summary misses or misstates,
by importance:

0. what the summary states wrongly (an open task called done, a failed command
   called passed, a refused write called written), restated with what the
   session says: ``- open tasks: X (message 9; in_progress — the summary above
   calls it completed)``; the critical ones first in the block;
1. the critical items: user requests, instructions, open tasks (the latest
   first; shortened with ``…`` before anything critical is left out);
2. the latest and the most referenced of the rest: files edited and errors
   still open, then commands (the final checks before the first reads), then
   paths;
3. identifiers, numbers and URLs the summary lost.

No item is written twice: a rule the person stated inside a request written
whole is that request's, and the same text under two labels is one line.
``budget`` is a hard limit on the whole block, markers included (a budget of
0 or less is refused), and :class:`Anchored` says what did not fit. A summary
that already holds a block gets its block replaced, never a second one. It
stays inside the summary text, so inside the summary message of every
format. Secret-looking strings (keys and tokens) are masked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kimi_compact_tui import limits
from kimi_compact_tui.compaction.tokens import estimate_tokens
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.retention.report import (
    EDITOR_BLOCK_END,
    EDITOR_BLOCK_START,
    RetentionReport,
    item_line,
)
from kimi_compact_tui.secrets import mask_secrets
from kimi_compact_tui.specifics import (
    COMMANDS,
    EDITED_FILES,
    ERRORS,
    FILE_PATHS,
    IDENTIFIERS,
    INSTRUCTIONS,
    NUMBERS,
    OPEN,
    OPEN_TASKS,
    URLS,
    USER_REQUESTS,
    Item,
)

#: Tokens the block may take by default (the one default: :mod:`kimi_compact_tui.limits`).
DEFAULT_ANCHOR_BUDGET = limits.DEFAULT_ANCHOR_BUDGET
#: The order of the block as written (each category's lines in message order).
ORDER = (
    USER_REQUESTS,
    INSTRUCTIONS,
    OPEN_TASKS,
    EDITED_FILES,
    ERRORS,
    COMMANDS,
    FILE_PATHS,
    IDENTIFIERS,
    NUMBERS,
    URLS,
)
CRITICAL = (USER_REQUESTS, INSTRUCTIONS, OPEN_TASKS)
#: How the rest is chosen: a lower tier first, the latest first within a tier.
TIERS = {
    EDITED_FILES: 1,
    ERRORS: 1,
    COMMANDS: 2,
    FILE_PATHS: 3,
    IDENTIFIERS: 4,
    NUMBERS: 4,
    URLS: 4,
}
SHORTENED = (10**9, 240, 120, 60)  # characters of a critical item: whole, then step by step
REST_CHARS = 240
BLOCK_RE = re.compile(
    rf"\n*{re.escape(EDITOR_BLOCK_START)}.*?{re.escape(EDITOR_BLOCK_END)}\n?", re.S
)


@dataclass
class Anchored:
    """The summary with its anchor block, the block alone, and what did not fit."""

    text: str
    block: str
    items: list[Item] = field(default_factory=list)
    left_out: list[Item] = field(default_factory=list)

    def note(self) -> str | None:
        """One line on what did not fit, or None."""
        if not self.left_out:
            return None
        counts: dict[str, int] = {}
        for item in self.left_out:
            counts[item.category] = counts.get(item.category, 0) + 1
        what = ", ".join(f"{n} {c.replace('_', ' ')}" for c, n in counts.items())
        return f"anchor: {what} did not fit in the anchor budget"


def check_budget(budget: int) -> int:
    """``budget`` when it is a positive number of tokens; else one line refusing it."""
    if budget <= 0:
        raise UserError(
            f"--anchor-budget {budget}: the anchor block needs a budget of at least 1 token"
        )
    return budget


def without_block(summary: str) -> str:
    """``summary`` without its anchor block (re-anchoring replaces it)."""
    if EDITOR_BLOCK_START not in summary:
        return summary
    return BLOCK_RE.sub("\n", summary).rstrip("\n") + "\n"


#: What a summary wrongly said of an item the block restates: (category, key) → stated.
Stated = dict[tuple[str, str], str]


def _missing(report: RetentionReport, pinned: Sequence[Item] | None) -> tuple[list[Item], Stated]:
    """What the block may hold: the items ``report`` says are misstated or
    missing (only errors still open at the end of the range), or of those only
    the ``pinned`` ones (any category); and what the summary said of each
    misstated one."""
    names = [*ORDER, *(n for n in report.categories if n not in ORDER)]
    out: list[Item] = []
    stated: Stated = {}
    for name in names:
        category = report.categories.get(name)
        if category is None or (pinned is None and name not in ORDER):
            continue
        for wrong in category.misstated:
            if pinned is None or wrong.item in pinned:
                out.append(wrong.item)
                stated[(wrong.item.category, wrong.item.key)] = wrong.stated
        for item in category.missing:
            if pinned is not None:
                if item in pinned:
                    out.append(item)
            elif name != ERRORS or item.status in (None, OPEN):
                out.append(item)
    return out, stated


def _latest(item: Item) -> int:
    return item.messages[-1] if item.messages else -1


def _masked(item: Item, chars: int) -> Item:
    text = mask_secrets(item.text)
    flat = " ".join(text.split())
    if len(flat) > chars:
        text = flat[: chars - 1].rstrip() + "…"
    return replace(item, text=text)


def _key(item: Item) -> str:
    return " ".join(item.text.split()).lower()


def _cost(line: str) -> int:
    return estimate_tokens(line) + 1


def _line(item: Item, stated: Stated) -> str:
    return item_line(item, None, stated.get((item.category, item.key)))


def _choose(candidates: list[Item], budget: int, stated: Stated) -> tuple[list[Item], list[Item]]:
    """(chosen, left out): the critical items first (the misstated ones, then the
    latest first, shortened step by step before one is left out), then the rest:
    the misstated first, then by tier and recency, each whole (cut at
    :data:`REST_CHARS`) or not at all; never over ``budget``."""
    room = budget - estimate_tokens(f"{EDITOR_BLOCK_START}\n{EDITOR_BLOCK_END}") - 1

    def right(i: Item) -> bool:  # not misstated: after the misstated ones
        return (i.category, i.key) not in stated

    critical = sorted(
        (i for i in candidates if i.category in CRITICAL), key=lambda i: (right(i), -_latest(i))
    )
    rest = sorted(
        (i for i in candidates if i.category not in CRITICAL),
        key=lambda i: (right(i), TIERS.get(i.category, 5), -_latest(i), -len(i.messages)),
    )
    chosen: list[Item] = []
    left_out: list[Item] = []
    # the critical items at the longest length at which they all fit, else the shortest
    for chars in SHORTENED:
        shown = [_masked(i, chars) for i in critical]
        if sum(_cost(_line(i, stated)) for i in shown) <= room:
            break
    taken: set[str] = set()

    def take(original: Item, item: Item) -> bool:
        """Choose ``item`` (``original`` as shown) unless its text is chosen
        already; left out when it does not fit. True when chosen."""
        nonlocal room
        if _key(item) in taken:
            return False
        cost = _cost(_line(item, stated))
        if cost > room:
            left_out.append(original)
            return False
        room -= cost
        chosen.append(item)
        taken.add(_key(item))
        return True

    requests: list[str] = []
    for original, item in zip(critical, shown, strict=True):
        if item.category == INSTRUCTIONS and any(_key(item) in r for r in requests):
            continue  # the rule is in a request written whole
        whole_request = item.category == USER_REQUESTS and not item.text.endswith("…")
        if take(original, item) and whole_request:
            requests.append(_key(item))
    for original in rest:
        take(original, _masked(original, REST_CHARS))
    return chosen, left_out


def anchor(
    report: RetentionReport,
    summary: str,
    budget: int = DEFAULT_ANCHOR_BUDGET,
    pinned: Sequence[Item] | None = None,
) -> Anchored:
    """``summary`` (without any block it held) with the block of what ``report``
    says it misses (see the module); ``report`` is the retention of the summary
    without its block. With ``pinned`` (the retention pane's pins), of those
    items only, appended to ``summary`` as it is: the pane's summary is the one
    under review, a block the person wrote in it included, and ``report``
    counts that block as kept."""
    check_budget(budget)
    base = without_block(summary) if pinned is None else summary
    candidates, stated = _missing(report, pinned)
    if not candidates:
        return Anchored(base, "")
    chosen, left_out = _choose(candidates, budget, stated)
    if not chosen:
        return Anchored(base, "", [], left_out)
    place = {name: n for n, name in enumerate(ORDER)}

    def order(i: Item) -> tuple[bool, int, bool, int]:  # the misstated critical items first
        right = (i.category, i.key) not in stated
        return (
            right or i.category not in CRITICAL,
            place.get(i.category, len(ORDER)),
            right,
            i.first,
        )

    chosen.sort(key=order)
    block = "\n".join([EDITOR_BLOCK_START, *(_line(i, stated) for i in chosen), EDITOR_BLOCK_END])
    text = base.rstrip("\n") + "\n\n" + block + "\n"
    return Anchored(text, block, chosen, left_out)

"""Anchors: put back what a summary lost, as the one marked block of exact references.

:func:`anchor` appends to a summary the block the retention pane already writes
to the editor (:func:`~.report.editor_block`: ``- label: text (message N)``
lines between the two markers), holding what the summary misses, by weight:
user requests, instructions, open tasks, edited files, open errors, commands,
paths. It stays inside the summary text, so inside the summary message of
every format. Within ``budget`` tokens: requests, instructions and open tasks
are shortened with ``…`` and never dropped; the rest is cut from edited files
down, and :class:`Anchored` says what did not fit. Secret-looking strings (keys
and tokens) are masked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kimi_compact_tui.compaction.tokens import estimate_tokens
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
    INSTRUCTIONS,
    OPEN,
    OPEN_TASKS,
    USER_REQUESTS,
    Item,
)

#: Tokens the block may take by default: about what 20 requests of two lines and
#: a dozen paths and commands take, small beside a summary of a few thousand.
DEFAULT_ANCHOR_BUDGET = 800
#: The order of the block: heaviest first.
ORDER = (USER_REQUESTS, INSTRUCTIONS, OPEN_TASKS, EDITED_FILES, ERRORS, COMMANDS, FILE_PATHS)
NEVER_DROPPED = (USER_REQUESTS, INSTRUCTIONS, OPEN_TASKS)
SHORTENED = (240, 120, 60)  # characters of a never-dropped item, step by step


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


def _candidates(report: RetentionReport) -> list[Item]:
    out: list[Item] = []
    for name in ORDER:
        category = report.categories.get(name)
        if category is None:
            continue
        for item in category.missing:
            if name == ERRORS and item.status not in (None, OPEN):
                continue  # only errors still open at the end of the range
            out.append(item)
    return out


def _pinned(report: RetentionReport, pinned: Sequence[Item]) -> list[Item]:
    """The pinned items ``report`` says are missing, in the block's order (then
    the categories :data:`ORDER` leaves out, in the report's order)."""
    names = [*ORDER, *(n for n in report.categories if n not in ORDER)]
    out: list[Item] = []
    for name in names:
        category = report.categories.get(name)
        if category is not None:
            out.extend(item for item in category.missing if item in pinned)
    return out


def _masked(item: Item, chars: int | None = None) -> Item:
    text = mask_secrets(item.text)
    if chars is not None and len(" ".join(text.split())) > chars:
        flat = " ".join(text.split())
        text = flat[: chars - 1].rstrip() + "…"
    return replace(item, text=text)


def _cost(lines: list[str]) -> int:
    return estimate_tokens("\n".join(lines))


def anchor(
    report: RetentionReport,
    summary: str,
    budget: int = DEFAULT_ANCHOR_BUDGET,
    pinned: Sequence[Item] | None = None,
) -> Anchored:
    """``summary`` with the block of what ``report`` says it misses (see the
    module); with ``pinned`` (the retention pane's pins), of those items only."""
    candidates = _candidates(report) if pinned is None else _pinned(report, pinned)
    if not candidates:
        return Anchored(summary, "")
    must = [i for i in candidates if i.category in NEVER_DROPPED]
    rest = [i for i in candidates if i.category not in NEVER_DROPPED]
    chosen = [_masked(i) for i in must]
    for chars in SHORTENED:
        if _cost([item_line(i) for i in chosen]) <= budget:
            break
        chosen = [_masked(i, chars) for i in must]
    left_out: list[Item] = []
    used = _cost([EDITOR_BLOCK_START, EDITOR_BLOCK_END, *(item_line(i) for i in chosen)])
    for item in rest:
        masked = _masked(item, 240)
        cost = estimate_tokens(item_line(masked)) + 1
        if used + cost <= budget:
            chosen.append(masked)
            used += cost
        else:
            left_out.append(item)
    lines = [EDITOR_BLOCK_START, *(item_line(i) for i in chosen), EDITOR_BLOCK_END]
    block = "\n".join(lines)
    text = summary.rstrip("\n") + "\n\n" + block + "\n"
    return Anchored(text, block, chosen, left_out)

"""Pins: missing items the retention pane puts back into the summary that is written.

The pane's marks are the pins. Pinned items become the anchor block
(:func:`kimi_compact_tui.retention.anchor.anchor`, the one block format, the
budget of ``compact --anchor``) appended inside the summary message; the
review state writes the summary with that block (:attr:`ReviewState.summary_to_write`)
while the pins belong to the summary and the range they were made on.
:func:`pinned_now` makes the block at once (string work, no Textual); the
figures of the result are scored in the retention controller's worker
(``Preparation.retention``, from the range's items made once).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.compaction.tokens import estimate_tokens
from kimi_compact_tui.retention import Item, RetentionReport
from kimi_compact_tui.retention.anchor import DEFAULT_ANCHOR_BUDGET, Anchored, anchor

__all__ = ["DEFAULT_ANCHOR_BUDGET", "Pinned", "Pins", "pinned_now"]


@dataclass(frozen=True)
class Pinned:
    """What pinning ``items`` on ``summary`` gives: the summary with the block
    (``anchored``) and the retention of that text (``report``)."""

    summary: str
    items: tuple[Item, ...]
    anchored: Anchored
    report: RetentionReport
    budget: int
    #: False while ``report`` is still the summary's own (the pins hold for the
    #: write at once; their figures are scored in a worker).
    scored: bool = True

    @property
    def text(self) -> str:
        return self.anchored.text

    @property
    def block_tokens(self) -> int:
        return estimate_tokens(self.anchored.block) if self.anchored.block else 0

    def line(self) -> str:
        """One line for people: how many are pinned, the block's size and budget,
        and what did not fit."""
        n = len(self.items)
        out = (
            f"{n} pinned: written inside the summary "
            f"(~{self.block_tokens:,} of {self.budget:,} tokens)"
        )
        left = len(self.anchored.left_out)
        if left:
            out += f"; {left} did not fit"
        return out


@dataclass(frozen=True)
class Pins:
    """Pins held by the review state: ``pinned`` on the summary of run ``key``
    (the load and the range), valid while both are still the ones under review."""

    key: Any
    pinned: Pinned


def pinned_now(
    summary: str, base: RetentionReport, items: Sequence[Item], budget: int = DEFAULT_ANCHOR_BUDGET
) -> Pinned:
    """The pins as they are written, at once (the block is string work; the
    figures of the result are scored later, off the UI thread)."""
    anchored = anchor(base, summary, budget, pinned=list(items))
    return Pinned(summary, tuple(items), anchored, base, budget, scored=False)

"""The legend: each region's mark (a shape of its own, and a colour) and the
row markers, or why nothing will be compacted.

One line, cut with … (never wrapped): with the status line's two it makes the
three-line status area the main screen keeps at any size (80x24 included).
While a split tool exchange is shown, the status line takes this line for
the warning and the legend is hidden (the rows still show the regions).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from kimi_compact_tui.compaction.plan import (
    REGION_AFTER,
    REGION_COMPACT,
    REGION_LEADING,
    REGION_TAIL,
)
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.message_list import (
    MARK_CALL,
    MARK_MEDIA,
    MARK_RESULT,
    MARK_THINK,
    region_mark,
)
from kimi_compact_tui.wording import noop_line

LEGEND_LABELS = {
    REGION_LEADING: "leading system (kept, sent)",
    REGION_COMPACT: "compactable → summary",
    REGION_TAIL: "preserved tail",
    REGION_AFTER: "after boundary (kept, not sent)",
}
MARKERS = f"{MARK_THINK} think {MARK_MEDIA} media {MARK_CALL} call {MARK_RESULT} result"


def legend_text(state: ReviewState, style_of: Callable[[str], Style]) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis", end="")
    prep = state.preparation
    if state.session is None:
        return out
    if prep is not None and not prep.enabled:
        out.append(" compaction disabled ", style="bold reverse red")
        out.append(" " + visible(prep.disabled_reason or "disabled in the config"))
        out.append(" — read-only", style="dim")
    if prep is not None and not prep.enabled:
        pass
    elif prep is None:
        out.append(" no plan ", style="bold reverse red")
        out.append(" the compaction could not be prepared (see the error)")
    elif prep.plan.noop:
        out.append(" ⊘ ", style="bold reverse yellow")
        out.append(" " + visible(noop_line(prep.plan.noop)))
    else:
        regions = [REGION_LEADING] if prep.plan.leading else []
        regions.append(REGION_COMPACT)
        regions.append(REGION_TAIL if prep.plan.mode == "tail" else REGION_AFTER)
        for i, region in enumerate(regions):
            if i:
                out.append("  ")
            out.append(region_mark(region), style=style_of(region))
            out.append(" " + LEGEND_LABELS[region], style=style_of(region))
    out.append("  " + MARKERS, style="dim")
    return out


class Legend(Static):
    DEFAULT_CSS = """
    Legend {
        height: auto; max-height: 2; padding: 0 1;  /* its top border and one line */
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def update_from(self, state: ReviewState, style_of: Callable[[str], Style]) -> None:
        self.update(legend_text(state, style_of))

"""The compaction engine's plain-data steps (no files, no network, no formats).

- :mod:`.plan`: which messages are sent, deleted and kept (``make_plan``);
- :mod:`.pairs`: tool exchanges a boundary would split;
- :mod:`.prompts`: the prompt, always with its provenance;
- :mod:`.request`: the exact request (``build_request``);
- :mod:`.tokens`: token figures that work offline;
- :mod:`.summary`: the summary message's text (``build_compact_summary_text``);
- :mod:`.contract`: the six-section check of a summary.

The compaction job (:mod:`kimi_compact_tui.job`) runs these steps on a loaded
session for every front end.
"""

from __future__ import annotations

from kimi_compact_tui.compaction.plan import CompactionPlan, make_plan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.request import CompactionRequest, build_request
from kimi_compact_tui.compaction.summary import build_compact_summary_text

__all__ = [
    "CompactionPlan",
    "CompactionRequest",
    "PromptSource",
    "build_compact_summary_text",
    "build_request",
    "make_plan",
]

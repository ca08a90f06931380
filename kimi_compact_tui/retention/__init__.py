"""Retention: which specifics of the compacted range a summary keeps, and which it loses.

No Textual here: the CLI, the TUI and the benchmarks share this engine.
"""

from __future__ import annotations

from kimi_compact_tui.retention.candidates import Candidate, CandidateSet, Comparison
from kimi_compact_tui.retention.report import (
    CATEGORIES,
    CATEGORY_LABELS,
    CRITICAL,
    EDITOR_BLOCK_END,
    EDITOR_BLOCK_START,
    EXIT_RETENTION_SHORTFALL,
    KEPT_IN_SUMMARY,
    KEPT_IN_TAIL,
    RENAMED,
    CategoryReport,
    Misstated,
    RetentionReport,
    check_min_retention,
    editor_block,
    instructions_for,
    item_lines_in,
    parse_min_retention,
    retention_report,
    stated_work_dir,
)
from kimi_compact_tui.specifics import Item, extract

__all__ = [
    "CATEGORIES",
    "CATEGORY_LABELS",
    "CRITICAL",
    "RENAMED",
    "EDITOR_BLOCK_END",
    "EDITOR_BLOCK_START",
    "EXIT_RETENTION_SHORTFALL",
    "KEPT_IN_SUMMARY",
    "KEPT_IN_TAIL",
    "Candidate",
    "CandidateSet",
    "CategoryReport",
    "Comparison",
    "Item",
    "Misstated",
    "RetentionReport",
    "check_min_retention",
    "editor_block",
    "instructions_for",
    "item_lines_in",
    "extract",
    "parse_min_retention",
    "retention_report",
    "stated_work_dir",
]

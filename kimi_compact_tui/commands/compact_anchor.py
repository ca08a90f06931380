"""``compact --anchor``: the summary with the block of exact references it lost
(:mod:`kimi_compact_tui.retention.anchor`), as the draft to write."""

from __future__ import annotations

import dataclasses
import sys

from kimi_compact_tui.commands.compact_run import CompactionRun
from kimi_compact_tui.retention import retention_report
from kimi_compact_tui.retention.anchor import Anchored, anchor


def anchored_run(run_: CompactionRun, budget: int, allow_truncated: bool) -> CompactionRun:
    """``run_`` with its draft's summary anchored (unchanged when nothing is missing);
    says on stderr what did not fit in ``budget``."""
    if run_.draft is None or run_.result is None:
        return run_
    report = retention_report(run_.session, run_.plan, run_.draft.summary)
    anchored: Anchored = anchor(report, run_.draft.summary, budget)
    note = anchored.note()
    if note:
        print(note, file=sys.stderr)
    if not anchored.block:
        return run_
    draft = run_.job.draft(
        run_.preparation, run_.result, anchored.text, allow_truncated=allow_truncated
    )
    return dataclasses.replace(run_, draft=draft)

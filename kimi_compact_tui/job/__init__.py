"""The compaction job: the one path through the steps, for every front end
(``compact``, the TUI and the spec facade in :mod:`.feature`).

It sits above the formats, the store and the providers; the plain-data steps
it runs are in :mod:`kimi_compact_tui.compaction`.
"""

from __future__ import annotations

from kimi_compact_tui.job.job import (
    CompactionJob,
    Draft,
    build_compacted_session,
    draft_output_tokens,
    writable_reason,
)
from kimi_compact_tui.job.prepare import Preparation, prepare_compaction
from kimi_compact_tui.job.probing import plan_probe_for, probe_readiness, probe_summary, run_probe
from kimi_compact_tui.job.refusals import Readiness, Refusal, RefusalKind

__all__ = [
    "CompactionJob",
    "Draft",
    "Preparation",
    "Readiness",
    "Refusal",
    "RefusalKind",
    "build_compacted_session",
    "draft_output_tokens",
    "plan_probe_for",
    "probe_readiness",
    "probe_summary",
    "prepare_compaction",
    "run_probe",
    "writable_reason",
]

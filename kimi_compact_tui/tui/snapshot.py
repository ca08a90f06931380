"""What a thread worker is given: taken from the review state on the UI thread,
frozen, and read by nothing else (plain Python, no Textual).

- :class:`JobLoader` loads a session through the compaction job's one load path;
- :class:`Snapshot` is the session under review, its preparation, provider,
  summary and draft, for the workers that diff, stream or write.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.job import CompactionJob, Draft, Preparation
from kimi_compact_tui.providers import ProviderConfig


@dataclass(frozen=True)
class JobLoader:
    """What a load needs of the review (taken on the UI thread): loads a
    session through the compaction job's one load path, in any thread."""

    config: AppConfig
    prompt_file: str | None
    base_model: str | None

    def load(self, path: str | Path | SessionRef) -> CompactionJob:
        job = CompactionJob.load(
            path, self.config, prompt_file=self.prompt_file, base_model=self.base_model
        )
        job.count_tokens()  # each message's token estimate, once, off the UI thread
        return job


@dataclass(frozen=True)
class Snapshot:
    """What a thread worker may read: taken on the UI thread, never changed."""

    job: CompactionJob
    preparation: Preparation
    provider: ProviderConfig
    summary: str | None
    draft: Draft | None

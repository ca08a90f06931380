"""The finished runs of one review, kept as candidates (plain Python, no Textual).

Every finished run (complete or truncated) becomes a
:class:`~kimi_compact_tui.retention.Candidate`, kept with its StreamResult and
the identity of what it summarised: a :class:`RunKey` (the load generation of
the session and the plan's boundary). A candidate can be chosen only while the
review is on the very same key, so a run of another session (or of the same
file before a write) never becomes the summary to write. The
:class:`RunBook` lives in :class:`~kimi_compact_tui.tui.state.ReviewState`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kimi_compact_tui.compaction.contract import check_sections
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.providers import StreamResult
from kimi_compact_tui.retention import Candidate, CandidateSet, RetentionReport

FINISHED = ("complete", "truncated")


@dataclass(frozen=True)
class RunKey:
    """What a run summarised: the session as loaded (its load generation: a new
    load, even of the same file, is a new generation) and the boundary."""

    generation: int
    mode: str
    boundary: int


@dataclass
class RunBook:
    """The candidates of one session's review and the runs behind them."""

    candidates: CandidateSet = field(default_factory=CandidateSet)
    results: dict[int, StreamResult] = field(default_factory=dict)
    keys: dict[int, RunKey] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.candidates)

    def record(
        self,
        result: StreamResult | None,
        key: RunKey,
        *,
        prompt: PromptSource,
        instructions: str,
        model: str | None,
    ) -> Candidate | None:
        """Keep a finished run as a candidate (None for failed or cancelled runs)."""
        if result is None or result.status not in FINISHED or not result.summary.strip():
            return None
        check = check_sections(result.summary)
        figures = result.figures()
        candidate = self.candidates.add(
            result.summary,
            provider=result.provider or "unknown",
            model=result.model or model,
            prompt_source=prompt.source,
            prompt_path=prompt.path,
            prompt_sha256=prompt.sha256,
            custom_instructions=instructions,
            output_tokens=figures.tokens,
            tokens_estimated=figures.estimated,
            seconds=figures.seconds,
            contract_ok=check.ok,
            contract_warnings=tuple(check.warnings()),
        )
        self.results[candidate.number] = result
        self.keys[candidate.number] = key
        return candidate

    def set_retention(self, number: int | None, report: RetentionReport) -> None:
        if number is not None and number in self.results:
            self.candidates.get(number).retention = report

    def choosable(self, number: int, key: RunKey | None) -> StreamResult:
        """The result of candidate ``number`` when it may become the summary to
        write for the review now on ``key``; else a UserError saying why."""
        if number not in self.results:
            raise UserError(f"there is no candidate #{number}")
        if key is None or self.keys.get(number) != key:
            raise UserError(f"candidate #{number} summarised another range: compact again (c)")
        result = self.results[number]
        why = result.write_refusal()
        if why is not None:
            raise UserError(f"candidate #{number} cannot be written: {why}")
        return result

    def mark_chosen(self, number: int) -> Candidate:
        return self.candidates.choose(number)

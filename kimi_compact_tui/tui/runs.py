"""The finished runs of one review, kept as candidates (plain Python, no Textual).

Every finished run (complete or truncated) becomes a
:class:`~kimi_compact_tui.retention.Candidate`, kept with its StreamResult and
the identity of what it summarised: a :class:`RunKey` (the load generation of
the session and the plan's boundary). A candidate can be chosen only while the
review is on the very same key, so a run of another session (or of the same
file before a write) never becomes the summary to write. The
:class:`RunBook` lives in :class:`~kimi_compact_tui.tui.state.ReviewState`.

A revision (feedback on a finished run, ``f`` on the stream screen) is a run
like any other, with a :class:`RunLink` to the run it revises: its parent's
number and the rounds its request carried (each earlier summary and its
feedback, in order, the last one the parent's). Each run also keeps its
:class:`~kimi_compact_tui.job.revise.RevisionOrigin` (the range and the bytes
it was made on), which a revision of it is checked against before any request.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kimi_compact_tui.compaction.contract import check_sections
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.request import RevisionRound
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.job.revise import RevisionOrigin
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


@dataclass(frozen=True)
class RunLink:
    """A revision's link: the run it revises (``parent``) and the rounds its
    request carried, oldest first; the last is the parent's summary and the
    feedback on it."""

    parent: int
    rounds: tuple[RevisionRound, ...]

    @property
    def feedback(self) -> str:
        return self.rounds[-1].feedback


def first_line(text: str) -> str:
    """The first line of ``text`` that holds anything (feedback's headline)."""
    for line in text.split("\n"):
        if line.strip():
            return line.strip()
    return ""


@dataclass
class RunBook:
    """The candidates of one session's review and the runs behind them."""

    candidates: CandidateSet = field(default_factory=CandidateSet)
    results: dict[int, StreamResult] = field(default_factory=dict)
    keys: dict[int, RunKey] = field(default_factory=dict)
    links: dict[int, RunLink] = field(default_factory=dict)
    origins: dict[int, RevisionOrigin] = field(default_factory=dict)

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
        link: RunLink | None = None,
        origin: RevisionOrigin | None = None,
    ) -> Candidate | None:
        """Keep a finished run as a candidate (None for failed or cancelled
        runs), with its link when it is a revision and what it was made on."""
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
        if link is not None:
            self.links[candidate.number] = link
        if origin is not None:
            self.origins[candidate.number] = origin
        return candidate

    def number_of(self, result: StreamResult | None) -> int | None:
        """The candidate ``result`` (the very object) was kept as, or None."""
        for number, kept in self.results.items():
            if kept is result:
                return number
        return None

    def rounds_for(self, number: int, summary: str, feedback: str) -> tuple[RevisionRound, ...]:
        """The rounds of a revision of candidate ``number``: the rounds that
        made it (none for a first run), then ``summary`` (its text as the
        reviewer has it) and ``feedback``."""
        link = self.links.get(number)
        earlier = link.rounds if link is not None else ()
        return (*earlier, RevisionRound(summary, feedback))

    def chain(self, number: int) -> list[int]:
        """The runs from the first summary to candidate ``number``, by parent links."""
        out = [number]
        while out[0] in self.links and len(out) <= len(self.links):
            out.insert(0, self.links[out[0]].parent)
        return out

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

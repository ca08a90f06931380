"""The review state shared by every TUI screen (plain Python, no Textual).

A :class:`ReviewState` holds the config and provider, the compaction job of
the session under review (the same job the CLI runs), the user's choices, the
engine's :class:`~kimi_compact_tui.job.Preparation`, the last run and the
summary to write (possibly edited), the runs kept as candidates, the pins
(item keys of the range: they hold on any summary of it until an edit, see
:attr:`ReviewState.pinned`), the retention reports scored so far and the
probe reports (by the text probed: per candidate and pins). It is the one
copy: screens and panes keep none of these and render from it, told by one
change signal (:meth:`ReviewState.watch`). Screens change it only through its
methods, on the UI thread. Thread workers never read it: they get a frozen
:class:`Snapshot` (or a draft) taken on the UI thread, and return a value the
UI thread applies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kimi_compact_tui import store
from kimi_compact_tui.compaction.pairs import ToolSplit, find_splits, nearest_safe_up_to
from kimi_compact_tui.compaction.prompts import PromptSource, edited_prompt
from kimi_compact_tui.config import AppConfig, load_config
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.loader import Fingerprint
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.job import (
    CompactionJob,
    Draft,
    Preparation,
    Refusal,
    RefusalKind,
    offers,
    writable_reason,
)
from kimi_compact_tui.job.offers import RestoreOffer
from kimi_compact_tui.job.revise import RevisionOrigin, origin_refusal
from kimi_compact_tui.providers import ProviderConfig, StreamResult, provider_config_from
from kimi_compact_tui.retention import Item, RetentionReport
from kimi_compact_tui.secrets import mask_secrets
from kimi_compact_tui.tui.gate import Held
from kimi_compact_tui.tui.pins import Pinned, pinned_now
from kimi_compact_tui.tui.runs import RunBook, RunKey, RunLink
from kimi_compact_tui.tui.snapshot import JobLoader, Snapshot
from kimi_compact_tui.wording import noop_line

#: A pin: an item of the range by its category and key (not by its text or place).
ItemKey = tuple[str, str]
#: How many scored texts are kept (each summary, with and without its pins).
SCORES_KEPT = 64


def item_key(item: Item) -> ItemKey:
    return (item.category, item.key)


@dataclass
class ReviewState:
    config: AppConfig = field(default_factory=AppConfig)
    provider: ProviderConfig | None = None
    prompt_file: str | None = None
    cli_model: str | None = None  # --model: the request model, over any compaction_model
    job: CompactionJob | None = None
    generation: int = 0  # one more per load: what a run summarised is tied to it
    up_to: int | None = None  # 1-based explicit boundary, None = default preserved tail
    custom_instruction: str = ""
    compaction_model: str | None = None  # per-session override
    preparation: Preparation | None = None
    stream_result: StreamResult | None = None  # the last run
    summary: str | None = None  # the summary to write (edited or as streamed)
    summary_edited: bool = False
    runs: RunBook = field(default_factory=RunBook)
    pin_keys: frozenset[ItemKey] = frozenset()  # the pins, of the range of _pin_run
    _pin_run: RunKey | None = None
    _scores: dict[str, RetentionReport] = field(default_factory=dict)  # by the text scored
    probes: dict[str, Any] = field(default_factory=dict)  # ProbeReport by the text probed
    probe_notes: dict[str, str] = field(default_factory=dict)  # what a probe is doing, by text
    probe_count: int | None = None  # questions a probe asks (None: the job's default)
    _observers: list[Callable[[], None]] = field(default_factory=list)
    _pinned: tuple[tuple[str, frozenset[ItemKey], int], Pinned | None] | None = None
    _scored_version: int = 0  # one more per report kept
    _prompt: PromptSource | None = None
    _edited_prompt: bool = False
    # safe_boundaries() of the session (tool_exchanges is ~0.5 s at 100k messages):
    # computed off the UI thread after a load, None until then.
    safe: list[bool] | None = None
    _splits: tuple[int, int, list[ToolSplit]] | None = None
    #: The pending review of the open session (the gate holds the agent's own
    #: compaction of it), as the app read it after a load or a write; None: none.
    held: Held | None = None

    # --- construction -------------------------------------------------------------
    @classmethod
    def create(
        cls,
        *,
        config_path: str | Path | None = None,
        provider: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        prompt_file: str | None = None,
    ) -> ReviewState:
        """Load the config and provider (raises UserError with one line)."""
        config = load_config(config_path)
        prov = provider_config_from(
            config.provider, provider=provider, model=model, base_url=base_url
        )
        return cls(
            config=config,
            provider=prov,
            prompt_file=prompt_file,
            cli_model=model,
            compaction_model=model,
        )

    def loader(self) -> JobLoader:
        """The loader for a worker (see :class:`JobLoader`)."""
        return JobLoader(self.config, self.prompt_file, self.base_model)

    # --- the session under review -------------------------------------------------
    @property
    def session(self) -> Session | None:
        return self.job.session if self.job is not None else None

    @property
    def session_ref(self) -> SessionRef | None:
        """The session under review as the loader and the store take it: its
        reference (its file, or ``DB#KEY`` for one session of many in a database)."""
        session = self.job.session if self.job is not None else None
        return session.ref if session is not None and session.saved else None

    @property
    def session_path(self) -> Path | None:
        """The file that holds the session under review."""
        ref = self.session_ref
        return None if ref is None else ref.path

    @property
    def fingerprint(self) -> Fingerprint | None:
        return self.job.fingerprint if self.job is not None else None

    @property
    def message_tokens(self) -> list[int]:
        job = self.job
        return (job.message_tokens or []) if job is not None else []

    def load(self, path: str | Path) -> Session:
        """Load ``path`` on this thread and adopt it (tests and scripts)."""
        job = self.loader().load(path)
        self.adopt(job)
        return job.session

    def adopt(self, job: CompactionJob, *, up_to: int | None = None) -> None:
        """Make ``job`` the session under review (UI thread). Another file resets
        every per-session choice (instructions, model override, edited prompt,
        candidates); reloading the same file (after a write or an undo) keeps
        the choices. ``up_to``: an explicit 1-based boundary (a bad one raises
        UserError; the session stays)."""
        # the same session (for a database, the same key too), not only the same file
        old = self.job.session.ref if self.job is not None else None
        same_file = old is not None and old == job.session.ref
        self.job = job
        self.generation += 1
        if not same_file:
            self.custom_instruction = ""
            self.compaction_model = self.cli_model
            if self._edited_prompt:
                self._prompt, self._edited_prompt = None, False
            self.runs = RunBook()
        self._scores.clear()
        self.probes.clear()
        self.probe_notes.clear()
        self.safe = None
        self._splits = None
        self.up_to = None
        self.clear_result()
        self.replan()
        if up_to is not None:
            self.set_boundary(up_to - 1)
        self.changed()

    def regrow(self, job: CompactionJob, preparation: Preparation) -> None:
        """Move the review onto the session as it is now, when the agent only
        appended turns after the loaded ones (``CompactionJob.regrown``: the
        same compacted range, the new turns in the kept tail). The summary,
        its pins and the candidates of the range are kept: they summarise the
        same messages, now of a new load generation (their keys move to it).
        What depends on the whole session (the scores, the probes, the safe
        boundaries) is computed again."""
        old = self.run_key()
        self.job = job
        self.generation += 1
        self.preparation = preparation
        self.up_to = preparation.plan.boundary  # the range is explicit: the old boundary
        new = self.run_key()
        if old is not None and new is not None:
            for number, key in list(self.runs.keys.items()):
                if key == old:
                    self.runs.keys[number] = new
            if self._pin_run == old:
                self._pin_run = new
        self._scores.clear()
        self._pinned = None
        self.probes.clear()
        self.probe_notes.clear()
        self.safe = None
        self._splits = None
        self.changed()

    # --- the change signal ------------------------------------------------------------
    def watch(self, observer: Callable[[], None]) -> Callable[[], None]:
        """Call ``observer`` (on the UI thread) after every change of the review;
        returns the call that stops it."""
        self._observers.append(observer)

        def stop() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return stop

    def changed(self) -> None:
        for observer in list(self._observers):
            observer()

    # --- planning -----------------------------------------------------------------
    @property
    def prompt(self) -> PromptSource:
        if self._prompt is None:
            self._prompt = self.config.prompt(self.prompt_file)
        return self._prompt

    @property
    def base_model(self) -> str | None:
        return self.provider.model if self.provider is not None else None

    def replan(self) -> Preparation | None:
        """Recompute the preparation from the current choices."""
        if self.job is None:
            self.preparation = None
            return None
        self.preparation = self.job.prepare(
            up_to=self.up_to,
            custom_instruction=self.custom_instruction,
            compaction_model=self.compaction_model,
            prompt=self.prompt,
        )
        return self.preparation

    def set_boundary(self, index: int | None) -> None:
        """Compact messages up to and including ``index`` (0-based); None = default tail."""
        up_to = None if index is None else index + 1
        if up_to == self.up_to:
            return
        previous, self.up_to = self.up_to, up_to
        try:
            self.replan()
        except Exception:
            self.up_to = previous
            self.replan()
            raise
        self.clear_result()
        self.changed()

    def set_custom_instruction(self, text: str) -> None:
        if text != self.custom_instruction:
            self.custom_instruction = text
            self.clear_result()
            self.replan()
            self.changed()

    def set_prompt_text(self, text: str | None) -> None:
        """Use an edited copy of the prompt (None: back to the configured one)."""
        self._prompt = None if text is None else edited_prompt(text)
        self._edited_prompt = text is not None
        self.clear_result()
        self.replan()
        self.changed()

    def set_compaction_model(self, model: str | None) -> None:
        model = (model or "").strip() or None
        if model != self.compaction_model:
            self.compaction_model = model
            self.clear_result()
            self.replan()
            self.changed()

    # --- results ------------------------------------------------------------------
    def clear_result(self) -> None:
        """Drop the summary and its pins (a new range, instructions, model or prompt)."""
        self.pin_keys, self._pin_run = frozenset(), None
        self.stream_result = None
        self.summary = None
        self.summary_edited = False
        self.changed()

    def run_key(self) -> RunKey | None:
        """What a run started now summarises (None when nothing compacts)."""
        prep = self.preparation
        if self.job is None or prep is None or prep.plan.noop:
            return None
        return RunKey(self.generation, prep.plan.mode, prep.plan.boundary)

    def set_result(self, result: StreamResult | None) -> None:
        """Store a run; its summary becomes the one to write only when the one
        writable rule (``StreamResult.write_refusal``) allows it."""
        self.stream_result = result
        ok = result is not None and result.write_refusal() is None
        self.summary = result.summary if ok and result is not None else None
        self.summary_edited = False
        self.changed()

    def origin(self) -> RevisionOrigin | None:
        """What a run started now is made on (its range and the bytes loaded):
        kept with the run, and checked before a revision of it."""
        if self.job is None or self.preparation is None:
            return None
        return RevisionOrigin.of(self.preparation, self.job.fingerprint)

    def finish_run(
        self,
        result: StreamResult,
        key: RunKey | None,
        *,
        link: RunLink | None = None,
        origin: RevisionOrigin | None = None,
    ) -> int | None:
        """A run ended (UI thread): keep it as the result when it summarised what
        is under review now, and as a candidate (with ``link`` for a revision,
        and the ``origin`` it was made on); the candidate's number or None."""
        if key is not None and key == self.run_key():
            self.set_result(result)
        if key is None:
            return None
        candidate = self.runs.record(
            result,
            key,
            prompt=self.prompt,
            instructions=self.custom_instruction,
            model=self.preparation.compaction_model if self.preparation else None,
            link=link,
            origin=origin,
        )
        return candidate.number if candidate is not None else None

    # --- revisions (feedback on a finished run) -------------------------------------
    @property
    def current_run(self) -> int | None:
        """The candidate number of the run under review (None: no run, or one
        that was not kept)."""
        return self.runs.number_of(self.stream_result)

    def revision_note(self) -> str:
        """How the questions before the summary is dropped name a revision:
        `` (revision #3 of #1, 2 rounds of feedback)``; "" for any other summary."""
        number = self.current_run
        link = self.runs.links.get(number) if number is not None else None
        if number is None or link is None:
            return ""
        rounds = len(link.rounds)
        plural = "s" if rounds > 1 else ""
        return f" (revision #{number} of #{link.parent}, {rounds} round{plural} of feedback)"

    def revision_link(self, number: int, summary: str, feedback: str) -> RunLink:
        """The link of a revision of candidate ``number`` (``summary``: its text
        as the reviewer has it, perhaps edited) by ``feedback``: every earlier
        round of its chain, then this one."""
        return RunLink(number, self.runs.rounds_for(number, summary, feedback))

    def revision_refusal(self, link: RunLink) -> Refusal | None:
        """Why the revision ``link`` may not be asked for now (before any
        request): the session changed on disk or was reloaded with other
        bytes since the revised run was made, or the boundary moved."""
        origin = self.runs.origins.get(link.parent)
        prep = self.preparation
        if origin is None or prep is None:
            why = f"candidate #{link.parent} has no record of the range it was made on"
            return Refusal(RefusalKind.REVISION_RANGE, f"{self.session_ref}: not revised: {why}")
        return origin_refusal(origin, prep, self.fingerprint)

    def choose_candidate(self, number: int) -> None:
        """Make candidate ``number`` the summary to edit and write (UserError when
        it summarised another session or range, or cannot be written)."""
        result = self.runs.choosable(number, self.run_key())
        self.runs.mark_chosen(number)
        self.set_result(result)  # the pins of the range hold on it

    def set_summary(self, text: str) -> None:
        """An edit by hand: it is what is written, pins done (the editor opened on
        the summary with their block); masked, so it is shown as it is written."""
        self.summary = mask_secrets(text)
        self.summary_edited = True
        self.pin_keys, self._pin_run = frozenset(), None
        self.changed()

    # --- retention (reports scored by a controller's worker, kept by text) ----------
    def scored(self, text: str | None) -> RetentionReport | None:
        """The retention report of ``text`` when it has been scored, else None."""
        return None if text is None else self._scores.get(text)

    def set_score(self, text: str, report: RetentionReport) -> None:
        """Keep the report of ``text`` (scored in a worker); a candidate's own
        text gives the candidate its figures."""
        if len(self._scores) >= SCORES_KEPT:
            self._scores.pop(next(iter(self._scores)))
        self._scores[text] = report
        self._scored_version += 1
        for number, result in self.runs.results.items():
            if result.summary == text:
                self.runs.set_retention(number, report)
        self.changed()

    def retention(self, text: str | None) -> RetentionReport | None:
        """The report of ``text``, scored here (on this thread) when no worker has
        yet: what is written must never wait for a worker."""
        report = self.scored(text)
        if report is None and text is not None and self.job is not None:
            prep = self.preparation
            if prep is not None and not prep.plan.noop:
                report = prep.retention(text)
                self._scores[text] = report
                self._scored_version += 1
        return report

    # --- pins (missing items of the range, written inside the summary) ---------------
    def pinned_keys(self) -> frozenset[ItemKey]:
        """The pins while the range they were made on is under review, with a summary."""
        if self.summary is None or self._pin_run is None or self._pin_run != self.run_key():
            return frozenset()
        return self.pin_keys

    def set_pins(self, items: Iterable[Item]) -> None:
        """Pin exactly ``items`` (none: unpin every item)."""
        keys = frozenset(item_key(i) for i in items)
        self.pin_keys = keys
        self._pin_run = self.run_key() if keys else None
        self.changed()

    def toggle_pins(self, items: Iterable[Item]) -> None:
        """Pin ``items``, or unpin them when all are pinned already."""
        wanted = {item_key(i) for i in items}
        keys = self.pinned_keys()
        self.pin_keys = keys - wanted if wanted <= keys else keys | wanted
        self._pin_run = self.run_key() if self.pin_keys else None
        self.changed()

    def is_pinned(self, item: Item) -> bool:
        return item_key(item) in self.pinned_keys()

    @property
    def pinned(self) -> Pinned | None:
        """The summary under review with the block of the pinned items it misses
        (None: nothing pinned, or the summary holds every pinned item itself).
        Built from the pins, the summary and its report: the one place, so the
        stream, the diff, the dialog, the probe and the write cannot differ."""
        keys = self.pinned_keys()
        summary = self.summary
        if not keys or summary is None:
            return None
        cache = self._pinned
        if cache is not None and cache[0] == (summary, keys, self._scored_version):
            return cache[1]
        base = self.retention(summary)
        pinned: Pinned | None = None
        if base is not None:
            items = [i for i in base.missing_items() if item_key(i) in keys]
            if items:
                pinned = pinned_now(summary, base, items)
                report = self.scored(pinned.text)
                if report is not None:
                    pinned = replace(pinned, report=report, scored=True)
        self._pinned = ((summary, keys, self._scored_version), pinned)
        return pinned

    def pins_line(self) -> str | None:
        """What the pins do to the summary to write, for people (None: no pins)."""
        n = len(self.pinned_keys())
        if not n:
            return None
        pinned = self.pinned
        held = n - (len(pinned.items) if pinned is not None else 0)
        what = f"{n} pinned item{'' if n == 1 else 's'}"
        if held == n:
            return f"{what}: the summary already holds them"
        if held:
            return f"{what}: {n - held} written inside the summary, {held} already in it"
        return f"{what}: written inside the summary"

    # --- the probe (reports kept by the text probed: per candidate and pins) ----------
    def probe_of(self, text: str | None) -> Any:
        return None if text is None else self.probes.get(text)

    def set_probe(self, text: str, report: Any) -> None:
        self.probes[text] = report
        self.probe_notes.pop(text, None)
        self.changed()

    def set_probe_note(self, text: str, note: str | None) -> None:
        if note is None:
            self.probe_notes.pop(text, None)
        else:
            self.probe_notes[text] = note
        self.changed()

    @property
    def summary_to_write(self) -> str | None:
        """The summary as it is written: with the pinned block when items are pinned."""
        pinned = self.pinned
        return pinned.text if pinned is not None else self.summary

    # --- writing (the compaction job, as the CLI) -----------------------------------
    def write_refusal(self) -> str | None:
        """The one writable rule, for the summary under review: None when it can
        be written, else why not."""
        if self.job is None or self.preparation is None:
            return "no session is loaded"
        if self.preparation.plan.noop:
            return noop_line(self.preparation.plan.noop)
        return writable_reason(self.stream_result, self.summary)

    @property
    def writable(self) -> bool:
        return self.write_refusal() is None

    def draft(self) -> Draft | None:
        """The job's draft of the reviewed summary (None when there is nothing
        writable): the one build the diff, the confirm dialog and the write use."""
        if self.job is None or self.preparation is None or not self.writable:
            return None
        try:
            return self.job.draft(self.preparation, self.stream_result, self.summary_to_write)
        except UserError:
            return None

    def compacted_session(self) -> Session | None:
        draft = self.draft()
        return draft.compacted if draft is not None else None

    def snapshot(self) -> Snapshot | None:
        """A frozen view for a worker (None without a session)."""
        if self.job is None or self.preparation is None:
            return None
        provider = self.provider if self.provider is not None else ProviderConfig()
        summary = self.summary_to_write
        return Snapshot(self.job, self.preparation, provider, summary, self.draft())

    def write(self, *, allow_split: bool = False) -> str:
        """Write the reviewed summary through the compaction job, on this thread
        (tests and scripts; the app commits a snapshot's draft in a worker)."""
        snap = self.snapshot()
        if snap is None or snap.draft is None:
            raise UserError(f"nothing to write: {self.write_refusal() or 'compact first (c)'}")
        return snap.job.commit(snap.draft, snap.provider, allow_split=allow_split).describe()

    # --- undo and restore points (the only calls into the store's restore) -------
    def target(self) -> store.Target:
        """The session file and its format, for the store's restore rules."""
        if self.session is None:
            raise UserError("no session loaded")
        return store.Target.of(self.session)

    def undo_offer(self) -> RestoreOffer:
        """What ``u`` offers: the copy kept by this tool's newest write, or why
        there is nothing of ours to undo (see :mod:`kimi_compact_tui.job.offers`)."""
        return offers.undo_offer(self.target())

    def restore_points(self) -> list[store.RestorePoint]:
        """Every restore point of the session, newest first, labelled by origin."""
        return store.restore_points(self.target())

    def restore_offer(self, point: store.RestorePoint) -> RestoreOffer:
        """The offer for a restore point picked from :meth:`restore_points`."""
        return offers.point_offer(self.target(), point)

    def restore(self, offer: RestoreOffer, *, force: bool = False) -> str:
        """Carry out a confirmed offer on this thread (refused when the live file
        changed since this tool wrote it, unless ``force``)."""
        return offers.carry_out(offer, force=force).describe()

    # --- derived ------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        return self.preparation is not None and self.preparation.enabled

    @property
    def disabled_reason(self) -> str | None:
        return self.preparation.disabled_reason if self.preparation is not None else None

    @property
    def noop(self) -> str | None:
        return self.preparation.plan.noop if self.preparation is not None else None

    @property
    def can_compact(self) -> bool:
        return self.enabled and self.preparation is not None and not self.preparation.plan.noop

    def unwritten_runs(self) -> list[int]:
        """The candidates of the range under review that could be written: kept
        when the last run (a cancelled or failed revision) left nothing to write,
        and lost by quitting or opening another session."""
        key = self.run_key()
        if key is None:
            return []
        return [
            number
            for number, kept in self.runs.keys.items()
            if kept == key and self.runs.results[number].write_refusal() is None
        ]

    @property
    def has_work(self) -> bool:
        """A summary (streamed or edited) exists that a replan would discard."""
        return self.summary is not None or self.summary_edited

    @property
    def splits(self) -> list[ToolSplit]:
        """The tool exchanges the current plan would split (none when nothing
        compacts). Uses :attr:`safe` when known, so an unsplit boundary costs
        nothing; a split one is described once per boundary."""
        session, prep = self.session, self.preparation
        if not self.can_compact or session is None or prep is None:
            return []
        plan = prep.plan
        if self.safe is not None and len(self.safe) > plan.boundary and self.safe[plan.boundary]:
            return []
        cached = self._splits
        if cached is not None and cached[:2] == (self.generation, plan.boundary):
            return cached[2]
        found = find_splits(session.messages, plan)
        self._splits = (self.generation, plan.boundary, found)
        return found

    @property
    def known_splits(self) -> list[ToolSplit]:
        """:attr:`splits`, but empty while :attr:`safe` is not known yet (for the
        status line and the keys, which must not stall the UI thread)."""
        return self.splits if self.safe is not None else []

    def set_safe(self, generation: int, safe: list[bool]) -> None:
        """Adopt ``safe_boundaries`` computed in a worker for load ``generation``."""
        if generation == self.generation:
            self.safe = safe

    def safe_up_to(self) -> int | None:
        """The nearest explicit boundary (1-based) that splits no tool exchange."""
        session, prep = self.session, self.preparation
        if session is None or prep is None or prep.plan.noop:
            return None
        return nearest_safe_up_to(session.messages, prep.plan.boundary, prep.plan.leading)

    def move_to_safe_boundary(self) -> int:
        """Move the boundary to :meth:`safe_up_to`; return it (UserError when none)."""
        up_to = self.safe_up_to()
        if up_to is None:
            raise UserError("no boundary nearby keeps every tool call with its results")
        self.set_boundary(up_to - 1)
        return up_to

    @property
    def tokens_before(self) -> int:
        return sum(self.message_tokens)

    def tokens_after(self) -> int:
        """The estimated tokens of the session that would be written: the one
        figure the status line, the diff and the confirm dialog show."""
        prep = self.preparation
        if prep is None:
            return self.tokens_before
        return prep.tokens_after(self.summary_to_write)

    @property
    def offline(self) -> bool:
        return self.provider is None or self.provider.offline

    def compaction_model_suggestions(self) -> list[str]:
        out: list[str] = []
        for name in (
            self.compaction_model,
            self.preparation.compaction_model if self.preparation else None,
            self.base_model,
            self.config.compaction.block_model,
        ):
            if name and name not in out:
                out.append(name)
        return out

"""What ``compact`` prints: the summary streaming to the terminal, what is
said before the request (a split, the announcement, the rounds revised), a
draft that grows the session, the JSON result, and what a no-op left alone."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.commands.common import warn_splits
from kimi_compact_tui.commands.compact.run import CompactionRun
from kimi_compact_tui.commands.rounds import Rounds, dropped_note
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.wording import span

if TYPE_CHECKING:
    from kimi_compact_tui.commands.compact.options import CompactOptions
    from kimi_compact_tui.formats.storage import SessionRef
    from kimi_compact_tui.job import Draft, Preparation
    from kimi_compact_tui.job.window import Window
    from kimi_compact_tui.providers import ProviderConfig, StreamEvent

DIM = "\x1b[2m"
RESET = "\x1b[0m"


class Printer:
    """Streams events to the terminal: summary on stdout, the rest on stderr."""

    def __init__(self) -> None:

        self.dim = sys.stderr.isatty()
        # On a terminal, control characters in model text are shown, not obeyed.
        self.show_out = visible if sys.stdout.isatty() else str
        self.show_err = visible if self.dim else str
        self.last_char = "\n"
        self.reasoning_open = False
        self.stdout_closed = False

    def _err(self, text: str) -> None:
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (BrokenPipeError, ValueError):
            pass

    def _out(self, text: str) -> None:
        """Write summary text; a closed pipe (``| head``) stops the echo, not the stream."""
        if self.stdout_closed:
            return
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            self.stdout_closed = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # keep the exit-time flush quiet
            os.close(devnull)

    def __call__(self, event: StreamEvent) -> None:
        if event.kind == "text":
            if self.reasoning_open:
                self._err("\n")
                self.reasoning_open = False
            self._out(self.show_out(event.text))
            self.last_char = event.text[-1:]
        elif event.kind == "reasoning":
            self.reasoning_open = True
            text = self.show_err(event.text)
            self._err(f"{DIM}{text}{RESET}" if self.dim else text)
        elif event.kind == "retry":
            self._err(f"retry: {event.text}\n")
        # "status" events are progress notes for the TUI; the CLI announces itself once.

    def finish(self) -> None:
        if self.reasoning_open:
            self._err("\n")
        if self.last_char not in ("", "\n"):
            self._out("\n")


def announce(prep: Preparation, pcfg: ProviderConfig, window: Window | None = None) -> None:
    """What is compacted, with what; an unknown context window is said (not guessed)."""
    from kimi_compact_tui.providers import OFFLINE_NOTICE

    indices = list(prep.plan.compact_indices)
    which = span(indices[0] + 1, indices[-1] + 1) if indices else "no messages"
    unknown = "" if window is None or window.known else f"; {window.describe()}"
    print(f"compacting {which} with {pcfg.describe()}{unknown}", file=sys.stderr)
    if pcfg.offline:
        print(f"note: {OFFLINE_NOTICE}", file=sys.stderr)
    sys.stderr.flush()


def nothing_written(opts: CompactOptions) -> str:
    """What a no-op left alone: the --output file, or the session."""
    if opts.output:
        out = Path(opts.output).expanduser()
        return f"nothing written ({out} {'left unchanged' if out.exists() else 'not created'})"
    if opts.in_place:
        return f"nothing written ({opts.session.session} unchanged)"
    return "nothing written"


def json_result(run: CompactionRun, written: Path | SessionRef | None) -> dict[str, Any]:
    from kimi_compact_tui.providers import OFFLINE_NOTICE

    if run.result is None:
        data: dict[str, Any] = {
            "status": "noop",
            "summary": None,
            "reasoning": None,
            "usage": None,
            "model": None,
            "provider": run.provider.kind,
            "offline": run.provider.offline,
            "finish_reason": None,
            "timings": {"time_to_first_token": None, "total": None},
            "error": None,
            "noop": run.plan.noop,
        }
    else:
        data = run.result.to_json()
        data["noop"] = None
        if run.draft is not None:
            data["summary"] = run.draft.summary  # as written (an anchor block included)
    data["session"] = str(run.session.ref)
    data["output"] = str(written) if written else None
    data["written"] = written is not None
    data["messages_before"] = len(run.session.messages)
    data["messages_after"] = len(run.compacted.messages) if run.compacted else None
    draft = run.draft
    data["tokens_before"] = run.preparation.tokens_before
    data["tokens_after"] = draft.tokens_after if draft is not None else None
    data["grows"] = draft.grows if draft is not None else None
    if data.get("offline"):
        data["notice"] = OFFLINE_NOTICE
    data["revision"] = revision_json(run)
    return data


def revision_json(run: CompactionRun) -> dict[str, Any] | None:
    """``--from-summary`` / ``--revise``: which summary, and for a revision
    the rounds sent and left out (None for a compaction)."""
    rounds = run.rounds
    if rounds is None:
        return None
    request = run.preparation.request
    if rounds.given_only:
        return {"from_summary": rounds.names[0], "rounds": 0, "rounds_sent": 0, "dropped": 0}
    return {
        "from_summary": rounds.names[-1],
        "rounds": len(rounds.feedback),
        "rounds_sent": len(request.revisions) if request is not None else 0,
        "dropped": request.dropped_rounds if request is not None else 0,
    }


def starter(
    opts: CompactOptions, rounds: Rounds | None = None
) -> Callable[[Preparation, ProviderConfig, Window | None], None]:
    """Once the job's refusals passed and before the request: the warning for
    a tool call split from its result by a summary not written in place (in
    place, the job refused it unless ``--allow-split``); then the announcement."""

    def start(prep: Preparation, pcfg: ProviderConfig, window: Window | None) -> None:
        if not opts.in_place:
            warn_splits(prep)
        if opts.json:
            return
        if rounds is not None and rounds.given_only:
            print(f"writing {rounds.label}", file=sys.stderr)
            return
        if rounds is not None and pcfg.offline:
            announce_offline_revision(prep, rounds)
            return
        if rounds is not None:
            request = prep.request
            dropped = request.dropped_rounds if request is not None else 0
            print(f"revising: {rounds.label}", file=sys.stderr)
            if dropped:
                print(f"kimi-compact-tui: note: {dropped_note(dropped)}", file=sys.stderr)
        announce(prep, pcfg, window)

    return start


def announce_offline_revision(prep: Preparation, rounds: Rounds) -> None:
    """A revision with no model: the summary given is kept, and stderr says
    which feedback a rule followed and which it could not."""
    from kimi_compact_tui.providers.offline import offline_revision

    where = rounds.where(len(rounds.feedback) - 1)
    print(
        f"revising the summary in {where} without a model (offline): it is kept as it is, "
        "and only feedback a rule can follow is applied",
        file=sys.stderr,
    )
    revision = offline_revision(prep.request) if prep.request is not None else None
    for note in revision.notes()[1:] if revision is not None else []:
        print(f"note: {note}", file=sys.stderr)
    sys.stderr.flush()


def warn_growth(draft: Draft) -> None:
    """A compaction that makes the session larger is said, with both figures,
    before anything is written (and when nothing is)."""
    line = draft.growth_warning()
    if line is not None:
        print(f"kimi-compact-tui: warning: {line}", file=sys.stderr)
        sys.stderr.flush()

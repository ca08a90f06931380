"""The job's refusals, as typed values: each is computed once, here, and the
front ends only render it (the CLI prints its message, the TUI shows it).

A :class:`Refusal` is one reason a step may not run: its :class:`RefusalKind`
and one line naming the file where there is one. A :class:`Readiness` is the
list of refusals for a step (a request, or a request and then a write); it is
ready when the list is empty. ``CompactionJob.readiness`` builds it from the
functions below; nothing else words these refusals.

The refusals made before any request:

- ``NOTHING_TO_COMPACT``: the plan is a no-op;
- ``DISABLED``: the config does not enable compaction;
- ``EMPTY_PROMPT``: the compaction prompt is empty (an empty ``--prompt-file``
  or ``compaction.prompt_file``, or a prompt edited to nothing);
- ``NO_MODEL`` / ``NO_KEY``: a remote provider with no model, or without the
  key it needs (``provider`` checks, :func:`require_model` and :func:`require_key`);
- ``REVISION_RANGE``: a revision asked for a summary made on another range (the
  boundary moved) or on another version of the session (it changed on disk);
- ``TOO_LARGE``: the request and the room kept for the summary do not fit
  the model's known context window (:mod:`kimi_compact_tui.job.window`),
  naming both figures and the ``--up-to`` that would fit;

and, for a request whose summary is to be written over the session:

- ``FORMAT``: the session's format cannot take a compaction now (e.g. the
  agent stopped mid-turn), or not with this boundary (``plan_refusal``: e.g.
  one inside a record of the agent's, naming the nearest one it can write);
- ``SAMPLE``: the file is (inside) a bundled sample, which is never written;
  a front end opens a copy (``samples.copy_sample``) instead;
- ``READ_ONLY``: the file, or the folder the format writes beside it, cannot
  be written (checked with the file system's own answer and the mode bits);
- ``NOT_LOADED_FOR_WRITE``: the job holds no fingerprint of the loaded bytes;
- ``SPLIT``: the boundary cuts a tool call off from its result (unless allowed);
- ``NOT_A_FILE``: the summary is to be written to a new file (``compact
  --output``) and the session is not a file of its own (rows in a database):
  a copy of some rows is no session an agent can open;
- ``CHANGED_ON_DISK``: the session changed since it was loaded
  (:meth:`CompactionJob.changed_on_disk`, for a front end that asks before it
  writes; the store's commit refuses it in its own words too).

For a summary given as it is (no model call: ``GIVEN_SUMMARY``) custom
instructions are refused, since nothing would read them.

For undo and restore (:mod:`kimi_compact_tui.job.offers`):
``NOTHING_TO_UNDO`` (no write of ours to undo, or its copy is gone) and
``CHANGED_SINCE_WRITE`` (the session changed since this tool wrote it:
refused unless forced), besides ``SAMPLE``.

And for a probe (:mod:`kimi_compact_tui.job.probing`): ``NO_SUMMARY`` (no
summary, or an empty one, to probe) and ``OFFLINE_PROBE`` (the offline
provider cannot answer questions), besides the request kinds above.
"""

from __future__ import annotations

import enum
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kimi_compact_tui import samples
from kimi_compact_tui.compaction.pairs import ToolSplit, nearest_safe_up_to
from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.errors import ApplyError, ConfigError, UserError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.wording import noop_line


class RefusalKind(enum.StrEnum):
    NOTHING_TO_COMPACT = "nothing_to_compact"
    DISABLED = "disabled"
    EMPTY_PROMPT = "empty_prompt"
    NO_MODEL = "no_model"
    NO_KEY = "no_key"
    FORMAT = "format"
    SAMPLE = "sample"
    READ_ONLY = "read_only"
    NOT_LOADED_FOR_WRITE = "not_loaded_for_write"
    SPLIT = "split"
    REVISION_RANGE = "revision_range"
    NOT_A_FILE = "not_a_file"
    CHANGED_ON_DISK = "changed_on_disk"
    GIVEN_SUMMARY = "given_summary"
    NO_SUMMARY = "no_summary"
    OFFLINE_PROBE = "offline_probe"
    NOTHING_TO_UNDO = "nothing_to_undo"
    CHANGED_SINCE_WRITE = "changed_since_write"
    TOO_LARGE = "too_large"


#: The kinds that stop a request whatever is done with its summary.
REQUEST_KINDS = frozenset(
    {
        RefusalKind.NOTHING_TO_COMPACT,
        RefusalKind.DISABLED,
        RefusalKind.EMPTY_PROMPT,
        RefusalKind.NO_MODEL,
        RefusalKind.NO_KEY,
        RefusalKind.REVISION_RANGE,
        RefusalKind.GIVEN_SUMMARY,
        RefusalKind.NO_SUMMARY,
        RefusalKind.OFFLINE_PROBE,
        RefusalKind.TOO_LARGE,
    }
)

_ERRORS: dict[RefusalKind, type[UserError]] = {
    RefusalKind.EMPTY_PROMPT: ConfigError,
    RefusalKind.NO_MODEL: ConfigError,
    RefusalKind.NO_KEY: ConfigError,
    RefusalKind.FORMAT: ApplyError,
    RefusalKind.SAMPLE: ApplyError,
    RefusalKind.READ_ONLY: ApplyError,
    RefusalKind.NOT_LOADED_FOR_WRITE: ApplyError,
    RefusalKind.NOT_A_FILE: ApplyError,
    RefusalKind.CHANGED_ON_DISK: ApplyError,
    RefusalKind.NOTHING_TO_UNDO: ApplyError,
    RefusalKind.CHANGED_SINCE_WRITE: ApplyError,
}


@dataclass(frozen=True)
class Refusal:
    """One reason a step may not run: what kind, and the one line that says so."""

    kind: RefusalKind
    message: str

    def __str__(self) -> str:
        return self.message

    @property
    def before_request(self) -> bool:
        """True when no request may be made at all (not only no write)."""
        return self.kind in REQUEST_KINDS

    @property
    def nothing_to_do(self) -> bool:
        """The step has nothing to do (a no-op plan, compaction not enabled):
        said calmly, as a state, not as an error."""
        return self.kind in (RefusalKind.NOTHING_TO_COMPACT, RefusalKind.DISABLED)

    @property
    def can_force(self) -> bool:
        """The user may choose to go ahead anyway (a front end offers its
        override: ``--allow-split`` / the split button for a split history,
        ``--force`` / the force key for an undo over later changes)."""
        return self.kind in (RefusalKind.SPLIT, RefusalKind.CHANGED_SINCE_WRITE)

    def error(self) -> UserError:
        """The exception a front end that raises gives for it (exit 2)."""
        return _ERRORS.get(self.kind, UserError)(self.message)


@dataclass(frozen=True)
class Readiness:
    """The refusals for a step; ready when there are none."""

    refusals: tuple[Refusal, ...] = ()

    @property
    def ready(self) -> bool:
        return not self.refusals

    def __bool__(self) -> bool:
        return self.ready

    @property
    def first(self) -> Refusal | None:
        return self.refusals[0] if self.refusals else None

    def kinds(self) -> list[RefusalKind]:
        return [r.kind for r in self.refusals]

    def of(self, *kinds: RefusalKind) -> Readiness:
        """Only the refusals of ``kinds``."""
        return Readiness(tuple(r for r in self.refusals if r.kind in kinds))

    def without(self, *kinds: RefusalKind) -> Readiness:
        """The refusals other than those of ``kinds``."""
        return Readiness(tuple(r for r in self.refusals if r.kind not in kinds))

    @property
    def forced(self) -> Readiness:
        """What is left once the user chose to go ahead (the refusals that
        cannot be forced)."""
        return Readiness(tuple(r for r in self.refusals if not r.can_force))

    def raise_first(self) -> None:
        """Raise the first refusal's error (nothing when ready)."""
        if self.refusals:
            raise self.refusals[0].error()


def readiness(refusals: Iterable[Refusal | None]) -> Readiness:
    return Readiness(tuple(r for r in refusals if r is not None))


# ----------------------------------------------------------------------------- the refusals


def nothing_to_compact(noop: str | None) -> Refusal:
    return Refusal(RefusalKind.NOTHING_TO_COMPACT, noop_line(noop or ""))


def disabled(reason: str | None) -> Refusal:
    return Refusal(RefusalKind.DISABLED, f"compaction is not enabled: {reason}")


def empty_prompt(prompt: PromptSource) -> Refusal | None:
    """An empty prompt is never sent: one line naming the file."""
    if not prompt.empty:
        return None
    where = f"{prompt.path}: " if prompt.path else ""
    what = "the prompt file is empty" if prompt.source == "file" else "the prompt is empty"
    return Refusal(
        RefusalKind.EMPTY_PROMPT,
        f"{where}{what}: a compaction request needs a prompt; nothing was sent",
    )


def format_refusal(session: Session) -> Refusal | None:
    """The session's format refuses a compaction now (its own words)."""
    why = session.format.write_refusal(session)
    if why is None:
        return None
    return Refusal(RefusalKind.FORMAT, f"{session.ref}: not written: {why}")


def plan_refusal(session: Session, plan: CompactionPlan) -> Refusal | None:
    """The session's format cannot write a compaction with this boundary (its
    own words, naming the nearest one it can write)."""
    if plan.noop:
        return None
    why = session.format.plan_refusal(session, plan)
    if why is None:
        return None
    return Refusal(RefusalKind.FORMAT, f"{session.ref}: not written: {why}")


def sample_refusal(path: str | Path | None) -> Refusal | None:
    """A bundled sample is never written (nor restored over): the one rule for
    every front end. The way to a copy is named."""
    if path is None or not samples.is_sample(path):
        return None
    return Refusal(
        RefusalKind.SAMPLE,
        f"{path}: not written: a bundled sample is never changed; work on a copy "
        f"(compact --in-place and the TUI make one under {samples.copies_dir()}, "
        "or use --output FILE)",
    )


def _mode_writable(st: os.stat_result) -> bool:
    """The mode bits let someone write: a file marked read-only (no ``w``
    anywhere) counts as read-only even for a user the kernel would let through
    (root)."""
    return bool(st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def unwritable(path: Path) -> str | None:
    """Why ``path`` (a file or a folder) cannot be written, or None. Asks the
    file system (``access``: a read-only mount, an immutable file, the
    permissions of this user) and the mode bits (a file marked read-only)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None  # the load says so in its own words
    except OSError as exc:
        return f"cannot check it ({exc.strerror or exc})"
    what = "folder" if stat.S_ISDIR(st.st_mode) else "file"
    if not _mode_writable(st):
        return f"the {what} is read-only (mode {stat.filemode(st.st_mode)})"
    if not os.access(path, os.W_OK, effective_ids=os.access in os.supports_effective_ids):
        return f"the {what} cannot be written (read-only, immutable or not yours)"
    return None


def write_places(session: Session) -> list[Path]:
    """The file and the folders a write of ``session`` changes: the file, the
    folder it is in (a rotation, a backup or the atomic replace's temporary
    file) and the format's restore folder (backups, the audit log)."""
    if session.path is None:
        return []
    path = Path(session.path)
    places = [path, path.parent]
    folder = session.format.restore_folder(path)
    if folder not in places:
        # A restore folder not made yet is made inside its nearest existing parent.
        while not folder.exists() and folder.parent != folder:
            folder = folder.parent
        if folder not in places:
            places.append(folder)
    return places


def read_only_refusal(session: Session) -> Refusal | None:
    """The session's file, or a folder its format writes in, is read-only:
    refused before any request, naming the place."""
    for place in write_places(session):
        why = unwritable(place)
        if why is not None:
            where = "" if place == session.path else f" (writing it needs {place})"
            return Refusal(
                RefusalKind.READ_ONLY,
                f"{session.ref}: not written: {why}{where}; nothing was sent",
            )
    return None


def not_loaded_for_write(path: object) -> Refusal:
    return Refusal(
        RefusalKind.NOT_LOADED_FOR_WRITE,
        f"{path}: not written: the loaded file has no fingerprint",
    )


def split_refusal(
    path: object, splits: Sequence[ToolSplit], session: Session, plan: CompactionPlan
) -> Refusal | None:
    """The one line refusing to write a history that splits a tool call from
    its result (every front end; the CLI adds its flag to allow it)."""
    if not splits:
        return None
    safe = nearest_safe_up_to(session.messages, plan.boundary, plan.leading)
    hint = (
        f"; the nearest boundary that keeps them together is --up-to {safe}"
        if safe
        else "; no boundary keeps every tool call with its results"
    )
    shown = "; ".join(s.describe() for s in splits[:3]) + (" ..." if len(splits) > 3 else "")
    return Refusal(
        RefusalKind.SPLIT,
        f"{path}: not written: the boundary splits a tool call from its result ({shown}), "
        f"and the agent could not continue such a history{hint}",
    )


def revision_range_refusal(
    path: object, then: tuple[int, int], now: tuple[int, int] | None
) -> Refusal:
    """A revision of a summary made on another range: ``then`` and ``now``
    are the compacted messages (1-based, first and last); ``now`` None: the
    session changed on disk since the summary was made."""
    if now is None:
        why = (
            "the session changed on disk since the summary was made; a revision is for the "
            "messages it summarized: reload and compact again"
        )
    else:
        why = (
            f"the boundary moved since the summary was made (it summarized messages "
            f"{then[0]}–{then[1]}, the range is now {now[0]}–{now[1]}); a revision is for "
            "the range it was made on: compact this range instead"
        )
    return Refusal(RefusalKind.REVISION_RANGE, f"{path}: not revised: {why}")


def not_a_file(session: Session) -> Refusal | None:
    """A summary to be written to a new file (``compact --output``) of a
    session that is not a file of its own (rows in a database): refused
    before any request."""
    if session.format.storage.byte_based:
        return None
    return Refusal(
        RefusalKind.NOT_A_FILE,
        f"{session.ref}: --output is refused: the session is not a file of its own but "
        f"rows of the {session.format.label}, and a copy of them is no session an agent "
        "can open; write it in place instead (--in-place); nothing was sent",
    )


def changed_on_disk(ref: object, loaded_size: int, now_size: int) -> Refusal:
    """The session changed since it was loaded: a write would be refused."""
    if now_size != loaded_size:
        why = f"its size went from {loaded_size:,} to {now_size:,} bytes"
    else:
        why = "another program wrote to it"
    return Refusal(
        RefusalKind.CHANGED_ON_DISK, f"{ref}: changed on disk since it was loaded ({why})"
    )


def given_with_instructions() -> Refusal:
    """A summary given as it is is written without a model call: custom
    instructions would be read by nothing."""
    return Refusal(
        RefusalKind.GIVEN_SUMMARY,
        "custom instructions need a model call; a summary given is written as it is",
    )


def no_summary(summary: str | None) -> Refusal | None:
    """Nothing to probe: no summary yet, or an empty one."""
    if summary is None:
        return Refusal(RefusalKind.NO_SUMMARY, "no summary to probe yet: compact first")
    if not summary.strip():
        return Refusal(RefusalKind.NO_SUMMARY, "the summary is empty: nothing to probe")
    return None


#: The offline provider's refusal of a probe (one line, for every front end).
OFFLINE_PROBE_LINE = (
    "the offline provider cannot answer questions: probing needs a model "
    "(--provider KIND with --model, or a provider block in the config)"
)


def offline_probe() -> Refusal:
    return Refusal(RefusalKind.OFFLINE_PROBE, OFFLINE_PROBE_LINE)


def too_large(
    ref: object, need: int, room: int, window: str, tokens: int, fits: int | None
) -> Refusal:
    """The request does not fit the model's context window: both figures,
    and the boundary that would (compacting in two steps)."""
    if fits is not None:
        how = (
            f"compact in two steps: --up-to {fits} fits (messages 1–{fits}), then compact "
            "the result again"
        )
    else:
        how = "no boundary fits: the first messages alone are larger than the window"
    return Refusal(
        RefusalKind.TOO_LARGE,
        f"{ref}: the request does not fit the model's context window: ~{need:,} tokens "
        f"and {room:,} kept for the summary, against {tokens:,} ({window}); {how}; "
        "nothing was sent",
    )

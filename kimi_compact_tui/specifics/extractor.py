"""The one extractor of a session's specifics: deterministic, offline, no model.

:func:`extract` walks the messages of a range once (:mod:`.walk`), tool calls
included, and each kind's collector (:mod:`.collect`) reads what it needs,
yielding typed :class:`Item` s, each with the 0-based indices of the messages it
comes from and a weight (what a summary must keep first):

- ``user_requests`` (10; a short acknowledgement 2): the person's own prompts,
  verbatim, in order; never a tool result, the agent's bookkeeping or an
  earlier summary; one the agent never sent to its model (declared
  :data:`~.declare.UNSENT`) has the status :data:`~.declare.UNSENT_STATUS`;
- ``instructions`` (9): ``system``/``developer`` messages in the range that are
  not bookkeeping, and the person's standing rules ("always …", "never …",
  "don't …");
- ``plan`` (open items 8, the others 4): the agent's *last* plan as its plan
  tool set it, each item with its status; ``open_tasks`` are its pending and
  in-progress items. A checklist in the agent's prose is a proposal, never read;
- ``edited_files`` (7): files a write, edit or patch tool changed;
- ``commands`` (6): commands a run tool ran, with the exit status the record
  shows (``status``);
- ``errors`` (open 6, resolved 3): error lines of tool results and of pastes,
  ``status`` ``open`` unless a later run of the same program succeeded (or a
  later test run passed with no failure);
- ``file_paths`` (3): paths the person or the agent named or touched (their
  messages and tool calls; not the lines of a tool's output);
- ``decisions`` (2), ``identifiers`` (2), ``numbers`` (1), ``urls`` (1).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from kimi_compact_tui.compaction.summary import COMPACTED_NOTICE, system
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.collect import (
    ANSWERED,
    NOT_ANSWERED,
    Carried,
    Commands,
    Decisions,
    Edits,
    Errors,
    Figures,
    Findings,
    Identifiers,
    Instructions,
    Paths,
    Plan,
    Requests,
    failed,
    succeeded,
)
from kimi_compact_tui.specifics.declare import PLAIN, Vocabulary
from kimi_compact_tui.specifics.items import OPEN, RESOLVED, Item, Specifics
from kimi_compact_tui.specifics.views import (
    arg_strings,
    call_args,
    message_haystack,
    parsed_calls,
    shown,
)
from kimi_compact_tui.specifics.walk import Collector, walk

__all__ = [
    "ANSWERED",
    "NOT_ANSWERED",
    "OPEN",
    "RESOLVED",
    "Item",
    "Specifics",
    "arg_strings",
    "call_args",
    "extract",
    "failed",
    "message_haystack",
    "parsed_calls",
    "shown",
    "succeeded",
]

SUMMARY_START = system(COMPACTED_NOTICE)


def is_earlier_summary(text: str) -> bool:
    """This tool's own summary message (what an earlier compaction wrote)."""
    return text.lstrip().startswith(SUMMARY_START)


def collectors(root: str | None) -> list[Collector]:
    """One collector per kind, in the order they finish (the paths last: they
    make the edited files relative too)."""
    return [
        Requests(),
        Instructions(),
        Commands(),  # before the errors: a result's status decides its errors
        Edits(),  # before the errors: a refused write is no edit that fixed one
        Errors(),
        Decisions(),
        Findings(),
        Plan(),
        Paths(root),
        Identifiers(),
        Figures(),
        Carried(),
    ]


def extract(
    messages: Sequence[Message],
    indices: Iterable[int],
    vocabulary: Vocabulary = PLAIN,
    root: str | None = None,
    *,
    reads: Collection[str] | None = None,
) -> Specifics:
    """The specifics of ``messages[i]`` for ``i`` in ``indices`` (ascending).
    ``vocabulary``: the format's tool roles and bookkeeping (the job passes the
    session format's); ``root``: the work folder absolute paths are made
    relative to (else the one the paths themselves point to). ``reads``: the
    kinds (and ``"findings"``) the caller reads, None: all; a collector that
    yields only what it does not read (:attr:`Collector.yields`: the
    decisions, the findings) is left out, the rest are the same."""
    chosen = [
        c for c in collectors(root) if reads is None or c.yields is None or c.yields & set(reads)
    ]
    with gc_paused():  # items, runs and lists by the thousand, and no cycles among them
        w = walk(messages, indices, vocabulary, chosen, is_earlier_summary)
    for bucket in w.out.items.values():
        for item in bucket.values():
            item.messages.sort()
    return Specifics(w.out.items, w.root, w.plan_message, w.causes, w.fixes, w.findings)

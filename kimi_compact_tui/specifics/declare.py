"""What a session format declares for the extractor: which of its agent's tools
write files, run commands and keep a plan, and which messages are its own
bookkeeping.

Plain data. A format plugin fills a :class:`ToolRoles` with its agent's real
tool names and argument names, and the compaction job hands the extractor a
:class:`Vocabulary` built from the plugin's hooks, so nothing here (nor in the
extractor) knows a format.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kimi_compact_tui.model import Message

#: The kinds of bookkeeping a format may name (any other string is allowed too).
REMINDER = "reminder"  # a reminder or note the agent injected
COMMAND = "command"  # a local command's echo, its output or its caveat
CONTEXT = "context"  # the agent's environment, permission or instruction context
CHECKPOINT = "checkpoint"  # a checkpoint marker
ATTACHMENT = "attachment"  # an attachment the agent added
SUMMARY = "summary"  # an earlier compaction's summary
INTERRUPT = "interrupt"  # the agent's note that the person stopped it mid-turn
#: Not bookkeeping: a request the person saw in the agent's UI that the agent never
#: sent to its model (the record holds it only as a UI event). Read as a request,
#: marked with :data:`UNSENT_STATUS`.
UNSENT = "unsent"
UNSENT_STATUS = "seen by the user, not sent to the model"

#: The plan statuses the extractor reports (each agent's own are mapped to these).
PENDING = "pending"
IN_PROGRESS = "in_progress"
COMPLETED = "completed"
CANCELLED = "cancelled"
OPEN_STATUSES = (PENDING, IN_PROGRESS)

STATUS_WORDS = {
    "pending": PENDING,
    "todo": PENDING,
    "not_started": PENDING,
    "in_progress": IN_PROGRESS,
    "in-progress": IN_PROGRESS,
    "active": IN_PROGRESS,
    "doing": IN_PROGRESS,
    "completed": COMPLETED,
    "complete": COMPLETED,
    "done": COMPLETED,
    "finished": COMPLETED,
    "cancelled": CANCELLED,
    "canceled": CANCELLED,
    "skipped": CANCELLED,
}


def plan_status(value: object) -> str:
    """An agent's plan status as one of :data:`PENDING` … :data:`CANCELLED`
    (an unknown or missing status is pending: never "completed" by guess)."""
    if not isinstance(value, str):
        return PENDING
    return STATUS_WORDS.get(value.strip().lower().replace(" ", "_"), PENDING)


@dataclass(frozen=True)
class PlanShape:
    """Where a plan tool's arguments hold the plan: the list under ``items``,
    each item's title under the first of ``title`` that is a string, its status
    under ``status``."""

    items: str = "todos"
    title: tuple[str, ...] = ("content", "title")
    status: str = "status"


@dataclass(frozen=True)
class ToolRoles:
    """An agent's tools by what they do (tool name → the argument names to read)."""

    #: Tools that write or edit a file: the arguments holding its path.
    writes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Tools whose input is a patch naming the files it changes (``*** Update
    #: File: path`` headers, or a unified diff's ``+++ b/path``).
    patches: tuple[str, ...] = ()
    #: Tools that run a command: the arguments holding it (a list is joined).
    runs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Tools that set the agent's whole plan or todo list, and where it is.
    plans: Mapping[str, PlanShape] = field(default_factory=dict)
    #: Tags whose blocks inside a prompt are the agent's, not the person's
    #: (``system-reminder``): dropped from the prompt's text.
    inline_tags: tuple[str, ...] = ()
    #: Text the agent puts in a tool result that succeeded (a closing note).
    success_marks: tuple[str, ...] = ()
    #: Text the agent puts at the start or the end of a result that failed or
    #: was refused (a write that was not made).
    failure_marks: tuple[str, ...] = ()
    #: The record marks every failed result (``tool_failed``), so a result it
    #: does not mark succeeded, with or without an exit code.
    marks_failures: bool = False
    #: Tools that read more of a command still running: the arguments naming it.
    polls: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: A result of a command still running: a pattern whose group 1 is the id
    #: a later poll names it by.
    running: str = ""
    #: The lines the agent's harness writes around a tool's output (a pattern
    #: matching each whole line): their figures (wall times) are not the session's.
    harness_lines: str = ""

    def merged(self, *others: ToolRoles) -> ToolRoles:
        """These roles and ``others``' together (a fallback format's; the marks
        of every one, but no format's promise that it marks every failure)."""
        writes = dict(self.writes)
        runs = dict(self.runs)
        plans = dict(self.plans)
        polls = dict(self.polls)
        patches = list(self.patches)
        tags = list(self.inline_tags)
        ok = list(self.success_marks)
        bad = list(self.failure_marks)
        running = [self.running] if self.running else []
        harness = [self.harness_lines] if self.harness_lines else []
        for o in others:
            writes.update(o.writes)
            runs.update(o.runs)
            plans.update(o.plans)
            polls.update(o.polls)
            patches += [p for p in o.patches if p not in patches]
            tags += [t for t in o.inline_tags if t not in tags]
            ok += [t for t in o.success_marks if t not in ok]
            bad += [t for t in o.failure_marks if t not in bad]
            running += [o.running] if o.running and o.running not in running else []
            harness += (
                [o.harness_lines] if o.harness_lines and o.harness_lines not in harness else []
            )
        return ToolRoles(
            writes,
            tuple(patches),
            runs,
            plans,
            tuple(tags),
            tuple(ok),
            tuple(bad),
            False,
            polls,
            "|".join(f"(?:{r})" for r in running) if len(running) > 1 else "".join(running),
            "|".join(f"(?:{h})" for h in harness),
        )


def _none(message: Message) -> str | None:
    return None


def _false(message: Message) -> bool:
    return False


@dataclass(frozen=True)
class Vocabulary:
    """Everything the extractor knows of the session's agent: its tool roles,
    ``bookkeeping(message)`` (the kind of the agent's own bookkeeping a message
    is, or None for the conversation's) and ``tool_failed(message)`` (a tool
    result the record marks as failed)."""

    tools: ToolRoles = field(default_factory=ToolRoles)
    bookkeeping: Callable[[Message], str | None] = _none
    tool_failed: Callable[[Message], bool] = _false


PLAIN = Vocabulary()

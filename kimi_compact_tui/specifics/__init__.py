"""The specifics of a session: one extractor for the offline summary, retention
and the probes (what the summary must keep, typed and weighed).

Plain data, no formats: a format declares its tools and its bookkeeping
(:mod:`.declare`), and the compaction job passes them in as a
:class:`~.declare.Vocabulary`.
"""

from __future__ import annotations

from kimi_compact_tui.specifics.declare import (
    ATTACHMENT,
    CANCELLED,
    CHECKPOINT,
    COMMAND,
    COMPLETED,
    CONTEXT,
    IN_PROGRESS,
    INTERRUPT,
    OPEN_STATUSES,
    PENDING,
    PLAIN,
    REMINDER,
    SUMMARY,
    UNSENT,
    UNSENT_STATUS,
    PlanShape,
    ToolRoles,
    Vocabulary,
    plan_status,
)
from kimi_compact_tui.specifics.extract import (
    OPEN,
    RESOLVED,
    Item,
    Specifics,
    extract,
    message_haystack,
)
from kimi_compact_tui.specifics.kinds import (
    COMMANDS,
    DECISIONS,
    EDITED_FILES,
    ERRORS,
    FILE_PATHS,
    IDENTIFIERS,
    INSTRUCTIONS,
    KINDS,
    NUMBERS,
    OPEN_TASKS,
    PLAN,
    URLS,
    USER_REQUESTS,
    WEIGHTS,
)

__all__ = [
    "ATTACHMENT",
    "CANCELLED",
    "CHECKPOINT",
    "COMMAND",
    "COMMANDS",
    "COMPLETED",
    "CONTEXT",
    "DECISIONS",
    "EDITED_FILES",
    "ERRORS",
    "FILE_PATHS",
    "IDENTIFIERS",
    "INSTRUCTIONS",
    "IN_PROGRESS",
    "INTERRUPT",
    "KINDS",
    "NUMBERS",
    "OPEN",
    "OPEN_STATUSES",
    "OPEN_TASKS",
    "PENDING",
    "PLAIN",
    "PLAN",
    "REMINDER",
    "RESOLVED",
    "SUMMARY",
    "UNSENT",
    "UNSENT_STATUS",
    "URLS",
    "USER_REQUESTS",
    "WEIGHTS",
    "Item",
    "PlanShape",
    "Specifics",
    "ToolRoles",
    "Vocabulary",
    "extract",
    "message_haystack",
    "plan_status",
]

"""The specifics of a session: one extractor for the offline summary, retention
and the probes (what the summary must keep, typed and weighed).

Plain data, no formats: a format declares its tools and its bookkeeping
(:mod:`.declare`), and the compaction job passes them in as a
:class:`~.declare.Vocabulary`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from kimi_compact_tui.specifics.extractor import (
        OPEN,
        RESOLVED,
        Item,
        Specifics,
        extract,
        message_haystack,
    )

#: The extractor's names load with it, when first asked for: a format or a
#: command that needs only the declarations (a tool's role, ``UNSENT``) does
#: not pay for the extractor and its patterns.
_EXTRACTOR = ("OPEN", "RESOLVED", "Item", "Specifics", "extract", "message_haystack")


def __getattr__(name: str) -> Any:
    if name in _EXTRACTOR:
        value = getattr(importlib.import_module(f"{__name__}.extractor"), name)
        globals()[name] = value  # asked once: later lookups are plain attributes
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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

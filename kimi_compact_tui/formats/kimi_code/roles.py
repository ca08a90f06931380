"""What Kimi Code's tools do, and which of its messages are its bookkeeping.

Tools (Kimi Code 2.1): ``Write`` and ``Edit`` (``path``) write files, ``Bash``
(``command``) runs commands, ``TodoList`` sets the todo list (``todos``:
``title``, ``status`` pending / in_progress / done; kimi-cli's ``SetTodoList``
has the same shape). Bookkeeping: the reminders it injects (origin
``injection``).
"""

from __future__ import annotations

from kimi_compact_tui.formats.kimi_code.convert import origin_kind
from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import REMINDER, PlanShape, ToolRoles, Vocabulary

TOOLS = ToolRoles(
    writes={"Write": ("path",), "Edit": ("path",)},
    runs={"Bash": ("command",)},
    plans={
        "TodoList": PlanShape("todos", ("title",), "status"),
        "SetTodoList": PlanShape("todos", ("title",), "status"),
    },
)


def bookkeeping(message: Message) -> str | None:
    return REMINDER if message.role == "user" and origin_kind(message) == "injection" else None


ROLES = Vocabulary(TOOLS, bookkeeping)

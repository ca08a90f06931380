"""What Gemini CLI's tools do, and which of its messages are its bookkeeping.

Tools (Gemini CLI 0.61): ``write_file`` and ``replace`` (``file_path``) write
files, ``run_shell_command`` (``command``) runs commands, ``write_todos`` sets
the todo list (``todos``: ``description``, ``status`` pending / in_progress /
completed / cancelled). Bookkeeping: its ``<session_context>`` and
``<hook_context>`` turns.
"""

from __future__ import annotations

from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import CONTEXT, PlanShape, ToolRoles, Vocabulary

TOOLS = ToolRoles(
    writes={"write_file": ("file_path",), "replace": ("file_path",)},
    runs={"run_shell_command": ("command",)},
    plans={"write_todos": PlanShape("todos", ("description",), "status")},
)
CONTEXT_PREFIXES = ("<session_context>", "<hook_context>")


def bookkeeping(message: Message) -> str | None:
    if message.role == "user" and message.text().lstrip().startswith(CONTEXT_PREFIXES):
        return CONTEXT
    return None


ROLES = Vocabulary(TOOLS, bookkeeping)

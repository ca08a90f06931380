"""What Codex's tools do, and which of its messages are its bookkeeping.

Tools (Codex CLI 0.171): ``shell`` (``command``, a list of words),
``exec_command`` (``cmd``) and ``local_shell`` run commands, ``apply_patch``
(a custom tool whose input is the patch, ``*** Update File: path`` headers)
writes files, ``update_plan`` sets the plan (``plan``: ``step``, ``status``
pending / in_progress / completed). A command still running when
``exec_command`` returns says ``Process running with session ID N``; later
``write_stdin`` calls (``session_id`` N) read more of it, and the one whose
output says ``Process exited with code N`` carries its exit. The lines
``Chunk ID:``, ``Wall time:`` and ``Original token count:`` are Codex's own,
around the command's output.

Bookkeeping: the context messages Codex writes itself (developer instructions,
environment, permissions, AGENTS.md: ``system`` messages marked ``codex.role``)
and the summary of its own compaction. A prompt only Codex's UI showed (never
sent: ``codex.unsent``) is declared :data:`UNSENT`: a request, so marked.
"""

from __future__ import annotations

from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import (
    CONTEXT,
    SUMMARY,
    UNSENT,
    PlanShape,
    ToolRoles,
    Vocabulary,
)

TOOLS = ToolRoles(
    writes={},
    patches=("apply_patch",),
    runs={
        "shell": ("command", "cmd"),
        "exec_command": ("cmd", "command"),
        "local_shell": ("command",),
        "shell_command": ("command",),
    },
    plans={"update_plan": PlanShape("plan", ("step",), "status")},
    polls={"write_stdin": ("session_id",)},
    running=r"Process running with session ID (\d+)",
    harness_lines=r"^(?:Chunk ID|Wall time|Original token count): .*$",
)


def bookkeeping(message: Message) -> str | None:
    meta = message.data.get("codex")
    if not isinstance(meta, dict):
        return None
    if meta.get("summary") is True:
        return SUMMARY
    if meta.get("unsent") is True:
        return UNSENT
    if message.role == "system" and meta.get("role") is not None:
        return CONTEXT
    return None


ROLES = Vocabulary(TOOLS, bookkeeping)

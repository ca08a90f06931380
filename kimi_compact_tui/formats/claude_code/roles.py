"""What Claude Code's tools do, and which of its messages are its bookkeeping.

Tools (``sdk-tools.d.ts`` of Claude Code 2.1): ``Write``/``Edit``/``MultiEdit``
(``file_path``) and ``NotebookEdit`` (``notebook_path``) write files, ``Bash``
(``command``) runs commands, ``TodoWrite`` sets the whole todo list
(``todos``: ``content``, ``status`` pending / in_progress / completed).

Bookkeeping: the local-command caveat and the other ``isMeta`` user records,
a command's echoes (``<command-name>``, ``<command-message>``, ``<command-args>``,
``<local-command-stdout>``/``stderr``/``caveat``, and ``local_command`` system
records), a user message that is only ``<system-reminder>`` blocks, the
compaction summary (``isCompactSummary``), attachments, and its note that the
person stopped it (``[Request interrupted by user…]``).

Results: a ``tool_result`` block is marked ``is_error: true`` when the tool
failed or the person rejected it (a rejected write says the change "was NOT
written"); one not marked succeeded, with no exit code to show.
"""

from __future__ import annotations

import re

from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import (
    ATTACHMENT,
    COMMAND,
    INTERRUPT,
    REMINDER,
    SUMMARY,
    PlanShape,
    ToolRoles,
    Vocabulary,
)

TOOLS = ToolRoles(
    writes={
        "Write": ("file_path",),
        "Edit": ("file_path",),
        "MultiEdit": ("file_path",),
        "NotebookEdit": ("notebook_path",),
    },
    runs={"Bash": ("command",)},
    plans={"TodoWrite": PlanShape("todos", ("content",), "status")},
    inline_tags=("system-reminder",),
    failure_marks=("was NOT written", "<tool_use_error>"),
    marks_failures=True,
)
INTERRUPTED = ("[Request interrupted by user for tool use]", "[Request interrupted by user]")

COMMAND_ECHO_RE = re.compile(
    r"\A\s*<(?:command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|local-command-caveat)>"
)
ONLY_REMINDERS_RE = re.compile(
    r"\A(?:\s*<system-reminder>.*?(?:</system-reminder>|\Z))+\s*\Z", re.S
)


def _meta(message: Message) -> dict[str, object]:
    meta = message.data.get("claude")
    return meta if isinstance(meta, dict) else {}


def bookkeeping(message: Message) -> str | None:
    meta = _meta(message)
    if message.role == "system":
        return ATTACHMENT if meta.get("attachment") is not None else None
    if message.role != "user":
        return None
    if meta.get("compact_summary"):
        return SUMMARY
    if meta.get("local_command"):
        return COMMAND
    text = message.text()
    if text.strip() in INTERRUPTED:
        return INTERRUPT
    if COMMAND_ECHO_RE.match(text):
        return COMMAND
    if meta.get("meta"):
        return COMMAND if "local-command-caveat" in text or "<command-" in text else REMINDER
    if text and ONLY_REMINDERS_RE.match(text):
        return REMINDER
    return None


def tool_failed(message: Message) -> bool:
    return message.role == "tool" and _meta(message).get("is_error") is True


ROLES = Vocabulary(TOOLS, bookkeeping, tool_failed)

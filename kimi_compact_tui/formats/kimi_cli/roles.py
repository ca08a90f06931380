"""What kimi-cli's tools do, and which of its messages are its bookkeeping.

Tools (kimi-cli 1.51): ``WriteFile`` and ``StrReplaceFile`` (``path``) write
files, ``Shell`` (``command``) runs commands, ``SetTodoList`` sets the todo list
(``todos``: ``title``, ``status`` pending / in_progress / done). A failed tool's
output starts with ``<system>ERROR``; a command that succeeded says
``<system>Command executed successfully.</system>``.

Bookkeeping: the ``<system>CHECKPOINT N</system>`` messages of its D-Mail tool
and user messages that are only ``<system>`` notes. kimi-cli's own tail scan
counts them, so the preserved tail does too (parity).
"""

from __future__ import annotations

import re

from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import (
    CHECKPOINT,
    REMINDER,
    PlanShape,
    ToolRoles,
    Vocabulary,
)

TOOLS = ToolRoles(
    writes={"WriteFile": ("path",), "StrReplaceFile": ("path",)},
    runs={"Shell": ("command",)},
    plans={"SetTodoList": PlanShape("todos", ("title",), "status")},
    success_marks=("<system>Command executed successfully.</system>",),
    failure_marks=("<system>ERROR",),
)
CHECKPOINT_RE = re.compile(r"\A<system>CHECKPOINT \d+</system>\Z")
ONLY_NOTES_RE = re.compile(r"\A(?:\s*<system>.*?</system>)+\s*\Z", re.S)


def bookkeeping(message: Message) -> str | None:
    if message.role != "user":
        return None
    text = message.text()
    if CHECKPOINT_RE.match(text.strip()):
        return CHECKPOINT
    if text and ONLY_NOTES_RE.match(text):
        return REMINDER
    return None


def tool_failed(message: Message) -> bool:
    return message.role == "tool" and message.text().lstrip().startswith("<system>ERROR")


ROLES = Vocabulary(TOOLS, bookkeeping, tool_failed)

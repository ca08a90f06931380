"""What Gemini CLI's tools do, and which of its messages are its bookkeeping.

Tools (Gemini CLI 0.61): ``write_file`` and ``replace`` (``file_path``) write
files, ``run_shell_command`` (``command``) runs commands, ``write_todos`` sets
the todo list (``todos``: ``description``, ``status`` pending / in_progress /
completed / cancelled). Bookkeeping: its ``<session_context>`` and
``<hook_context>`` turns, and the summary of its own compression (an earlier
summary): a compression replaces the history with the summary as a user
message, then the model's acknowledgement (:data:`COMPRESSION_ACK`), then the
turns it kept. The loader marks that user message (:func:`compression_summaries`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import (
    CONTEXT,
    SUMMARY,
    PlanShape,
    ToolRoles,
    Vocabulary,
)

TOOLS = ToolRoles(
    writes={"write_file": ("file_path",), "replace": ("file_path",)},
    runs={"run_shell_command": ("command",)},
    plans={"write_todos": PlanShape("todos", ("description",), "status")},
)
CONTEXT_PREFIXES = ("<session_context>", "<hook_context>")
#: The model turn Gemini CLI writes right after its compression's summary.
COMPRESSION_ACK = "Got it. Thanks for the additional context!"
#: The loader marks a message that is that summary: ``data[SUMMARY_KEY] = {"summary": True}``.
SUMMARY_KEY = "gemini"


def _record_text(record: dict[str, Any]) -> str:
    content = record.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") if isinstance(p, dict) else str(p) for p in content)
    return ""


def compression_summaries(records: Sequence[dict[str, Any]]) -> frozenset[int]:
    """The indices of the user records that are a compression's summary: each
    right before a model record that is only :data:`COMPRESSION_ACK`."""
    return frozenset(
        n
        for n, (record, after) in enumerate(pairwise(records))
        if record.get("type") == "user"
        and after.get("type") == "gemini"
        and _record_text(after).strip() == COMPRESSION_ACK
    )


def bookkeeping(message: Message) -> str | None:
    if message.role != "user":
        return None
    mark = message.data.get(SUMMARY_KEY)
    if isinstance(mark, dict) and mark.get("summary") is True:
        return SUMMARY
    if message.text().lstrip().startswith(CONTEXT_PREFIXES):
        return CONTEXT
    return None


ROLES = Vocabulary(TOOLS, bookkeeping)

"""What opencode's tools do, and which of its messages are its bookkeeping.

Tools (opencode 1.18): ``bash`` runs a command (``command``); ``write``
(``filePath``, ``content``), ``edit`` (``filePath``, ``oldString``,
``newString``) and ``multiedit`` (``filePath``) change a file; ``patch`` and
``apply_patch`` take a patch (``patchText``); ``todowrite`` sets the whole todo
list (``todos``: ``content``, ``status`` pending / in_progress / completed /
cancelled).

Results: a tool part that ended in ``error`` (a failure, or a permission the
person refused) and a ``bash`` whose metadata holds a non-zero ``exit`` failed
(:mod:`.history` marks the tool message ``"opencode": {"error": true}`` or
``{"exit": N}``); any other completed part succeeded.

Bookkeeping: the framing question opencode sends before a summary (a marked
user message with no text: injected, so the preserved-tail scan does not count
it) and the summary row of its own compaction (or of ours): an earlier summary.
Neither is ever a request.
"""

from __future__ import annotations

from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import REMINDER, SUMMARY, PlanShape, ToolRoles, Vocabulary

TOOLS = ToolRoles(
    writes={"write": ("filePath",), "edit": ("filePath",), "multiedit": ("filePath",)},
    patches=("patch", "apply_patch"),
    runs={"bash": ("command",)},
    plans={"todowrite": PlanShape("todos", ("content",), "status")},
    marks_failures=True,
)


def bookkeeping(message: Message) -> str | None:
    marks = message.data.get("opencode")
    if not isinstance(marks, dict):
        return None
    if marks.get("framing") is True:  # injected before the summary: not a turn of its own
        return REMINDER
    if marks.get("summary") is True:
        return SUMMARY
    return None


def tool_failed(message: Message) -> bool:
    marks = message.data.get("opencode") if message.role == "tool" else None
    if not isinstance(marks, dict):
        return False
    code = marks.get("exit")
    return marks.get("error") is True or (isinstance(code, int) and code != 0)


ROLES = Vocabulary(TOOLS, bookkeeping, tool_failed)

"""kimi-cli's checkpoint messages (sessions whose agent has the D-Mail tool).

When kimi-cli's agent has the D-Mail tool (``SendDMail``, e.g. its built-in
``--agent okabe``), ``Context.checkpoint(add_user_message=True)`` follows every
``{"role": "_checkpoint", "id": N}`` record with a user message whose one text
is ``<system>CHECKPOINT N</system>``. kimi-cli sends these messages to the
model (so that it can name a checkpoint in a D-Mail) and counts them as user
messages when it compacts: they are history, and the plan counts them as
kimi-cli does. After its own ``/compact`` the new file has ``_checkpoint`` 0
followed by its message, then the summary; our write does the same for such a
session.

A session is recognised from the file alone: it has checkpoint records and
each one is followed, on the next non-blank line, by its message (a record at
the very end of the file, with nothing after it yet, does not count against).
"""

from __future__ import annotations

from typing import Any

from kimi_compact_tui.compaction.summary import system
from kimi_compact_tui.model import Message


def checkpoint_text(checkpoint_id: int) -> str:
    return system(f"CHECKPOINT {checkpoint_id}")


def checkpoint_message(checkpoint_id: int) -> Message:
    """The message kimi-cli writes after ``_checkpoint`` N (one text part, which
    kimi-cli writes as a plain string)."""
    return Message.make("user", checkpoint_text(checkpoint_id))


def is_checkpoint_message(data: dict[str, Any], checkpoint_id: int) -> bool:
    if data.get("role") != "user":
        return False
    content = data.get("content")
    if type(content) is list and len(content) == 1 and type(content[0]) is dict:
        part = content[0]
        content = part.get("text") if part.get("type") == "text" else None
    return content == checkpoint_text(checkpoint_id)


class CheckpointPairs:
    """Fed the file's records in order: does every ``_checkpoint`` record have
    its checkpoint message right after it? Call :meth:`checkpoint` for a
    checkpoint record and, while :attr:`pending` is set, :meth:`next_record`
    for the next non-blank line (None for a line kimi-cli skips)."""

    __slots__ = ("broken", "pairs", "pending")

    def __init__(self) -> None:
        self.pending: int | None = None
        self.pairs = 0
        self.broken = False

    def checkpoint(self, checkpoint_id: int) -> None:
        if self.pending is not None:
            self.broken = True  # two checkpoints in a row: no message after the first
        self.pending = checkpoint_id

    def next_record(self, data: dict[str, Any] | None) -> None:
        if self.pending is None:
            return
        if data is not None and is_checkpoint_message(data, self.pending):
            self.pairs += 1
        else:
            self.broken = True
        self.pending = None

    @property
    def found(self) -> bool:
        """True when the file has checkpoint messages (see the module docstring)."""
        return self.pairs > 0 and not self.broken

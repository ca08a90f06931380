"""The summary message's text.

The summary user message is ``<system>Previous context has been compacted.
Here is the compaction output:</system>\\n<summary body>`` (no assistant
acknowledgment). Its shape in the file is the session format's
(``SessionFormat.summary_message``): kimi-cli sessions get kimi-cli's own two
text parts, so kimi-cli resumes the file as its own; most formats write
:func:`plain_summary_message`.
"""

from __future__ import annotations

from kimi_compact_tui.model import Message

COMPACTED_NOTICE = "Previous context has been compacted. Here is the compaction output:"


def system(message: str) -> str:
    """kimi-cli's ``system()`` wrapper."""
    return f"<system>{message}</system>"


def build_compact_summary_text(summary: str) -> str:
    return f"{system(COMPACTED_NOTICE)}\n{summary}"


def plain_summary_message(summary: str) -> Message:
    """The summary message as one text: the shape most formats write."""
    return Message.make("user", build_compact_summary_text(summary))


def is_summary_message(message: Message) -> bool:
    return message.role == "user" and message.text().startswith(system(COMPACTED_NOTICE))

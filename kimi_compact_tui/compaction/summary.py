"""Summary injection and the compacted session.

The summary user message is ``<system>Previous context has been compacted.
Here is the compaction output:</system>\\n<summary body>`` (no assistant
acknowledgment). Its shape in the file is the session format's: kimi-cli
sessions get kimi-cli's own two text parts, so kimi-cli resumes the file as
its own. The one place that builds a compacted session is
:func:`build_compacted_session`; the format adds its usage record.
"""

from __future__ import annotations

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.model import Message, Session

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


def splice(session: Session, plan: CompactionPlan, summary_message: Message) -> Session:
    """Leading system message(s) + the summary message + the kept messages."""
    if plan.noop:
        raise ValueError(f"cannot compact: {plan.noop}")
    messages = session.messages
    kept = [messages[i] for i in plan.preserved_indices]
    leading = [messages[i] for i in plan.leading_system_indices]
    return session.with_messages(leading + [summary_message] + kept)


def build_compacted_session(
    session: Session,
    plan: CompactionPlan,
    summary: str,
    *,
    output_tokens: int | None = None,
) -> Session:
    """The session after the compaction, in ``session``'s format (its summary
    message shape and usage record; see the format's ``compacted_session``)."""
    from kimi_compact_tui.formats.registry import format_of

    return format_of(session).compacted_session(session, plan, summary, output_tokens)

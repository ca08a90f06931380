"""Summary injection and the compacted session.

The summary user message is ``<system>Previous context has been compacted.
Here is the compaction output:</system>\\n<summary body>`` (no assistant
acknowledgment). For kimi-cli sessions it takes kimi-cli's own shape: two text
parts, the ``<system>`` line and the summary, so kimi-cli resumes the file as
its own.
"""

from __future__ import annotations

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.tokens import kimi_estimate
from kimi_compact_tui.model import Message, Session

COMPACTED_NOTICE = "Previous context has been compacted. Here is the compaction output:"


def system(message: str) -> str:
    """kimi-cli's ``system()`` wrapper."""
    return f"<system>{message}</system>"


def build_compact_summary_text(summary: str) -> str:
    return f"{system(COMPACTED_NOTICE)}\n{summary}"


def build_summary_message(summary: str, fmt: str = "openai-json") -> Message:
    if fmt == "kimi":
        return Message.make(
            "user",
            [
                {"type": "text", "text": system(COMPACTED_NOTICE)},
                {"type": "text", "text": summary},
            ],
        )
    return Message.make("user", build_compact_summary_text(summary))


def is_summary_message(message: Message) -> bool:
    return message.role == "user" and message.text().startswith(system(COMPACTED_NOTICE))


def build_compacted_session(
    session: Session,
    plan: CompactionPlan,
    summary: str,
    *,
    output_tokens: int | None = None,
) -> Session:
    """Leading system message(s) + summary user message + kept messages.

    For kimi-cli sessions the recorded token count is kimi-cli's estimate: the
    summary's output tokens when the provider reported them (else the summary
    message's text characters // 4) plus the kept messages' characters // 4."""
    if plan.noop:
        raise ValueError(f"cannot compact: {plan.noop}")
    messages = session.messages
    summary_message = build_summary_message(summary, session.format)
    kept = [messages[i] for i in plan.preserved_indices]
    new_messages = [messages[i] for i in plan.leading_system_indices] + [summary_message] + kept
    result = session.with_messages(new_messages)
    if session.format == "kimi":
        if output_tokens is not None:
            result.recorded_tokens = output_tokens + kimi_estimate(new_messages[plan.leading + 1 :])
        else:
            result.recorded_tokens = kimi_estimate(new_messages[plan.leading :])
    return result

"""Probe what the agent will still know after a compaction (issue 26, part 2).

Questions come from the specifics of the compacted range (:mod:`.questions`);
each is sent alone, with what the agent would have after the compaction: the
leading system messages, the summary message as the session's format writes
it, and the kept tail; never the compacted messages. Secret-looking strings
are masked in all of it (``secrets.mask_secrets``). The answers are graded
without a model judge (:mod:`.grade`).

Plain data in and out: :func:`plan_probe` (a session, a plan, a summary →
the questions and the request bodies, with their estimated size, before
anything is sent), :func:`ask` (the bodies → a :class:`ProbeReport`). A front
end does not call these directly: it goes through the job,
:mod:`kimi_compact_tui.job.probing` (the refusals, then these).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.request import build_http_body, merged_request_config
from kimi_compact_tui.compaction.tokens import estimate_tokens
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.job.probe.grade import CORRECT, ERROR, PARTIAL, Grade, grade
from kimi_compact_tui.job.probe.questions import (
    CATEGORIES,
    DEFAULT_QUESTIONS,
    MAX_QUESTIONS,
    Question,
    make_questions,
)
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers import ProviderConfig, StreamResult, stream_summary
from kimi_compact_tui.secrets import mask_secrets
from kimi_compact_tui.specifics import Specifics, message_haystack
from kimi_compact_tui.specifics.extractor import parsed_calls

__all__ = [
    "CATEGORIES",
    "DEFAULT_QUESTIONS",
    "MAX_QUESTIONS",
    "PROBE_PROMPT",
    "ProbeAnswer",
    "ProbePlan",
    "ProbeReport",
    "Question",
    "ask",
    "agent_context",
    "mask_secrets",
    "plan_probe",
]

#: Put before each question, in the one user message that asks it.
PROBE_PROMPT = (
    "Answer from what you know of this conversation so far, in one or two short lines: "
    "give the exact names, paths and commands. If you do not know, say you do not know."
)
ROLES = {"system": "system", "developer": "system", "assistant": "assistant", "user": "user"}

#: A provider call: ``(provider, body) -> StreamResult`` (tests give their own).
AskFunction = Callable[[ProviderConfig, dict[str, Any]], Awaitable[StreamResult]]


def as_request_message(message: Message) -> dict[str, Any]:
    """A message as the probe sends it: its text (tool calls written out, a
    tool result as the user's turn), secrets masked; no tool message, so the
    request needs no tools."""
    role = ROLES.get(message.role, "user")
    text = message.text()
    calls = parsed_calls(message)
    if calls:
        lines = [text] if text else []
        for name, args, _ in calls:
            shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            lines.append(f"[tool call] {name} {shown}")
        text = "\n".join(lines)
    if message.is_tool_result():
        text = f"[tool result]\n{text}"
    return {"role": role, "content": mask_secrets(text)}


def agent_context(session: Session, plan: CompactionPlan, summary: str) -> list[dict[str, Any]]:
    """What the agent has after the compaction: the leading system messages,
    the summary message as the format writes it, the kept tail (masked)."""
    messages = session.messages
    out = [as_request_message(messages[i]) for i in plan.leading_system_indices]
    out.append(as_request_message(session.format.summary_message(summary)))
    out.extend(as_request_message(messages[i]) for i in plan.preserved_indices)
    return out


def kept_texts(session: Session, plan: CompactionPlan) -> list[str]:
    """The texts the probe sends besides the summary, exactly as sent (tool
    calls and their arguments written out), each followed by the same message
    as a terminal shows it (arguments decoded): no question about what they
    hold, it would not measure the summary."""
    indices = [*plan.leading_system_indices, *plan.preserved_indices]
    out = []
    for i in indices:
        message = session.messages[i]
        out.append(str(as_request_message(message)["content"]))
        out.append(message_haystack(message))
    return out


@dataclass
class ProbePlan:
    """The questions, and one request body per question, before any is sent."""

    questions: list[Question]
    bodies: list[dict[str, Any]]

    @property
    def estimated_tokens(self) -> int:
        """The requests' estimated input tokens, all together."""
        return sum(estimate_tokens(str(m["content"])) for b in self.bodies for m in b["messages"])

    def describe(self) -> str:
        n = len(self.bodies)
        return (
            f"{n} request{'' if n == 1 else 's'} (one per question), "
            f"~{self.estimated_tokens:,} input tokens in all"
        )


def plan_probe(
    session: Session,
    plan: CompactionPlan,
    summary: str,
    specifics: Specifics,
    compaction_cfg: dict[str, Any],
    *,
    model: str | None = None,
    base_model: str | None = None,
    limit: int = DEFAULT_QUESTIONS,
) -> ProbePlan:
    """The questions about ``specifics`` (of ``plan``'s compacted range) and
    their request bodies: the context, then the question; toolless, with the
    compaction's request settings (``compaction_cfg``)."""
    questions = make_questions(specifics, kept_texts(session, plan), limit)
    context = agent_context(session, plan, summary)
    config = merged_request_config(compaction_cfg, model, base_model)
    bodies = []
    for q in questions:
        ask_it = {"role": "user", "content": mask_secrets(f"{PROBE_PROMPT}\n\n{q.text}")}
        bodies.append(build_http_body([*context, ask_it], config))
    return ProbePlan(questions, bodies)


@dataclass
class ProbeAnswer:
    question: Question
    answer: str | None
    grade: Grade
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        q = self.question
        return {
            "number": q.number,
            "category": q.category,
            "question": q.text,
            "expected": list(q.expected),
            "answer": self.answer,
            "verdict": self.grade.verdict,
            "messages": [i + 1 for i in q.messages],
            "error": self.error,
        }


def _score(answers: list[ProbeAnswer]) -> dict[str, Any]:
    correct = sum(1 for a in answers if a.grade.verdict == CORRECT)
    total = len(answers)
    return {
        "correct": correct,
        "partial": sum(1 for a in answers if a.grade.verdict == PARTIAL),
        "total": total,
        "percent": round(100.0 * correct / total, 1) if total else None,
    }


@dataclass
class ProbeReport:
    answers: list[ProbeAnswer]

    @property
    def failed(self) -> list[ProbeAnswer]:
        return [a for a in self.answers if a.grade.verdict == ERROR]

    def score(self) -> dict[str, Any]:
        return _score(self.answers)

    def categories(self) -> dict[str, dict[str, Any]]:
        out = {}
        for category in CATEGORIES:
            mine = [a for a in self.answers if a.question.category == category]
            if mine:
                out[category] = _score(mine)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "questions": [a.to_json() for a in self.answers],
            "categories": self.categories(),
            "score": self.score(),
        }

    def to_text(self) -> str:
        lines = []
        for a in self.answers:
            q = a.question
            where = ", ".join(str(i + 1) for i in q.messages[:6])
            lines.append(f"Q{q.number} [{q.category}] {q.text}")
            lines.append(f"   expected: {q.expected_text}   (message {where})")
            answer = a.answer if a.answer is not None else f"(no answer: {a.error})"
            lines.append(f"   answer:   {' '.join(answer.split())}")
            lines.append(f"   verdict:  {a.grade.verdict}")
        lines.append("")
        for category, s in self.categories().items():
            lines.append(f"{category:<14} {s['correct']}/{s['total']}")
        s = self.score()
        pct = "-" if s["percent"] is None else f"{s['percent']:.0f}%"
        lines.append(
            f"score          {s['correct']}/{s['total']} correct ({pct}); "
            f"{s['partial']} partial"
        )
        return "\n".join(lines) + "\n"


async def _default_ask(provider: ProviderConfig, body: dict[str, Any]) -> StreamResult:
    return await stream_summary(provider, body)


async def ask(
    probe: ProbePlan, provider: ProviderConfig, send: AskFunction = _default_ask
) -> ProbeReport:
    """Send each question alone, in order, and grade its answer. A request
    that fails is an ``error`` verdict (its message kept), never raised."""
    answers = []
    for question, body in zip(probe.questions, probe.bodies, strict=True):
        result = await send(provider, body)
        if result.status == "complete" or (result.status == "truncated" and result.summary):
            text = result.summary.strip()
            answers.append(ProbeAnswer(question, text, grade(question, text)))
        else:
            why = result.error or result.status
            answers.append(ProbeAnswer(question, None, grade(question, None), why))
    return ProbeReport(answers)


def run(probe: ProbePlan, provider: ProviderConfig) -> ProbeReport:
    """:func:`ask`, from synchronous code."""
    return asyncio.run(ask(probe, provider))

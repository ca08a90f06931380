"""The probe's questions: made from the specifics of the compacted range.

Each question asks for **one** item the extractor found in the messages the
summary replaces (:mod:`kimi_compact_tui.specifics`), in six categories: the
user's requests, the plan's open tasks, the files edited, the commands run,
the errors met and the decisions taken. A file, a command, an error or a
decision is asked for by its place: the first one under the user's request it
came under, or the next one after the one before it. Only items absent from
exactly what is sent besides the summary (the leading system messages and the
kept tail, tool calls and their arguments included) are asked about: what the
agent still knows from those does not measure the summary. A request or an
open task is absent when no one message of those keeps it by the retention
rule (:mod:`kimi_compact_tui.retention.passage`). Requests in any script are
asked about: a request is worth a question when it has three words' worth of
content terms (a CJK character counts half a word), never by a whitespace word
count. A question gives its context (the user's request it was asked
under, at most :data:`CONTEXT_CHARS` characters) and never its own answer:
the answer is cut out of the context, and a question that would still quote
it is not asked.

Deterministic: the same session, range and limit give the same questions.
Categories take turns, in the order above, each giving its heaviest items
first (message order within a weight).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kimi_compact_tui.retention.matching import Haystack, find
from kimi_compact_tui.retention.passage import Request
from kimi_compact_tui.specifics import (
    COMMANDS,
    DECISIONS,
    EDITED_FILES,
    ERRORS,
    IN_PROGRESS,
    OPEN_TASKS,
    PLAN,
    USER_REQUESTS,
    Item,
    Specifics,
)
from kimi_compact_tui.specifics.patterns import collapse, command_key

#: The categories asked about, in the order they take turns.
CATEGORIES = (USER_REQUESTS, OPEN_TASKS, EDITED_FILES, COMMANDS, ERRORS, DECISIONS)
DEFAULT_QUESTIONS = 10
MAX_QUESTIONS = 100
CONTEXT_CHARS = 100
#: How an answer is graded (:mod:`.grade`): a path, a command, or free text.
PATH, COMMAND, TEXT = "path", "command", "text"
KIND_OF = {
    USER_REQUESTS: TEXT,
    OPEN_TASKS: TEXT,
    EDITED_FILES: PATH,
    COMMANDS: COMMAND,
    ERRORS: TEXT,
    DECISIONS: TEXT,
}
ELIDED = "[…]"
#: An error that is only an exit status ("exit code 1"): nothing to ask about.
BARE_STATUS_RE = re.compile(r"^\s*(?:exit(?:ed)?\s+(?:code|status)|returned)\s+-?\d+\s*$", re.I)
MIN_REQUEST_WEIGHT = 3.0  # content terms (a CJK character ½): "ok, go on" is not worth one


@dataclass(frozen=True)
class Question:
    """One question: its ``category``, the ``text`` sent, the ``expected``
    answers (items' texts: the answer must name each of them), how it is
    graded (``kind``) and the 0-based indices of the messages the items come
    from."""

    number: int
    category: str
    text: str
    expected: tuple[str, ...]
    kind: str
    messages: tuple[int, ...]
    status: str | None = None  # an open task's: an answer stating another is wrong

    @property
    def expected_text(self) -> str:
        return "; ".join(self.expected)


def normal(text: str) -> str:
    """Lower case, single spaces, no quotes or backticks (for "quotes its answer")."""
    return command_key(text)


def quotes(question: str, answer: str) -> bool:
    """Does ``question`` give ``answer`` away (its text, or a path's file name)?"""
    q, a = normal(question), normal(answer)
    if not a or a in q:  # nothing to give away, or given away whole
        return bool(a)
    name = a.rsplit("/", 1)[-1]
    return "/" in a and len(name) > 3 and name in q


def _elide(context: str, answers: Iterable[str]) -> str:
    """``context`` with each answer (and a path's file name) cut out."""
    for answer in answers:
        pieces = [answer, answer.rsplit("/", 1)[-1]] if "/" in answer else [answer]
        for piece in pieces:
            if len(piece) >= 3:
                context = re.sub(re.escape(piece), ELIDED, context, flags=re.I)
    return context


def _clip(text: str, width: int = CONTEXT_CHARS) -> str:
    text = collapse(text)
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


#: Per category: the question about one item, given its place ("first" or
#: "next, after …") and " while working on the request …" (or "").
GROUP_QUESTIONS = {
    EDITED_FILES: "Which file did the agent edit {place}{under}? Answer with its path.",
    COMMANDS: "Which command did the agent run {place}{under}? Answer with the command line.",
    ERRORS: "Which error did the agent hit {place}{under}? Quote its message.",
    DECISIONS: "What did the agent decide {place}{under}, and why?",
}
#: How the item before is named in a "next, after …" question.
AFTER = {
    EDITED_FILES: "editing {}",
    COMMANDS: "running `{}`",
    ERRORS: 'the error "{}"',
    DECISIONS: 'deciding "{}"',
}
GROUPED = tuple(GROUP_QUESTIONS)


@dataclass
class _Draft:
    category: str
    text: str
    items: list[Item]

    @property
    def weight(self) -> tuple[int, int]:
        return (-max(i.weight for i in self.items), min(i.first for i in self.items))


class _Maker:
    def __init__(self, specifics: Specifics, kept: Sequence[str]) -> None:
        self.specifics = specifics
        texts = [k for k in kept if k]
        self.kept = [normal(k) for k in texts]
        self.kept_hay = Haystack("\n".join(texts), texts)  # a request: within one message
        self.requests = sorted(specifics.of(USER_REQUESTS), key=lambda i: i.first)

    def in_kept(self, item: Item) -> bool:
        """Does what is sent besides the summary hold ``item``?"""
        a = normal(item.text)
        if a and any(a in k for k in self.kept):
            return True
        if item.category in (USER_REQUESTS, OPEN_TASKS) and self.kept_hay:
            return find(item, self.kept_hay)
        return False

    def request_before(self, item: Item) -> Item | None:
        before = [r for r in self.requests if r.first <= item.first and r is not item]
        return before[-1] if before else None

    def drafts(self, category: str) -> list[_Draft]:
        """The questions worth asking in ``category``, heaviest first."""
        items = [
            i
            for i in self.specifics.of(category)
            if not self.in_kept(i) and not BARE_STATUS_RE.match(i.text)
        ]
        if category in GROUPED:
            made = self.grouped(category, items)
        elif category == USER_REQUESTS:
            made = [d for d in map(self.request_question, items) if d is not None]
        else:
            made = [self.task_question(i) for i in items]
        made = [d for d in made if not any(quotes(d.text, i.text) for i in d.items)]
        return sorted(made, key=lambda d: d.weight)

    def grouped(self, category: str, items: list[Item]) -> list[_Draft]:
        """One question per item: the first of its category under its request,
        or the next one after the item before it (every item of the category
        counts for the order, asked about or not)."""
        asked = {id(i) for i in items}
        groups: dict[int | None, list[Item]] = {}
        for item in sorted(self.specifics.of(category), key=lambda i: i.first):
            request = self.request_before(item)
            groups.setdefault(request.first if request is not None else None, []).append(item)
        out = []
        for at, group in groups.items():
            request = next((r for r in self.requests if r.first == at), None)
            for n, item in enumerate(group):
                if id(item) not in asked:
                    continue
                under = ""
                if request is not None:
                    context = _clip(_elide(request.text, [item.text]))
                    under = f' while working on the request "{context}"'
                if n == 0:
                    place = "first"
                else:
                    before = _clip(_elide(group[n - 1].text, [item.text]), 80)
                    place = f"next, after {AFTER[category].format(before)},"
                    under = under.lstrip(",")
                text = GROUP_QUESTIONS[category].format(place=place, under=under)
                out.append(_Draft(category, text.replace(",?", "?").replace(", ?", "?"), [item]))
        return out

    def request_question(self, item: Item) -> _Draft | None:
        if sum(Request.cached(item.text).weights) < MIN_REQUEST_WEIGHT:
            return None
        earlier = [r for r in self.requests if r.first < item.first]
        if not earlier:
            text = "What was the first thing the user asked for in this conversation?"
        else:
            prev = _clip(_elide(earlier[-1].text, [item.text]))
            text = f'What did the user ask for next, after the request "{prev}"?'
        return _Draft(USER_REQUESTS, text, [item])

    def task_question(self, item: Item) -> _Draft:
        """An open task, by its place in the agent's plan."""
        plan = self.specifics.of(PLAN)
        at = next((n for n, i in enumerate(plan) if i is item), 0)
        status = "in progress" if item.status == IN_PROGRESS else "still pending"
        if at == 0:
            text = f"What is the first task in the agent's plan? (It is {status}.)"
        else:
            prev = _clip(_elide(plan[at - 1].text, [item.text]))
            text = f'Which task comes right after "{prev}" in the agent\'s plan? (It is {status}.)'
        return _Draft(OPEN_TASKS, text, [item])


def make_questions(
    specifics: Specifics, kept: Sequence[str], limit: int = DEFAULT_QUESTIONS
) -> list[Question]:
    """Up to ``limit`` questions about ``specifics`` (of the compacted range),
    none about an item that ``kept`` (the kept messages' texts) holds."""
    maker = _Maker(specifics, kept)
    queues = {c: maker.drafts(c) for c in CATEGORIES}
    out: list[Question] = []
    while len(out) < limit and any(queues.values()):
        for category in CATEGORIES:
            if len(out) >= limit or not queues[category]:
                continue
            draft = queues[category].pop(0)
            messages = sorted({m for i in draft.items for m in i.messages})
            out.append(
                Question(
                    len(out) + 1,
                    category,
                    draft.text,
                    tuple(i.text for i in draft.items),
                    KIND_OF[category],
                    tuple(messages),
                    draft.items[0].status if category == OPEN_TASKS else None,
                )
            )
    return out

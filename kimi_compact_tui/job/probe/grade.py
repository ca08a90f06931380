"""Grading a probe's answers, without a model judge.

Each expected item is looked for in the answer, by its kind:

- a path: the answer names it, as the whole path or a tail of it that keeps
  the file name (``src/app/cache.py``: ``app/cache.py`` or ``cache.py``), case
  aside, not as part of a longer name;
- a command: the answer holds the command (quotes, case and spacing aside), or
  every word of it in the same order (extra flags between them allowed);
- free text (a request, a task, an error, a decision): the stated rule is the
  share of the expected text's content words (lower case, a light stem, stop
  words left out; CJK: character pairs) that the answer has: at least
  :data:`TEXT_CORRECT` is a match, at least :data:`TEXT_PARTIAL` half of one.

The verdict: ``correct`` when every expected item matches, ``partial`` when
some do (or a free-text item half matches), ``wrong`` otherwise, and
``error`` when the model gave no answer (the request failed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kimi_compact_tui.job.probe.questions import COMMAND, PATH, Question
from kimi_compact_tui.retention.matching import content_tokens
from kimi_compact_tui.specifics.patterns import command_key

TEXT_CORRECT = 0.6
TEXT_PARTIAL = 0.3
CORRECT, PARTIAL, WRONG, ERROR = "correct", "partial", "wrong", "error"
VERDICTS = (CORRECT, PARTIAL, WRONG, ERROR)
PATH_CHAR = r"[\w.~/-]"


@dataclass(frozen=True)
class Grade:
    """A verdict, and how much of each expected item the answer matched (0 to 1)."""

    verdict: str
    matched: tuple[float, ...]


def path_found(expected: str, answer: str) -> bool:
    path = expected.lower().strip().removeprefix("./")
    low = answer.lower()
    segments = path.split("/")
    for start in range(len(segments)):
        tail = "/".join(segments[start:])
        if len(tail) < 3:
            continue
        pattern = rf"(?<!{PATH_CHAR}){re.escape(tail)}(?![\w/-])"
        if re.search(pattern, low):
            return True
    return False


def command_found(expected: str, answer: str) -> bool:
    want, have = command_key(expected), command_key(answer)
    if not want or want in have:  # nothing to find, or found whole
        return bool(want)
    words = want.split()
    at = 0
    have_words = have.split()
    for word in have_words:
        if at < len(words) and word.strip(".,;:") == words[at]:
            at += 1
    return at == len(words) and len(words) > 1


def text_share(expected: str, answer: str) -> float:
    want = content_tokens(expected)
    if not want:
        return 1.0 if command_key(expected) in command_key(answer) else 0.0
    return len(want & content_tokens(answer)) / len(want)


def match(kind: str, expected: str, answer: str) -> float:
    """How much of ``expected`` the answer has: 1 (found), 0.5 (half), 0."""
    if kind == PATH:
        return 1.0 if path_found(expected, answer) else 0.0
    if kind == COMMAND:
        return 1.0 if command_found(expected, answer) else 0.0
    share = text_share(expected, answer)
    if share >= TEXT_CORRECT:
        return 1.0
    return 0.5 if share >= TEXT_PARTIAL else 0.0


def grade(question: Question, answer: str | None) -> Grade:
    """The verdict on ``answer`` (None: no answer came)."""
    if answer is None:
        return Grade(ERROR, tuple(0.0 for _ in question.expected))
    matched = tuple(match(question.kind, e, answer) for e in question.expected)
    if all(m == 1.0 for m in matched):
        return Grade(CORRECT, matched)
    if any(m > 0 for m in matched):
        return Grade(PARTIAL, matched)
    return Grade(WRONG, matched)

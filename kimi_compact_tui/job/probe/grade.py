"""Grading a probe's answers, without a model judge.

Each expected item is looked for in the answer, by its kind:

- a path: a path the answer names ends with it (``./src/app/cache.py``, the
  absolute ``/home/u/proj/src/app/cache.py``), or is a tail of it that keeps
  the file name (``app/cache.py`` or ``cache.py``), case aside, never part of
  a longer name (``lib/cache.py`` and ``old-cache.py`` are other files);
- a command: the answer holds the command (quotes, case and spacing aside), or
  every word of it in the same order (extra flags between them allowed);
- free text (a request, a task, an error, a decision): the weighted share of
  the expected text's content terms the answer has (the retention rule's
  terms, :mod:`kimi_compact_tui.retention.passage`: words lightly stemmed, a
  typo or a shared stem counting as the word, names and numbers weighing 3,
  a CJK character ½): at least :data:`TEXT_CORRECT` is a match, at least
  :data:`TEXT_PARTIAL` half of one;
- numbers: every number of the expected text (with its unit: ``30 s``,
  ``120 ms``, ``v1.4.2``) must be in the answer with the same value and unit;
  an answer that gives another value in the same unit ("60 s" for "30 s") does
  not match at all, one that leaves the number out matches half;
- a status: an open task answered as done or cancelled ("(completed)",
  "已完成") does not match, whatever its words.

The verdict: ``correct`` when every expected item matches, ``partial`` when
some do (or a free-text item half matches), ``wrong`` otherwise, and
``error`` when the model gave no answer (the request failed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kimi_compact_tui.job.probe.questions import COMMAND, PATH, Question
from kimi_compact_tui.retention.matching import CANCELLED, DONE, OPEN_STATE, states
from kimi_compact_tui.retention.passage import Passages, Request
from kimi_compact_tui.specifics import OPEN_STATUSES
from kimi_compact_tui.specifics.patterns import command_key, numbers_in

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


PATH_RUN_RE = re.compile(r"[\w.~/@+-]+")


def path_found(expected: str, answer: str) -> bool:
    """Does ``answer`` name the path ``expected`` (see the module)?"""
    want = expected.lower().strip().removeprefix("./").lstrip("/")
    if not want:
        return False
    for m in PATH_RUN_RE.finditer(answer.lower()):
        got = m.group(0).rstrip(".,;:-")
        while got.startswith("./"):
            got = got[2:]
        if len(got) < 3:
            continue
        if (
            got == want
            or got.endswith("/" + want)
            or (want.endswith("/" + got.lstrip("/")) and "." in got.rsplit("/", 1)[-1])
        ):
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
    """The weighted share of ``expected``'s content terms the answer has (the
    retention rule's terms: words lightly stemmed, names and numbers weighing
    3, a CJK character ½)."""
    want = Request.cached(expected)
    if not want.keys:
        return 1.0 if command_key(expected) in command_key(answer) else 0.0
    have = Passages([answer])
    got = sum(w for k, w in zip(want.keys, want.weights, strict=True) if have.same(k))
    return got / sum(want.weights)


def numbers_agree(expected: str, answer: str) -> float:
    """1 when the answer has every number (value and unit) of ``expected``; 0
    when it gives another value in one of their units; 0.5 when it leaves one out."""
    want = numbers_in(expected.lower())
    if not want:
        return 1.0
    have = {key for key, _ in numbers_in(answer.lower())}
    missing = [key for key, _ in want if key not in have]
    if not missing:
        return 1.0
    units = {_unit(key) for key in have}
    return 0.0 if any(_unit(key) in units for key in missing) else 0.5


def _unit(key: str) -> str:
    """The unit of a number's key (``30s`` → ``s``, ``v1.4.2`` → ``v``)."""
    if key.startswith("v") and key[1:2].isdigit():
        return "v"
    return key.lstrip("0123456789.").strip()


def status_agrees(status: str | None, answer: str) -> bool:
    """False when ``answer`` states an open task done or cancelled."""
    if status not in OPEN_STATUSES:
        return True
    said = states(answer)
    return OPEN_STATE in said or not (DONE in said or CANCELLED in said)


def match(kind: str, expected: str, answer: str) -> float:
    """How much of ``expected`` the answer has: 1 (found), 0.5 (half), 0."""
    if kind == PATH:
        return 1.0 if path_found(expected, answer) else 0.0
    numbers = numbers_agree(expected, answer)
    if kind == COMMAND:
        return min(numbers, 1.0 if command_found(expected, answer) else 0.0)
    share = text_share(expected, answer)
    found = 1.0 if share >= TEXT_CORRECT else 0.5 if share >= TEXT_PARTIAL else 0.0
    return min(found, numbers)


def grade(question: Question, answer: str | None) -> Grade:
    """The verdict on ``answer`` (None: no answer came)."""
    if answer is None:
        return Grade(ERROR, tuple(0.0 for _ in question.expected))
    matched = tuple(match(question.kind, e, answer) for e in question.expected)
    if not status_agrees(question.status, answer):
        matched = tuple(0.0 for _ in matched)  # an open task said to be done is wrong
    if all(m == 1.0 for m in matched):
        return Grade(CORRECT, matched)
    if any(m > 0 for m in matched):
        return Grade(PARTIAL, matched)
    return Grade(WRONG, matched)

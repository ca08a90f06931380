"""Custom instructions, as far as an extractive summarizer can follow them.

What it honours (the README lists the same):

- the lines the retention pane's ``i`` writes (``- commands: pytest -q (message 14)``):
  every item is kept verbatim, whatever else the instructions say;
- text in double quotes, backticks, “ ” or 「 」: kept verbatim;
- ``keep X`` / ``preserve X`` / ``retain X`` / ``include X`` / ``remember X`` (保留 X):
  X is kept verbatim when the messages contain it (case and spacing aside);
- ``focus on X`` / ``concentrate on X`` / ``prioritize X`` / ``emphasize X``
  (重点 / 关注 / 聚焦 / 侧重 X): ``<current_focus>`` names X and quotes the sentences of
  the messages about it;
- a list (``-``, ``*``, ``•`` or ``1.`` items, after a line ending in ``:`` or not):
  each item kept verbatim, unless it is itself an instruction.

Anything else (``be concise``, ``mention X everywhere``, ``write in French``) needs a
model: such lines are counted in ``<important_context>``, never copied into the summary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kimi_compact_tui.providers.offline.text import sentences
from kimi_compact_tui.providers.offline.transcript import TMessage
from kimi_compact_tui.retention.matching import content_tokens
from kimi_compact_tui.retention.report import item_lines_in

QUOTED_RE = re.compile(r'"([^"\n]+)"|`([^`\n]+)`|“([^”\n]+)”|「([^」\n]+)」')
BULLET_RE = re.compile(r"^(?:[-*•]|\d{1,3}[.)])\s+(?P<text>.+)$")
KEEP_RE = re.compile(
    r"^(?:please\s+)?(?:keep|preserve|retain|include|remember)\b\s*(?P<what>.*)$"
    r"|^(?:请)?(?:保留|保持|记住)(?P<zh>.+)$",
    re.I,
)
FOCUS_RE = re.compile(
    r"^(?:please\s+)?(?:(?:focus|concentrate)\s+(?:on|upon)|prioriti[sz]e|emphasi[sz]e)\s+"
    r"(?P<what>.+)$|^(?:请)?(?:重点|关注|聚焦|侧重)(?:于|在|关注)?(?P<zh>.+)$",
    re.I,
)
# A list item that is itself an instruction ("- be concise"), not something to keep.
IMPERATIVE_RE = re.compile(
    r"^(?:please\s+)?(?:be|use|write|avoid|don't|do not|never|always|make|mention|summari[sz]e|"
    r"ignore|drop|remove|omit|skip|add|explain|describe|list|answer|reply|respond|translate)\b",
    re.I,
)
SENTENCE_END_RE = re.compile(r"(?<=[.!?;。！？；])\s+")
# "keep `X` and focus on Y": two instructions in one sentence, each followed.
CLAUSE_RE = re.compile(
    r"\s*(?:,|;)?\s+(?:and|then|also|plus)\s+(?=(?:please\s+)?(?:focus|concentrate|prioriti|"
    r"emphasi|keep|preserve|retain|include|remember|mention|be|write|use|avoid|don't|do not|"
    r"never|always)\b)|\s*[,;]\s+(?=(?:focus|concentrate|keep|preserve|retain)\b)",
    re.I,
)
TRAILING_RE = re.compile(
    r"(?:\s+(?:verbatim|word for word|exactly|intact|as is|as-is|unchanged|"
    r"in (?:the|your) summary|in full))+$|[\s.,;:!?。！？；，：]+$",
    re.I,
)


@dataclass
class Instructions:
    """What the summary does with the custom instructions."""

    keep: list[str] = field(default_factory=list)  # written verbatim, in this order
    focus: list[str] = field(default_factory=list)  # topics for <current_focus>
    not_followed: int = 0  # lines that need a model

    def __bool__(self) -> bool:
        return bool(self.keep or self.focus or self.not_followed)

    def note(self) -> str:
        """One line for ``<important_context>``: what was done with the instructions."""
        done = []
        if self.keep:
            n = len(self.keep)
            done.append(f"{n} item{'' if n == 1 else 's'} kept verbatim (listed above)")
        if self.focus:
            done.append("focus on " + "; ".join(self.focus) + " (in current_focus)")
        if self.not_followed:
            n = self.not_followed
            done.append(
                f"{n} instruction{'' if n == 1 else 's'} of the custom instructions not followed: "
                "the offline summarizer has no model to follow them"
            )
        return "Custom instructions (offline summary): " + "; ".join(done) + "."


def _clean(what: str) -> str:
    what = what.strip().strip("\"'`“”「」")
    previous = None
    while previous != what:
        previous = what
        what = TRAILING_RE.sub("", what).strip().strip("\"'`“”「」")
    return what


def _find(what: str, transcript: str) -> str | None:
    """``what`` as the messages spell it (case and spacing aside), or None."""
    words = what.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    m = re.search(pattern, transcript, re.I)
    return " ".join(m.group(0).split()) if m else None


class _Reader:
    def __init__(self, transcript: str) -> None:
        self.transcript = transcript
        self.out = Instructions()
        self._seen: set[str] = set()

    def keep(self, text: str) -> None:
        if text and text.lower() not in self._seen:
            self._seen.add(text.lower())
            self.out.keep.append(text)

    def sentence(self, sentence: str) -> bool:
        """Follow one sentence; False when it needs a model."""
        quoted = [next(g for g in m.groups() if g) for m in QUOTED_RE.finditer(sentence)]
        for text in quoted:
            self.keep(text)
        focus = FOCUS_RE.match(sentence)
        if focus:
            topic = _clean(focus.group("what") or focus.group("zh") or "")
            if topic:
                self.out.focus.append(topic)
                return True
        keep = KEEP_RE.match(sentence)
        if keep and not quoted:
            what = _clean(keep.group("what") or keep.group("zh") or "")
            for candidate in (what, re.sub(r"^(?:the|all|any)\s+", "", what, flags=re.I)):
                found = _find(candidate, self.transcript)
                if found:
                    self.keep(found)
                    return True
            return False
        return bool(quoted)

    def unfollowed(self, line: str, is_list_item: bool) -> int:
        """Follow one line; the number of its instructions that need a model."""
        if is_list_item and not (FOCUS_RE.match(line) or KEEP_RE.match(line)):
            return 0 if self.line(line, True) else 1
        clauses = [c for s in SENTENCE_END_RE.split(line) for c in CLAUSE_RE.split(s) if c.strip()]
        return sum(0 if self.sentence(c.strip()) else 1 for c in clauses)

    def line(self, line: str, is_list_item: bool) -> bool:
        if is_list_item and not (FOCUS_RE.match(line) or KEEP_RE.match(line)):
            if IMPERATIVE_RE.match(line):
                return False
            self.keep(_clean(line) or line)
            return True
        clauses = [c for s in SENTENCE_END_RE.split(line) for c in CLAUSE_RE.split(s) if c.strip()]
        results = [self.sentence(c.strip()) for c in clauses]
        return all(results)


def read_instructions(text: str, transcript: str) -> Instructions:
    """What the offline summarizer makes of the custom instruction ``text``;
    ``transcript`` is the messages' text (where ``keep X`` looks X up)."""
    reader = _Reader(transcript)
    if not text.strip():
        return reader.out
    for label, item in item_lines_in(text):
        reader.keep(f"{label}: {item}")
    lines = [line.strip() for line in text.splitlines()]
    for i, line in enumerate(lines):
        if not line or item_lines_in(line):
            continue  # empty, or an item of the retention pane (kept above)
        following = next((x for x in lines[i + 1 :] if x), "")
        if line.endswith((":", "：")) and BULLET_RE.match(following):
            continue  # the head of a list: its items follow
        bullet = BULLET_RE.match(line)
        body = bullet.group("text").strip() if bullet else line
        reader.out.not_followed += reader.unfollowed(body, bullet is not None)
    return reader.out


# ----------------------------------------------------------------------------- writing


def focus_lines(ins: Instructions, messages: list[TMessage], limit: int, chars: int) -> list[str]:
    """For ``<current_focus>``: each requested topic, then up to ``limit`` sentences of
    the messages about it (all of its content words; two thirds of them from four on)."""
    out: list[str] = []
    for topic in ins.focus:
        out.append(f"Requested focus (custom instructions): {topic}.")
        wanted = content_tokens(topic)
        if not wanted or not limit:
            continue
        need = len(wanted) if len(wanted) <= 3 else (2 * len(wanted) + 2) // 3
        found: list[str] = []
        for m in messages:
            if m.role == "system" or m.injected:
                continue
            for s in sentences(m.prose):
                if len(wanted & content_tokens(s)) >= need:
                    found.append(f"- About it (message {m.number}): {s[:chars]}")
        out.extend(found[-limit:])  # the most recent
    return out


def kept_lines(ins: Instructions) -> list[str]:
    """For ``<important_context>``: the items to keep, verbatim."""
    if not ins.keep:
        return []
    return ["Kept verbatim as the custom instructions ask:", *(f"  - {k}" for k in ins.keep)]

"""A revision without a model: the given summary is kept, and only the
feedback a rule can follow is applied.

The offline provider cannot rewrite a summary; asked for a revision
(``--from-summary FILE --revise TEXT``, the TUI's ``f``) it never writes one
from the messages again, which would throw the given text away, hand edits
included. It keeps the last round's summary as it is and, for every
sentence of feedback (every round's, oldest first: an earlier "keep X" still
holds):

- an item line of the retention pane (``- commands: pytest -q (message 14)``)
  is added verbatim;
- text in quotes or backticks is added verbatim;
- ``keep X`` / ``preserve X`` / ``retain X`` / ``include X`` / ``remember X``
  (保留 X) adds X verbatim as the messages spell it, when they hold it;
- a sentence that asks for items of the compacted range ("add the failing
  test name", "keep the commands") adds those items' lines (:func:`named_items`);
- anything else ("be brief", "write in French") needs a model: it is listed
  as not followed (:attr:`OfflineRevision.not_followed`), and the summary is
  not changed for it.

What is added goes at the end of ``<important_context>`` (a block of its own
when the summary has none), under one line saying the feedback asked for it;
a line the summary already holds is not added twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kimi_compact_tui.providers.offline.instructions import (
    CLAUSE_RE,
    KEEP_RE,
    QUOTED_RE,
    SENTENCE_END_RE,
    _clean,
    _find,
)
from kimi_compact_tui.retention.matching import content_tokens
from kimi_compact_tui.retention.report import CATEGORY_LABELS, item_line, item_lines_in
from kimi_compact_tui.specifics import Item, Specifics

#: A sentence of feedback that asks for something to be in the summary.
NAMING_RE = re.compile(
    r"^(?:please\s+)?(?:keep|add|include|mention|restore|preserve|retain|remember|"
    r"put back|bring back|do not (?:drop|lose|forget)|don't (?:drop|lose|forget))\s+"
    r"(?P<what>.+)$",
    re.I,
)
FEEDBACK_SENTENCE_RE = re.compile(r"[.;!?\n。！？；]+\s*")
#: Words that say how an item is to be given, not which one.
GENERIC = frozenset(
    content_tokens(
        "name names exact verbatim summary summaries message messages line lines "
        "full back text again too also word words"
    )
)
MAX_NAMED = 10  # items one sentence of feedback may name
HEAD = "Kept verbatim as the feedback asks (revised without a model):"
CLOSE = "</important_context>"


def named_items(feedback: str, specifics: Specifics) -> list[Item]:
    """The items of ``specifics`` a sentence of ``feedback`` names ("keep X",
    "add the failing test name", "include the edited files"): those whose
    text holds every content word of X (how-words like "name" or "verbatim"
    aside), or every item of the category X names, heaviest first, at most
    :data:`MAX_NAMED` a sentence."""
    out: list[Item] = []
    for sentence in FEEDBACK_SENTENCE_RE.split(feedback):
        m = NAMING_RE.match(sentence.strip())
        if not m:
            continue
        want = content_tokens(m.group("what")) - GENERIC
        if not want:
            continue
        found = []
        for item in specifics.by_weight():
            if item.category not in CATEGORY_LABELS:
                continue
            label = content_tokens(CATEGORY_LABELS[item.category])
            if (want <= content_tokens(item.text) or want <= label) and item not in out:
                found.append(item)
        out.extend(found[:MAX_NAMED])
    return out


@dataclass
class OfflineRevision:
    """The kept summary with what the feedback's rules added, and which
    sentences of feedback were followed and which need a model."""

    text: str
    added: list[str] = field(default_factory=list)
    followed: list[str] = field(default_factory=list)
    not_followed: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        """What was done, one line each (for stderr and the TUI)."""
        out = ["no model: the summary given is kept as it is"]
        if self.added:
            n = len(self.added)
            out.append(f"added verbatim, as the feedback asks: {n} line{'' if n == 1 else 's'}")
        elif self.followed:
            out.append("what the feedback asks to keep is already in the summary")
        if self.not_followed:
            listed = "; ".join(f'"{s}"' for s in self.not_followed)
            out.append(f"feedback not followed (it needs a model): {listed}")
        return out


def _sentences(feedback: str) -> list[str]:
    return [
        c.strip()
        for s in SENTENCE_END_RE.split(feedback)
        for line in s.split("\n")
        for c in CLAUSE_RE.split(line)
        if c.strip()
    ]


def _follow(sentence: str, transcript: str, specifics: Specifics | None) -> list[str]:
    """The lines one sentence of feedback adds verbatim ([]: it needs a model)."""
    lines = [f"- {label}: {text}" for label, text in item_lines_in(sentence)]
    if lines:
        return lines
    quoted = [next(g for g in m.groups() if g) for m in QUOTED_RE.finditer(sentence)]
    if quoted:
        return quoted
    keep = KEEP_RE.match(sentence)
    if keep:
        what = _clean(keep.group("what") or keep.group("zh") or "")
        for candidate in (what, re.sub(r"^(?:the|all|any)\s+", "", what, flags=re.I)):
            found = _find(candidate, transcript)
            if found:
                return [found]
    if specifics is not None:
        return [item_line(i) for i in named_items(sentence, specifics)]
    return []


def _with_lines(summary: str, lines: list[str]) -> str:
    block = [HEAD, *(line if line.startswith("- ") else f"  - {line}" for line in lines)]
    at = summary.rfind(CLOSE)
    if at >= 0:
        before = summary[:at].rstrip("\n")
        return f"{before}\n" + "\n".join(block) + "\n" + summary[at:]
    body = "\n".join(block)
    return f"{summary.rstrip()}\n\n<important_context>\n{body}\n{CLOSE}\n"


def revise_offline(
    summary: str,
    feedback: Sequence[str],
    transcript: str,
    specifics: Specifics | None = None,
) -> OfflineRevision:
    """``summary`` kept, with what ``feedback`` (every round's, oldest first)
    asks that a rule can do; ``transcript`` is the compacted messages' text
    (where ``keep X`` looks X up), ``specifics`` their items."""
    out = OfflineRevision(summary)
    present = summary.lower()
    for text in feedback:
        for sentence in _sentences(text):
            lines = _follow(sentence, transcript, specifics)
            if not lines:
                if sentence not in out.not_followed:
                    out.not_followed.append(sentence)
                continue
            out.followed.append(sentence)
            for line in lines:
                if line.lower() not in present and line not in out.added:
                    out.added.append(line)
    if out.added:
        out.text = _with_lines(summary, out.added)
    return out

"""The retention report: per category, what the summary keeps and what it loses.

``retention_report(session, plan, summary_text)`` runs the extractor
(:mod:`kimi_compact_tui.specifics`, with the session format's vocabulary) on
the compacted range (``plan.compact_indices``) and matches each item against
the summary, then against the kept messages (the leading system messages and
``plan.preserved_indices``, which the model still sees). A summary that loses a
user request, an instruction or an open task is flagged critical. Message
numbers in the report are 1-based, as shown to people.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.errors import RetentionShortfall, UserError
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.model import Message
from kimi_compact_tui.retention.matching import Haystack, find, misstatement
from kimi_compact_tui.sanitize import plain_text
from kimi_compact_tui.specifics import (
    UNSENT_STATUS,
    Item,
    Specifics,
    Vocabulary,
    extract,
    kinds,
    message_haystack,
)
from kimi_compact_tui.specifics.extractor import shown
from kimi_compact_tui.specifics.patterns import WORK_DIR_RE

#: The categories of the report, the critical ones first.
CATEGORIES = (
    kinds.USER_REQUESTS,
    kinds.INSTRUCTIONS,
    kinds.OPEN_TASKS,
    kinds.EDITED_FILES,
    kinds.COMMANDS,
    kinds.ERRORS,
    kinds.FILE_PATHS,
    kinds.IDENTIFIERS,
    kinds.NUMBERS,
    kinds.URLS,
)
#: The kinds of the extractor's items the report reads (the open tasks are the plan's).
READS = frozenset((*CATEGORIES, kinds.PLAN))
#: A summary that loses one of these is flagged critical.
CRITICAL = (kinds.USER_REQUESTS, kinds.INSTRUCTIONS, kinds.OPEN_TASKS)
CRITICAL_WEIGHT = 5  # a short acknowledgement lost is not critical
#: Old category names, and the names that replaced them.
RENAMED = {
    "requirements": kinds.INSTRUCTIONS,
    "open_items": kinds.OPEN_TASKS,
    "latest_request": kinds.USER_REQUESTS,
}


class _Meta(Protocol):
    @property
    def system_prompt(self) -> str | None: ...


class _Format(Protocol):
    def vocabulary(self) -> Vocabulary: ...


class Reviewed(Protocol):
    """What retention reads of a session (a ``formats.base.Session`` is one):
    its messages, the agent's system prompt when the file records it, and its
    format (whose vocabulary the extractor is given)."""

    @property
    def messages(self) -> list[Message]: ...

    @property
    def meta(self) -> _Meta: ...

    @property
    def format(self) -> _Format: ...


EXIT_RETENTION_SHORTFALL = (
    RetentionShortfall.exit_code
)  # CLI status for a --min-retention shortfall
KEPT_IN_SUMMARY = "summary"
KEPT_IN_TAIL = "tail"  # the kept messages: leading system + preserved tail / after boundary

CATEGORY_LABELS = {
    "user_requests": "user requests",
    "instructions": "instructions",
    "open_tasks": "open tasks",
    "edited_files": "edited files",
    "commands": "commands",
    "errors": "errors",
    "file_paths": "file paths",
    "identifiers": "identifiers",
    "numbers": "numbers",
    "urls": "URLs",
}


@dataclass(frozen=True)
class Misstated:
    """An item the summary states wrongly: ``stated`` is what the summary says
    (``completed``, ``cancelled``, ``passed``, ``written``), ``statement`` its
    words, and ``status`` what the session says (the item's status)."""

    item: Item
    stated: str
    statement: str

    @property
    def status(self) -> str:
        return self.item.status or ""

    def describe(self) -> str:
        """``stated completed; the session says pending``."""
        return f"stated {self.stated}; the session says {self.status}"

    def to_json(self) -> dict[str, Any]:
        return {**_item_json(self.item), "stated": self.stated, "statement": self.statement}


@dataclass
class CategoryReport:
    name: str
    kept: list[tuple[Item, str]] = field(default_factory=list)  # (item, KEPT_IN_*)
    missing: list[Item] = field(default_factory=list)
    misstated: list[Misstated] = field(default_factory=list)  # neither kept nor missing

    @property
    def total(self) -> int:
        return len(self.kept) + len(self.misstated) + len(self.missing)

    @property
    def kept_count(self) -> int:
        return len(self.kept)

    @property
    def percent(self) -> float | None:
        """Share kept, or None when the category had nothing (0/0 is not 100%)."""
        return None if not self.total else 100.0 * len(self.kept) / self.total

    def figure(self) -> str:
        pct = "-" if self.percent is None else f"{self.percent:.0f}%"
        return f"{self.kept_count}/{self.total} {pct}"

    @property
    def unsent(self) -> int:
        """How many of its items the person saw but the agent never sent to its model."""
        items = [i for i, _ in self.kept] + self.missing
        return sum(1 for i in items if i.status == UNSENT_STATUS)

    @property
    def critical_missing(self) -> list[Item]:
        """What this category loses that makes the summary critical."""
        if self.name not in CRITICAL:
            return []
        return [i for i in self.missing if i.weight >= CRITICAL_WEIGHT]

    @property
    def critical_misstated(self) -> list[Item]:
        """What this category states wrongly that makes the summary critical."""
        if self.name not in CRITICAL:
            return []
        return [m.item for m in self.misstated if m.item.weight >= CRITICAL_WEIGHT]

    @property
    def critical(self) -> bool:
        return bool(self.critical_missing or self.critical_misstated)

    def to_json(self) -> dict[str, Any]:
        return {
            "kept": self.kept_count,
            "total": self.total,
            "percent": None if self.percent is None else round(self.percent, 1),
            "critical": self.critical,
            "kept_in_summary": sum(1 for _, w in self.kept if w == KEPT_IN_SUMMARY),
            "kept_in_tail": sum(1 for _, w in self.kept if w == KEPT_IN_TAIL),
            "misstated": len(self.misstated),
            "missing": [_item_json(i) for i in self.missing],
            "misstated_items": [m.to_json() for m in self.misstated],
            "kept_items": [{**_item_json(i), "where": where} for i, where in self.kept],
            **({"unsent": self.unsent} if self.unsent else {}),
        }


def numbers(item: Item) -> list[int]:
    return [i + 1 for i in item.messages]


def _item_json(item: Item) -> dict[str, Any]:
    out: dict[str, Any] = {"item": item.text, "messages": numbers(item)}
    if item.status is not None:
        out["status"] = item.status
    return out


def display(item: Item, width: int | None = 240) -> str:
    """An item on one line (a long request cut with ``…`` at ``width``; None: whole)."""
    return shown(item.text, 10**9 if width is None else width)


@dataclass
class RetentionReport:
    categories: dict[str, CategoryReport]
    compacted: tuple[int, int] | None  # first and last compacted message, 1-based
    work_root: str | None = None

    @property
    def kept(self) -> int:
        return sum(c.kept_count for c in self.categories.values())

    @property
    def total(self) -> int:
        return sum(c.total for c in self.categories.values())

    @property
    def misstated(self) -> int:
        return sum(len(c.misstated) for c in self.categories.values())

    def missing_items(self) -> list[Item]:
        return [i for c in self.categories.values() for i in c.missing]

    def misstated_items(self) -> list[Misstated]:
        """The items the summary states wrongly (what it says, what the session says)."""
        return [m for c in self.categories.values() for m in c.misstated]

    def critical_missing(self) -> list[Item]:
        """The user requests, instructions and open tasks the summary loses."""
        return [i for c in self.categories.values() for i in c.critical_missing]

    def critical_misstated(self) -> list[Item]:
        """The user requests, instructions and open tasks the summary states wrongly."""
        return [i for c in self.categories.values() for i in c.critical_misstated]

    def score(self) -> float:
        """The share of items the summary keeps, with a misstated item counted
        against it: ``(kept - misstated) / total`` in percent, 0 at least (a
        summary that says an open task is done does worse than one that leaves
        it out). 100 when there is nothing to keep."""
        if not self.total:
            return 100.0
        return max(0.0, 100.0 * (self.kept - self.misstated) / self.total)

    def critical_line(self) -> str | None:
        """One line saying what critical items the summary loses or misstates, or None."""

        def counted(pairs: list[tuple[str, int]]) -> str:
            return ", ".join(
                f"{k} {CATEGORY_LABELS[n] if k != 1 else _one(n)}" for n, k in pairs if k
            )

        cats = self.categories.items()
        lost = counted([(name, len(c.critical_missing)) for name, c in cats])
        wrong = counted([(name, len(c.critical_misstated)) for name, c in cats])
        if not lost and not wrong:
            return None
        parts = ([f"loses {lost}"] if lost else []) + ([f"misstates {wrong}"] if wrong else [])
        return "CRITICAL: the summary " + "; ".join(parts)

    def figures(self) -> dict[str, tuple[int, int]]:
        return {name: (c.kept_count, c.total) for name, c in self.categories.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "categories": {name: c.to_json() for name, c in self.categories.items()},
            "kept": self.kept,
            "misstated": self.misstated,
            "total": self.total,
            "score": round(self.score(), 1),
            "critical": [
                {"category": i.category, "item": i.text, "messages": numbers(i)}
                for i in self.critical_missing()
            ]
            + [
                {
                    "category": m.item.category,
                    "item": m.item.text,
                    "messages": numbers(m.item),
                    "misstated": m.stated,
                }
                for c in self.categories.values()
                for m in c.misstated
                if m.item in c.critical_misstated
            ],
            "compacted_messages": list(self.compacted) if self.compacted else [],
            "work_root": self.work_root,
        }

    def to_text(self) -> str:
        lines = []
        if self.compacted:
            lines.append(f"retention of messages {self.compacted[0]}..{self.compacted[1]}")
        else:
            lines.append("retention: nothing is compacted")
        for name, c in self.categories.items():
            in_tail = sum(1 for _, w in c.kept if w == KEPT_IN_TAIL)
            note = f" ({in_tail} in the kept tail)" if in_tail else ""
            if c.misstated:
                note += f" ({len(c.misstated)} misstated)"
            if c.unsent:
                note += f" ({c.unsent} seen by the user, not sent to the model)"
            if c.critical:
                note += "  ! critical"
            pct = "-" if c.percent is None else f"{c.percent:.0f}%"
            lines.append(f"  {name:<15} {c.kept_count:>4}/{c.total:<4} {pct:>5}{note}")
        critical = self.critical_line()
        if critical:
            lines.append(critical)
        wrong = [(n, m, c) for n, c in self.categories.items() for m in c.misstated]
        if wrong:
            lines.append("misstated:")
            for name, m, c in wrong:
                mark = "! " if m.item in c.critical_misstated else ""
                where = ", ".join(str(n) for n in numbers(m.item))
                lines.append(
                    f"  {mark}[{name}] {display(m.item)}: {m.describe()}  "
                    f"(message{_s(m.item.messages)} {where})"
                )
                lines.append(f"      the summary: {shown(m.statement, 200)}")
        missing = [(n, i, c) for n, c in self.categories.items() for i in c.missing]
        if missing:
            lines.append("missing:")
            for name, item, c in missing:
                mark = "! " if item in c.critical_missing else ""
                where = ", ".join(str(n) for n in numbers(item))
                shows = name == kinds.OPEN_TASKS or item.status == UNSENT_STATUS
                status = f" [{item.status}]" if shows and item.status else ""
                lines.append(
                    f"  {mark}[{name}] {display(item)}{status}  "
                    f"(message{_s(item.messages)} {where})"
                )
        return "\n".join(lines) + "\n"


def _s(seq: Iterable[Any]) -> str:
    return "" if len(list(seq)) == 1 else "s"


def _one(name: str) -> str:
    return {"user_requests": "user request", "instructions": "instruction"}.get(
        name, CATEGORY_LABELS[name].rstrip("s")
    )


def retention_report(
    session: Reviewed,
    plan: CompactionPlan,
    summary_text: str,
    *,
    work_dir: str | None = None,
    vocabulary: Vocabulary | None = None,
    specifics: Specifics | None = None,
) -> RetentionReport:
    """The retention of ``summary_text`` for the range ``plan.compact_indices``.
    ``specifics``: the range's items, already extracted with the same work
    folder and vocabulary (the job's, shared by every score of one range);
    None: extracted here (only the kinds retention reads)."""
    with gc_paused():  # indexes and items by the thousand, and no cycles among them
        return _retention_report(session, plan, summary_text, work_dir, vocabulary, specifics)


def _retention_report(
    session: Reviewed,
    plan: CompactionPlan,
    summary_text: str,
    work_dir: str | None,
    vocabulary: Vocabulary | None,
    specifics: Specifics | None,
) -> RetentionReport:
    messages = session.messages
    compact = list(plan.compact_indices)
    work_dir = work_dir or stated_work_dir(session, plan)
    root = work_dir.rstrip("/") + "/" if work_dir else None
    vocabulary = vocabulary if vocabulary is not None else session.format.vocabulary()
    if specifics is None:
        specifics = extract(messages, compact, vocabulary, root, reads=READS)
    kept_indices = [*plan.leading_system_indices, *plan.preserved_indices]
    summary = Haystack(plain_text(summary_text or ""))
    kept_texts = [message_haystack(messages[i]) for i in kept_indices]
    tail = Haystack("\n".join(kept_texts), kept_texts)  # a request: within one message
    unique = _unique_basenames(specifics.of(kinds.FILE_PATHS))
    categories: dict[str, CategoryReport] = {}
    for name in CATEGORIES:
        report = CategoryReport(name)
        for item in specifics.of(name):
            if name == kinds.OPEN_TASKS:
                item = replace(item, category=kinds.OPEN_TASKS)
            wrong = misstatement(item, summary)
            if wrong is not None:
                report.misstated.append(Misstated(item, wrong.stated, wrong.statement))
            elif find(item, summary, unique):
                report.kept.append((item, KEPT_IN_SUMMARY))
            elif find(item, tail, unique):
                report.kept.append((item, KEPT_IN_TAIL))
            else:
                report.missing.append(item)
        report.missing.sort(key=lambda i: i.first)  # stable: the extractor's order
        report.kept.sort(key=lambda p: p[0].first)
        report.misstated.sort(key=lambda m: m.item.first)
        categories[name] = report
    span = (compact[0] + 1, compact[-1] + 1) if compact else None
    return RetentionReport(categories, span, specifics.root)


def stated_work_dir(session: Reviewed, plan: CompactionPlan) -> str | None:
    """The work folder a system prompt or leading system message states."""
    texts = [session.meta.system_prompt or ""]
    texts += [session.messages[i].text() for i in plan.leading_system_indices]
    for text in texts:
        m = WORK_DIR_RE.search(text)
        if m:
            return m.group(1)
    return None


def _unique_basenames(items: Iterable[Item]) -> frozenset[str]:
    counts: dict[str, int] = {}
    for item in items:
        base = item.key.rsplit("/", 1)[-1]
        counts[base] = counts.get(base, 0) + 1
    return frozenset(b for b, n in counts.items() if n == 1)


# ----------------------------------------------------------------------------- thresholds

_THRESHOLD_RE = re.compile(r"\A\s*([A-Za-z_\-]+)\s*=\s*([0-9]+(?:\.[0-9]+)?)\s*%?\s*\Z")


def parse_min_retention(text: str) -> tuple[str, float]:
    """``"file_paths=50"`` → ``("file_paths", 50.0)``; one-line UserError otherwise."""
    valid = ", ".join(CATEGORIES)
    m = _THRESHOLD_RE.match(text or "")
    if m is None:
        raise UserError(
            f"--min-retention {text!r}: expected CATEGORY=PERCENT, e.g. file_paths=50 "
            f"(categories: {valid})"
        )
    name = m.group(1).lower().replace("-", "_")
    if name in RENAMED:
        raise UserError(
            f"--min-retention {text!r}: the category {name!r} is now {RENAMED[name]!r} "
            f"(use {RENAMED[name]}={m.group(2)})"
        )
    if name not in CATEGORIES:
        raise UserError(f"--min-retention {text!r}: unknown category {name!r} (valid: {valid})")
    value = float(m.group(2))
    if value > 100:
        raise UserError(f"--min-retention {text!r}: percent must be between 0 and 100")
    return name, value


def check_min_retention(
    report: RetentionReport, thresholds: Mapping[str, float] | Iterable[tuple[str, float]]
) -> list[str]:
    """One line per category that falls short of its threshold. A category
    with nothing to keep (0/0) never falls short."""
    pairs = thresholds.items() if isinstance(thresholds, Mapping) else thresholds
    out = []
    for name, minimum in pairs:
        c = report.categories[name]
        if c.percent is not None and c.percent + 1e-9 < minimum:
            out.append(
                f"{name}: {c.percent:.1f}% kept ({c.kept_count}/{c.total}), "
                f"below the minimum {minimum:g}%"
            )
    return out


# ----------------------------------------------------------------------------- texts for a re-run

EDITOR_BLOCK_START = (
    "<!-- retention: exact references from the compacted messages, as history "
    "(what was asked and done, not new instructions; edit, keep or delete) -->"
)
EDITOR_BLOCK_END = "<!-- /retention -->"


#: The statuses an item line carries (a request's, so the agent does not redo it).
LINE_STATUSES = {
    kinds.USER_REQUESTS: ("answered", "not answered yet"),
    kinds.OPEN_TASKS: ("pending", "in_progress"),
}


#: How a line restates an item the summary misstates, after what the session says.
MISSTATED_NOTE = " — the summary above calls it {stated}"


def item_line(item: Item, width: int | None = 240, stated: str | None = None) -> str:
    """One item as a line of a block (``width``: where a long item is cut; None:
    whole, as the anchor block writes what it chose to fit its budget). With
    ``stated`` (what a summary wrongly says of it), the line says what the session
    says, then what the summary said: ``(message 9; in_progress — the summary
    above calls it completed)``."""
    where = ", ".join(str(n) for n in numbers(item))
    label = CATEGORY_LABELS.get(item.category, item.category)
    status = f"; {item.status}" if item.status in LINE_STATUSES.get(item.category, ()) else ""
    if stated is not None and item.status:
        status = f"; {item.status}{MISSTATED_NOTE.format(stated=stated)}"
    return f"- {label}: {display(item, width)} (message{_s(item.messages)} {where}{status})"


_ITEM_LINE_RE = re.compile(
    r"^- (?P<label>"
    + "|".join(re.escape(label) for label in CATEGORY_LABELS.values())
    + r"): (?P<text>.+) \(messages? \d+(?:, \d+)*(?:; [\w ,-]+(?: — [\w ,]+)?)?\)$"
)


def item_lines_in(text: str) -> list[tuple[str, str]]:
    """(category label, item text) of every :func:`item_line` in ``text``: what
    :func:`instructions_for` and :func:`editor_block` wrote, read back."""
    out = []
    for line in text.splitlines():
        m = _ITEM_LINE_RE.match(line.strip())
        if m:
            out.append((m.group("label"), m.group("text")))
    return out


def instructions_for(items: Iterable[Item]) -> str:
    """Custom instructions asking the next run to keep ``items`` verbatim."""
    lines = [item_line(i) for i in items]
    if not lines:
        return ""
    head = "Keep these specifics from the compacted messages verbatim in the summary:"
    return "\n".join([head, *lines])


def editor_block(items: Iterable[Item]) -> str:
    """A clearly marked block of ``items`` to append to a summary in the editor."""
    lines = [item_line(i) for i in items]
    if not lines:
        return ""
    return "\n".join([EDITOR_BLOCK_START, *lines, EDITOR_BLOCK_END])

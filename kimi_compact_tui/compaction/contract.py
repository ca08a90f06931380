"""The six-section contract of kimi-cli's compaction prompt, checked.

kimi-cli's ``compact.md`` asks the model to answer in exactly these sections,
in this order, each an XML-like tag::

    <current_focus> <environment> <completed_tasks>
    <active_issues> <code_state> <important_context>

:func:`check_sections` reports the missing and empty ones. It is a warning,
never a block: a summary that breaks the contract can still be written. A
Markdown heading naming a section (``## Current focus``) counts as present,
since some models answer that way. No Textual here, so the CLI can use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

SECTIONS: tuple[str, ...] = (
    "current_focus",
    "environment",
    "completed_tasks",
    "active_issues",
    "code_state",
    "important_context",
)

# A body that only repeats the prompt's template placeholders counts as empty.
_PLACEHOLDER = re.compile(r"^\s*(?:[-*]\s*)?(?:(?:\[[^\]\n]*\]|\.\.\.|…)\s*:?\s*)*$")


def _label(name: str) -> str:
    return name.replace("_", " ")


@dataclass(frozen=True)
class SectionCheck:
    """The result of checking one summary against the contract."""

    present: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    empty: tuple[str, ...] = ()
    unclosed: tuple[str, ...] = ()
    out_of_order: bool = False
    bodies: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        """True when every section is there, closed and not empty."""
        return not (self.missing or self.empty or self.unclosed)

    def warnings(self) -> list[str]:
        """Plain one-line warnings, in a fixed order (empty when ``ok``)."""
        out: list[str] = []
        if self.missing:
            out.append("missing section" + _s(self.missing) + ": " + ", ".join(self.missing))
        if self.empty:
            out.append("empty section" + _s(self.empty) + ": " + ", ".join(self.empty))
        if self.unclosed:
            out.append("section" + _s(self.unclosed) + " never closed: " + ", ".join(self.unclosed))
        if self.out_of_order and not self.missing:
            out.append("sections are not in the contract's order")
        return out

    def describe(self) -> str:
        """One line: ``all six sections present`` or the warnings joined."""
        if self.ok:
            return f"all {len(SECTIONS)} sections present"
        return "; ".join(self.warnings())

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "present": list(self.present),
            "missing": list(self.missing),
            "empty": list(self.empty),
            "unclosed": list(self.unclosed),
            "out_of_order": self.out_of_order,
        }


def _s(items: tuple[str, ...]) -> str:
    return "" if len(items) == 1 else "s"


def _is_empty(body: str) -> bool:
    lines = [line for line in body.splitlines() if line.strip()]
    return all(_PLACEHOLDER.match(line) for line in lines)


def _heading_pattern(name: str) -> re.Pattern[str]:
    words = r"[ \t_-]+".join(re.escape(w) for w in name.split("_"))
    return re.compile(
        rf"^[ \t]{{0,3}}(?:#{{1,6}}[ \t]*|\*\*)[ \t]*{words}[ \t]*:?[ \t]*(?:\*\*)?[ \t]*:?[ \t]*$",
        re.IGNORECASE | re.MULTILINE,
    )


def _find_tags(summary: str, name: str) -> tuple[int, str | None, bool] | None:
    """(position, body, closed) for the first ``<name>`` tag, or None."""
    open_match = re.search(rf"<\s*{name}\s*>", summary, re.IGNORECASE)
    if open_match is None:
        return None
    close_match = re.compile(rf"<\s*/\s*{name}\s*>", re.IGNORECASE).search(
        summary, open_match.end()
    )
    if close_match is None:
        return open_match.start(), None, False
    return open_match.start(), summary[open_match.end() : close_match.start()], True


def _find_headings(summary: str) -> list[tuple[int, str]]:
    found = []
    for name in SECTIONS:
        m = _heading_pattern(name).search(summary)
        if m is not None:
            found.append((m.start(), name))
    return sorted(found)


def check_sections(summary: str | None) -> SectionCheck:
    """Check ``summary`` against the six-section contract."""
    text = summary or ""
    present: list[str] = []
    missing: list[str] = []
    empty: list[str] = []
    unclosed: list[str] = []
    positions: list[int] = []
    bodies: dict[str, str] = {}
    headings = _find_headings(text)
    heading_at = {name: pos for pos, name in headings}
    for name in SECTIONS:
        tag = _find_tags(text, name)
        if tag is not None:
            pos, body, closed = tag
            present.append(name)
            positions.append(pos)
            if not closed:
                unclosed.append(name)
                continue
            assert body is not None
            bodies[name] = body
            if _is_empty(body):
                empty.append(name)
            continue
        if name in heading_at:
            pos = heading_at[name]
            present.append(name)
            positions.append(pos)
            later = [p for p, _ in headings if p > pos]
            start = text.find("\n", pos)
            start = len(text) if start < 0 else start
            body = text[start : (later[0] if later else len(text))]
            bodies[name] = body
            if _is_empty(body):
                empty.append(name)
            continue
        missing.append(name)
    return SectionCheck(
        present=tuple(present),
        missing=tuple(missing),
        empty=tuple(empty),
        unclosed=tuple(unclosed),
        out_of_order=positions != sorted(positions),
        bodies=bodies,
    )


def section_label(name: str) -> str:
    """``current_focus`` → ``current focus`` (for people)."""
    return _label(name)

"""The retention pane's text: the figures, a missing item, a failed probe question.

Plain functions from reports to rich ``Text`` (item and answer text come from
the session or the model: shown through :func:`one_line`, never parsed as
markup). A pinned item starts with ``●``, a critical one with ``!`` (both
readable without colour).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets.option_list import Option

from kimi_compact_tui.retention import CATEGORY_LABELS, KEPT_IN_TAIL, Item, RetentionReport
from kimi_compact_tui.retention.report import Misstated
from kimi_compact_tui.sanitize import fit_cells, one_line

MARK_ON = "● "
MARK_OFF = "  "
CRITICAL_MARK = "! "


#: The label column; narrower (labels cut with …) when the row is narrower.
LABEL_CELLS = 15
ROW_CELLS = LABEL_CELLS + 1 + 9 + 5  # " label", "kept/total", "pct%"


PROBE_CELLS = 8  # "  Q 9/10"
PROBE_LABELS = {"decisions": "decisions"}


def probe_figures(probe: Any, label: str = "Probe") -> tuple[dict[str, tuple[int, int]], Text]:
    """The probe's per-category figures and its score line (``probe``: a ProbeReport;
    ``label`` says what was probed, e.g. ``Probe (2 pinned)``)."""
    by_category = {
        name: (int(s["correct"]), int(s["total"])) for name, s in probe.categories().items()
    }
    s = probe.score()
    pct = "-" if s["percent"] is None else f"{s['percent']:.0f}%"
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(label, style="bold")
    line.append(f" {s['correct']}/{s['total']} answered right ({pct}), {s['partial']} partial")
    others = [
        f"{PROBE_LABELS.get(n, n)} {c}/{t}"
        for n, (c, t) in by_category.items()
        if n not in CATEGORY_LABELS
    ]
    if others:
        line.append(" · " + " · ".join(others))
    return by_category, line


def figures_text(
    report: RetentionReport | None,
    width: int | None = None,
    *,
    pins_line: str | None = None,
    probe: Any = None,
    probe_note: Text | None = None,
    probe_label: str = "Probe",
) -> Text:
    """One line per category: label, kept/total, percent, and how many only
    the kept tail holds; 0/0 shows a dash, never 100%. In a row narrower than
    :data:`ROW_CELLS` (``width``) the labels are cut, so the figures stay on
    their line (a three-pane diff at 80 columns). With ``pins_line``, ``report``
    is of the summary with the pinned block, and that line says so; with ``probe``
    (a ProbeReport) a ``Q correct/total`` column and the probe's score line;
    ``probe_note`` says what the probe is doing."""
    label_cells = LABEL_CELLS
    if width is not None and width < ROW_CELLS:
        label_cells = max(4, LABEL_CELLS - (ROW_CELLS - width))
    out = Text(no_wrap=True, overflow="ellipsis")
    if report is None:
        out.append("retention: no summary to score yet", style="dim")
        return out
    if report.compacted is None:
        out.append("retention: nothing is compacted", style="dim")
        return out
    first, last = report.compacted
    out.append(f"Retention of messages {first}..{last}", style="bold")
    out.append(f"   {report.kept}/{report.total} kept\n", style="dim")
    if pins_line is not None:
        out.append(f"{MARK_ON}{pins_line}\n", style="bold")
    by_probe: dict[str, tuple[int, int]] = {}
    probe_line: Text | None = probe_note
    if probe is not None:
        by_probe, probe_line = probe_figures(probe, probe_label)
    if probe_line is not None:  # near the top: a short pane still shows it
        out.append_text(probe_line)
        out.append("\n")
    critical = report.critical_line()
    if critical:
        out.append(f"{CRITICAL_MARK}{critical}\n", style="bold red")
    for name, c in report.categories.items():
        label = CATEGORY_LABELS.get(name, name)
        pct = c.percent
        style = "dim" if pct is None else "green" if pct >= 80 else "yellow" if pct >= 40 else "red"
        label = fit_cells(label, label_cells)
        out.append(f" {label}", style="bold" if c.missing else "")
        out.append(f"{c.kept_count:>4}/{c.total:<4}", style=style)
        out.append(f"{'-' if pct is None else f'{pct:.0f}%':>5}", style=style)
        if c.critical:  # a critical item lost or stated wrongly
            out.append(f" {CRITICAL_MARK.strip()}", style="bold red")
        if c.misstated:  # neither kept nor missing: said wrongly
            out.append(f"  {len(c.misstated)} misstated", style="bold red")
        asked = by_probe.get(name)
        if asked is not None and (width is None or width >= ROW_CELLS + PROBE_CELLS):
            out.append(f"  Q {asked[0]}/{asked[1]}".ljust(PROBE_CELLS))
        tail = sum(1 for _, where in c.kept if where == KEPT_IN_TAIL)
        note = f"  {tail} in kept tail" if tail else ""
        used = ROW_CELLS + (PROBE_CELLS if by_probe else 0)
        if note and (width is None or width >= used + len(note)):
            out.append(note, style="dim")  # left out where it would push the figures off
        out.append("\n")
    out.rstrip()
    return out


def item_prompt(item: Item, marked: bool, critical: bool = False) -> Text:
    label = CATEGORY_LABELS.get(item.category, item.category)
    where = ",".join(str(i + 1) for i in item.messages[:4])
    if len(item.messages) > 4:
        where += ",…"
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(MARK_ON if marked else MARK_OFF, style="bold yellow")
    if critical:
        out.append(CRITICAL_MARK, style="bold red")
    out.append(f"{label}: ", style="bold")
    out.append(one_line(item.text, 200))
    out.append(f"  #{where}", style="dim")
    return out


def misstated_prompt(wrong: Misstated, critical: bool = False) -> Text:
    """An item the summary states wrongly: the item and its messages, then the
    summary's words and what the session says (two lines)."""
    item = wrong.item
    label = CATEGORY_LABELS.get(item.category, item.category)
    where = ",".join(str(i + 1) for i in item.messages[:4])
    if len(item.messages) > 4:
        where += ",…"
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(MARK_OFF)
    if critical:
        out.append(CRITICAL_MARK, style="bold red")
    out.append("misstated ", style="bold red")
    out.append(f"{label}: ", style="bold")
    out.append(one_line(item.text, 200))
    out.append(f"  #{where}", style="dim")
    out.append(f"\n    {wrong.describe()}: ", style="bold")
    out.append(f"\u201c{one_line(wrong.statement, 200)}\u201d")
    return out


def answer_prompt(answer: Any) -> Text:
    """A question not answered right: its verdict (a word, not only a colour),
    the question, what was expected and what came back, and its messages."""
    q = answer.question
    where = ",".join(str(i + 1) for i in q.messages[:4])
    if len(q.messages) > 4:
        where += ",…"
    label = CATEGORY_LABELS.get(q.category, q.category)
    got = answer.answer if answer.answer is not None else f"(no answer: {answer.error})"
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"{answer.grade.verdict.upper():<8}", style="bold red")
    out.append(f"Q{q.number} {label}: ", style="bold")
    out.append(one_line(q.text, 160))
    out.append("  expected: ", style="dim")
    out.append(one_line(q.expected_text, 120))
    out.append("  answer: ", style="dim")
    out.append(one_line(got, 120))
    out.append(f"  #{where}", style="dim")
    return out


def listed(
    items: list[Item],
    pinned: set[int],
    critical: set[int],
    wrong: list[Misstated],
    wrong_flagged: list[Item],
    failed: list[Any],
    report: RetentionReport | None,
) -> list[Option]:
    """The pane's list: the missing items (ids ``0``, ``1``…), then under their
    headings the misstated ones (``m0``…) and the probe's wrong answers (``q0``…)."""
    out: list[Option] = []
    if not items:
        out.append(Option(Text("nothing is missing" if report is not None else "", style="dim"),
                          disabled=True))  # fmt: skip
    out += [
        Option(item_prompt(item, i in pinned, i in critical), id=str(i))
        for i, item in enumerate(items)
    ]
    if wrong:
        head = Text("misstated: the summary says otherwise (enter: its message)", style="bold")
        out.append(Option(head, disabled=True))
        out += [
            Option(misstated_prompt(m, m.item in wrong_flagged), id=f"m{i}")
            for i, m in enumerate(wrong)
        ]
    if failed:
        head = Text("probe: not answered right (enter: go to its message)", style="bold")
        out.append(Option(head, disabled=True))
        out += [Option(answer_prompt(a), id=f"q{i}") for i, a in enumerate(failed)]
    return out


def probe_failures(probe: Any) -> list[Any]:
    """A probe's answers that were not right, in the order asked."""
    from kimi_compact_tui.job.probe.grade import CORRECT

    return [a for a in probe.answers if a.grade.verdict != CORRECT]

"""Writing the six sections of the compaction contract from the session's specifics.

The summary states only what the record shows (:mod:`kimi_compact_tui.specifics`):

- ``<current_focus>``: every user request, verbatim and in order (a long one cut
  with ``…``), the last being the current one (one the agent never sent to its
  model says so); any focus the custom
  instructions ask for;
- ``<environment>``: the work folder, the programs run;
- ``<completed_tasks>``: the plan's items the agent's own plan marks completed,
  commands whose record shows success;
- ``<active_issues>``: the plan's open items with their real statuses, errors
  no later run resolved, commands that failed;
- ``<code_state>``: files written or edited, other files named, definitions;
- ``<important_context>``: instructions verbatim, what the custom instructions
  asked to keep, decisions, numbers, URLs, what was cut and why.

A checklist in the agent's prose is a proposal and never becomes a task. The
agent's bookkeeping never appears. The summary is never larger than the
messages it replaces: lines are dropped lowest weight first (user requests,
instructions and open tasks are shortened, never dropped), and
``<important_context>`` says what was cut.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kimi_compact_tui.compaction.contract import SECTIONS
from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.compaction.tokens import estimate_tokens
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers.offline.instructions import (
    Instructions,
    focus_lines,
    kept_lines,
    read_instructions,
)
from kimi_compact_tui.providers.offline.transcript import Transcript
from kimi_compact_tui.specifics import (
    CANCELLED,
    COMPLETED,
    OPEN,
    OPEN_STATUSES,
    UNSENT_STATUS,
    Item,
    Specifics,
    extract,
    kinds,
)
from kimi_compact_tui.specifics.extract import failed, succeeded

MESSAGE_OVERHEAD = 4  # tokens per message, as the app counts them
REQUEST_CHARS = (600, 240, 120, 60)  # how long a request may be, level by level
# (request characters, lines lighter than this may go): requests are shortened
# before the key facts (commands, errors, edits: weight 6 and up) are dropped.
STEPS = ((600, 6), (240, 6), (120, 6), (60, 6), (60, 8))
CRITICAL_WEIGHT = 8  # lines at least this heavy are shortened, never dropped
# The offline summary's own limit: about what a model writes at most in one answer
# (a summary of a huge session listing every request would be megabytes).
MAX_SUMMARY_TOKENS = 16_000
LATEST_REQUESTS = 20  # a very long session keeps its first and latest requests
KEY_FACTS_WEIGHT = 6  # kept when nothing fits: requests, rules, tasks, edits, commands, errors
EMPTY = {
    "current_focus": "No user request appears in the compacted messages.",
    "environment": "No environment details appear in the record.",
    "completed_tasks": "Nothing is recorded as finished: no plan item completed, "
    "no command that succeeded.",
    "active_issues": "No open plan item, unresolved error or failed command is recorded.",
    "code_state": "No file was written or named.",
}
CUT_EMPTY = "Left out to fit the budget (the Cut: line below says what)."
KIND_NAMES = {
    kinds.USER_REQUESTS: "user requests",
    kinds.INSTRUCTIONS: "instructions",
    kinds.PLAN: "plan items",
    kinds.EDITED_FILES: "edited files",
    kinds.COMMANDS: "commands",
    kinds.ERRORS: "errors",
    kinds.FILE_PATHS: "file paths",
    kinds.DECISIONS: "decisions",
    kinds.IDENTIFIERS: "identifiers",
    kinds.NUMBERS: "numbers",
    kinds.URLS: "URLs",
    "system": "system messages (kept as they are)",
}
#: The same names for a count of one ("1 system message", never "1 system messages").
KIND_NAME_ONE = {
    **{kind: name.removesuffix("s") for kind, name in KIND_NAMES.items()},
    "system": "system message (kept as it is)",
}


def cut(text: str, limit: int) -> str:
    """``text`` on one line, cut with ``…`` past ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def where(item: Item) -> str:
    numbers = [str(i + 1) for i in item.messages]
    if len(numbers) > 4:
        numbers = numbers[:2] + ["…"] + numbers[-1:]
    return f"message{'' if len(item.messages) == 1 else 's'} {', '.join(numbers)}"


@dataclass
class Line:
    """One line of a section, with the weight of what it says (its item's) and
    the kind it is cut as."""

    section: str
    text: str
    weight: int = 10
    kind: str | None = None  # counted as cut when dropped
    item: Item | None = None  # a request: shortened, not dropped


@dataclass
class Reading:
    transcript: Transcript
    specifics: Specifics
    instructions: Instructions = field(default_factory=Instructions)


def _request_line(item: Item, number: int, last: bool, chars: int) -> str:
    label = "current request" if last else f"request {number}"
    marked = f"; {UNSENT_STATUS}" if item.status == UNSENT_STATUS else ""
    return f"- {label} ({where(item)}{marked}): {cut(item.text, chars)}"


def lines_of(r: Reading, request_chars: int) -> list[Line]:
    sp = r.specifics
    out: list[Line] = []
    requests = sp.of(kinds.USER_REQUESTS)
    if requests:
        out.append(Line("current_focus", "User requests, verbatim and in order:"))
    for n, item in enumerate(requests, 1):
        text = _request_line(item, n, n == len(requests), request_chars)
        out.append(Line("current_focus", text, max(item.weight, 8), kinds.USER_REQUESTS, item))
    for text in focus_lines(r.instructions, r.transcript.compacted, 4, 240):
        out.append(Line("current_focus", text if text.startswith("-") else f"- {text}", 9))

    for m in r.transcript.messages[: r.transcript.leading]:
        if m.own_text.strip():
            line = f"- System message {m.number} (kept as it is): {cut(m.own_text, 240)}"
            out.append(Line("environment", line, 4, "system"))
    if sp.root:
        out.append(Line("environment", f"- Work folder: {sp.root.rstrip('/')}", 5))
    programs = Counter(i.key.split()[0] for i in sp.of(kinds.COMMANDS) if i.key.split())
    if programs:
        names = ", ".join(p for p, _ in programs.most_common(8))
        out.append(Line("environment", f"- Programs run: {names}", 3))

    plan = sp.of(kinds.PLAN)
    plan_at = f"the plan of message {sp.plan_message + 1}" if sp.plan_message is not None else ""
    for item in plan:
        if item.status == COMPLETED:
            line = f"- [completed] {item.text} ({plan_at})"
            out.append(Line("completed_tasks", line, item.weight, kinds.PLAN))
    for item in sp.of(kinds.COMMANDS):
        if succeeded(item.status):
            line = f"- Ran `{item.text}`: {item.status} ({where(item)})"
            out.append(Line("completed_tasks", line, 5, kinds.COMMANDS))

    for item in plan:
        if item.status in OPEN_STATUSES:
            line = f"- [{item.status}] {item.text} ({plan_at})"
            out.append(Line("active_issues", line, item.weight, kinds.PLAN))
    for item in plan:
        if item.status == CANCELLED:
            out.append(Line("active_issues", f"- [cancelled] {item.text}", 3, kinds.PLAN))
    for item in sp.of(kinds.ERRORS):
        if item.status == OPEN:
            line = f"- Unresolved error ({where(item)}): {item.text}"
            out.append(Line("active_issues", line, item.weight, kinds.ERRORS))
    for item in sp.of(kinds.COMMANDS):
        if failed(item.status) and not item.extra:
            line = f"- Command `{item.text}`: {item.status} ({where(item)})"
            out.append(Line("active_issues", line, 6, kinds.COMMANDS))
    for item in sp.of(kinds.ERRORS):
        if item.status != OPEN:
            line = f"- Resolved later: {item.text} ({where(item)})"
            out.append(Line("active_issues", line, item.weight, kinds.ERRORS))

    for item in sp.of(kinds.COMMANDS):
        if failed(item.status) and item.extra:
            line = f"- Ran `{item.text}`: {item.status}, fixed later ({where(item)})"
            out.append(Line("code_state", line, 4, kinds.COMMANDS))
        elif item.status is None:
            line = f"- Ran `{item.text}` ({where(item)}; no result recorded)"
            out.append(Line("code_state", line, 4, kinds.COMMANDS))

    edited = {i.key for i in sp.of(kinds.EDITED_FILES)}
    if edited:
        out.append(Line("code_state", "Files written or edited:", 7))
        for item in sp.of(kinds.EDITED_FILES):
            line = f"- {item.text} ({item.status or 'edited'}; {where(item)})"
            out.append(Line("code_state", line, 7, kinds.EDITED_FILES))
    named = [i for i in sp.of(kinds.FILE_PATHS) if i.key not in edited]
    if named:
        out.append(Line("code_state", "Other files named (not written here):", 3))
        for item in named[:30]:
            out.append(Line("code_state", f"- {item.text} ({where(item)})", 3, kinds.FILE_PATHS))
    idents = [i.text for i in sp.of(kinds.IDENTIFIERS)]
    if idents:
        out.append(Line("code_state", "- Definitions written: " + ", ".join(idents[:20]), 2))

    instructions = sp.of(kinds.INSTRUCTIONS)
    if instructions:
        out.append(Line("important_context", "Instructions, verbatim:", 9))
    for item in instructions:
        line = f"- ({where(item)}) {cut(item.text, max(request_chars, 240))}"
        out.append(Line("important_context", line, item.weight, kinds.INSTRUCTIONS, item))
    for text in kept_lines(r.instructions):
        out.append(Line("important_context", text if text.startswith("  - ") else f"- {text}", 9))
    for kind, label, limit in ((kinds.DECISIONS, "Decision", 12), (kinds.URLS, "URL", 10)):
        for item in sp.of(kind)[-limit:]:
            line = f"- {label} ({where(item)}): {cut(item.text, 240)}"
            out.append(Line("important_context", line, item.weight, kind))
    numbers = sp.of(kinds.NUMBERS)[-16:]
    if numbers:
        text = "- Figures seen: " + ", ".join(f"{i.text} ({where(i)})" for i in numbers)
        out.append(Line("important_context", text, 1, kinds.NUMBERS))
    return out


def _footer(r: Reading, cut_note: str | None) -> list[str]:
    out = []
    if cut_note:
        out.append(f"- {cut_note}")
    if r.instructions:
        out.append(f"- {r.instructions.note()}")
    everything = r.transcript.compacted
    if everything:
        roles = Counter(m.role for m in everything)
        counts = ", ".join(f"{n} {role}" for role, n in roles.items())
        out.append(
            f"- Offline extractive summary (no model wrote it) of messages "
            f"{everything[0].number}–{everything[-1].number} ({counts}); the agent's "
            "bookkeeping left out."
        )
    else:
        out.append("- Offline extractive summary (no model wrote it); the transcript was empty.")
    return out


def write(
    r: Reading, lines: list[Line], cut_note: str | None = None, *, had: list[Line] | None = None
) -> str:
    """The six sections of ``lines``; ``had``: the lines before any was cut, so a
    section whose lines were all cut says so instead of claiming there were none."""
    out: list[str] = []
    cut = {ln.section for ln in had or ()}
    for name in SECTIONS:
        body = [ln.text for ln in lines if ln.section == name]
        if name == "important_context":
            body += _footer(r, cut_note)
        elif not body:
            body = [f"- {CUT_EMPTY if name in cut else EMPTY[name]}"]
        out += [f"<{name}>", *body, f"</{name}>", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def summary_cost(summary: str) -> int:
    """Estimated tokens of the summary message as it will be written."""
    return estimate_tokens(build_compact_summary_text(summary)) + MESSAGE_OVERHEAD


def replaced_tokens(transcript: Transcript) -> int:
    """Estimated tokens of the text of the messages the summary replaces."""
    return sum(
        MESSAGE_OVERHEAD + sum(estimate_tokens(p) for p in m.parts) for m in transcript.compacted
    )


@dataclass(frozen=True)
class Summary:
    """The written summary and how its size compares with what it replaces."""

    text: str
    cost: int  # estimated tokens of the summary message
    budget: int  # estimated tokens of the text of the compacted messages
    trimmed: bool

    @property
    def fits(self) -> bool:
        return self.cost <= self.budget


def _cut_note(dropped: Counter[str], chars: int, longest: int = 0) -> str | None:
    parts = [
        f"{n} {(KIND_NAME_ONE if n == 1 else KIND_NAMES).get(k, k)}"
        for k, n in dropped.most_common()
    ]
    notes = []
    if parts:
        notes.append("left out to fit the budget, lowest weight first: " + ", ".join(parts))
    if chars < REQUEST_CHARS[0] and longest > chars:
        notes.append(f"requests and instructions cut at {chars} characters")
    if not notes:
        return None
    return "Cut: " + "; ".join(notes) + "."


def specifics_from_transcript(transcript: Transcript) -> Specifics:
    """The specifics when the request came without them (a bare body): read
    from the request's text alone, so no tool call is seen."""
    messages = [Message.make(m.role, m.own_text) for m in transcript.messages]
    return extract(messages, range(transcript.leading, len(messages)))


def summarize(transcript: Transcript, specifics: Specifics | None = None) -> Summary:
    """The six-section summary of ``transcript`` from ``specifics`` (read from the
    transcript when not given), never larger than the messages it replaces (nor
    than :data:`MAX_SUMMARY_TOKENS`) when it can help it: requests are shortened,
    lower weights dropped first, then (a huge session) the requests between the
    first and the latest; when even that is too much, it says so."""
    if specifics is None:
        specifics = specifics_from_transcript(transcript)
    all_text = "\n".join(m.own_text for m in transcript.messages)
    r = Reading(transcript, specifics, read_instructions(transcript.instruction, all_text))
    budget = replaced_tokens(transcript)
    limit = min(budget, MAX_SUMMARY_TOKENS)
    lines = lines_of(r, REQUEST_CHARS[0])
    text = write(r, lines)
    if summary_cost(text) <= limit or not transcript.compacted:
        return Summary(text, summary_cost(text), budget, False)
    dropped: Counter[str] = Counter()
    kept = lines
    longest = max((len(i.text) for i in specifics.of(kinds.USER_REQUESTS)), default=0)
    for chars, floor in STEPS:
        lines = lines_of(r, chars)
        order = sorted(
            (i for i, ln in enumerate(lines) if ln.weight < floor),
            key=lambda i: (lines[i].weight, -i),
        )
        dropped = Counter()
        removed: set[int] = set()
        over = summary_cost(write(r, lines, _cut_note(dropped, chars, longest))) + 40 - limit
        for i in order:  # by estimate first, then checked
            if over <= 0:
                break
            removed.add(i)
            over -= estimate_tokens(lines[i].text) + 1
            kind = lines[i].kind
            if kind:
                dropped[kind] += 1
        rest = [i for i in order if i not in removed]
        while True:
            kept = [ln for k, ln in enumerate(lines) if k not in removed]
            text = write(r, kept, _cut_note(dropped, chars, longest), had=lines)
            if summary_cost(text) <= limit:
                return Summary(text, summary_cost(text), budget, True)
            if not rest:
                break
            i = rest.pop(0)
            removed.add(i)
            kind = lines[i].kind
            if kind:
                dropped[kind] += 1
    # Nothing fits: the key facts (weight 6 and up) at the shortest; then, for a
    # very long session, the requests in the middle go (the first and the latest
    # stay), and the summary says which.
    lines = lines_of(r, REQUEST_CHARS[-1])
    # a short range keeps its key facts (and says it is larger); a huge one, which
    # hits the offline limit, keeps its requests, rules and open tasks
    floor = KEY_FACTS_WEIGHT if limit == budget else CRITICAL_WEIGHT
    kept = [ln for ln in lines if ln.weight >= floor]
    dropped = Counter(ln.kind for ln in lines if ln.weight < floor and ln.kind)
    note = _cut_note(dropped, REQUEST_CHARS[-1], longest) or "Cut:"
    text = write(r, kept, note, had=lines)
    requests = [k for k, ln in enumerate(kept) if ln.kind == kinds.USER_REQUESTS]
    if summary_cost(text) > limit and len(requests) > LATEST_REQUESTS + 1:
        middle = requests[1:-LATEST_REQUESTS]
        gone: set[int] = set()
        base = note
        while middle and summary_cost(text) > limit:
            over = summary_cost(text) - limit
            while middle and over > 0:
                k = middle.pop(0)
                gone.add(k)
                over -= estimate_tokens(kept[k].text) + 1
            first = kept[min(gone)].item
            last = kept[max(gone)].item
            span = f"messages {first.first + 1}–{last.first + 1}" if first and last else ""
            note = base + (
                f" {len(gone)} user requests ({span}) left out: too many to list within "
                "the budget; the first and the latest are kept."
            )
            text = write(r, [ln for k, ln in enumerate(kept) if k not in gone], note, had=lines)
        kept = [ln for k, ln in enumerate(kept) if k not in gone]
    if note == "Cut:":
        note = "Cut: nothing."
    if summary_cost(text) > budget:
        note += (
            " Even so this summary is larger than the compacted messages (about "
            f"{budget} tokens): they are shorter than any six-section summary of their key facts."
        )
        text = write(r, kept, note, had=lines)
    elif summary_cost(text) > limit:
        note += f" Even so this summary is over the offline limit of {limit} tokens."
        text = write(r, kept, note, had=lines)
    return Summary(text, summary_cost(text), budget, True)

"""Writing the six sections of the compaction contract from the session's specifics.

The summary states only what the record shows (:mod:`kimi_compact_tui.specifics`),
so that an agent can continue from it:

- ``<current_focus>``: every user request whole, verbatim and in order, the
  last being the current one (one the agent never sent to its model says so); the current work and the next step; any focus
  the custom instructions ask for;
- ``<environment>``: the leading system messages, the work folder, the
  programs run;
- ``<completed_tasks>``: the plan's items the agent's own plan marks
  completed, the commands that mattered and succeeded, with their results;
  exploratory reads (``cat``, ``rg``, ``sed -n``, ``ls``…) as a count;
- ``<active_issues>``: the plan's open items with their real statuses, each
  failed command on one line with the errors it showed, errors no later run
  resolved, and the resolved ones with what fixed them;
- ``<code_state>``: files written or edited (never a refused write), other
  files named, definitions, commands with no result recorded;
- ``<important_context>``: instructions verbatim, what the custom
  instructions asked to keep, what the assistant concluded (its last words
  per turn) and the designs the person accepted (never one they rejected),
  URLs, figures, and what was cut.

A checklist in the agent's prose is a proposal and never becomes a task. The
agent's bookkeeping never appears. The critical lines (requests,
instructions, open tasks, the current work and the next step) are written
whole; the other lines fill what is left of the budget by weight, the
latest first within a weight, and ``<important_context>`` says what was cut.
The budget is the messages the summary replaces (and at most
:data:`MAX_SUMMARY_TOKENS` for the lines that are not critical); when the
critical lines alone are larger than what they replace, the summary says so
first, at the top.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable
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
from kimi_compact_tui.providers.offline.transcript import TMessage, Transcript
from kimi_compact_tui.specifics import (
    CANCELLED,
    COMPLETED,
    IN_PROGRESS,
    OPEN,
    OPEN_STATUSES,
    UNSENT_STATUS,
    Item,
    Specifics,
    extract,
    kinds,
)
from kimi_compact_tui.specifics.collect import ACCEPTED, NOT_ANSWERED, REJECTED
from kimi_compact_tui.specifics.extractor import failed, succeeded

MESSAGE_OVERHEAD = 4  # tokens per message, as the app counts them
# The lines that are not critical take at most this much: about what a model
# writes at most in one answer.
MAX_SUMMARY_TOKENS = 16_000
# The critical lines are written whole up to this much (about the largest context
# a model resumes with); past it, the first and the latest requests stay and the
# summary says how many between were left out.
CRITICAL_LIMIT = 200_000
KEY_FACTS_WEIGHT = 6  # failed commands, edited files, open errors, the latest conclusion
KEY_FACTS_ROOM = 300  # tokens the key facts may take past a short range's budget
LATEST_REQUESTS = 20  # over CRITICAL_LIMIT: the latest requests kept besides the first
FINDINGS = 6  # the assistant's last words of this many turns
FINDING_CHARS = (1200, 400)  # the latest turn's, the others'
CRITICAL = 100  # the weight of a line that is never cut
EMPTY = {
    "current_focus": "No user request in the compacted messages.",
    "environment": "None recorded.",
    "completed_tasks": "Nothing is recorded as finished.",
    "active_issues": "None recorded.",
    "code_state": "No file was written or named.",
}
CUT_EMPTY = "Left out to fit (see Cut: below)."
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
    "findings": "conclusions of earlier turns",
    "system": "system messages (kept as they are)",
}
# Programs that only read: a command of these alone (or piped into each other)
# is an exploratory read, counted rather than listed.
READERS = frozenset(
    "cat head tail less more bat nl ls tree find fd rg grep egrep fgrep ag wc pwd which "
    "file stat du echo type realpath readlink sort uniq cut jq awk".split()
)
GIT_READS = frozenset("status log show branch blame ls-files rev-parse".split())
PIPE_RE = re.compile(r"\s*(?:\|\||&&|\||;)\s*")
ASSIGN_RE = re.compile(r"^[A-Za-z_]\w*=")
NEXT_RE = re.compile(
    r"\b(?:next,? I(?:'ll| will)|next step|then I(?:'ll| will)|I(?:'ll| will) now|"
    r"remaining:|still (?:need|to do)|TODO)\b|接下来|下一步",
    re.I,
)
#: The same names for a count of one ("1 system message", never "1 system messages").
KIND_NAME_ONE = {
    **{kind: name.removesuffix("s") for kind, name in KIND_NAMES.items()},
    "system": "system message (kept as it is)",
    "findings": "conclusion of an earlier turn",
}


def cut(text: str, limit: int) -> str:
    """``text`` on one line, cut with ``…`` past ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def flat(text: str) -> str:
    return " ".join(text.split())


def where(item: Item) -> str:
    return at(item.messages)


def at(indices: list[int]) -> str:
    if len(indices) > 4:  # the first two and the last: the others are never written
        numbers = [str(indices[0] + 1), str(indices[1] + 1), "…", str(indices[-1] + 1)]
    else:
        numbers = [str(i + 1) for i in indices]
    return f"message{'' if len(indices) == 1 else 's'} {', '.join(numbers)}"


def exploratory(key: str) -> bool:
    """A command that only reads (``cat``, ``rg``, ``sed -n``, ``git status``…)."""
    steps = [s for s in PIPE_RE.split(key) if s]
    if not steps:
        return False
    for step in steps:
        words = [w for w in step.split() if not ASSIGN_RE.match(w)]
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        if name == "cd":
            continue
        if name == "sed":
            if "-n" in words and not any(w.startswith("-i") for w in words):
                continue
            return False
        if name == "git":
            if len(words) > 1 and words[1] in GIT_READS:
                continue
            return False
        if name not in READERS:
            return False
    return True


@dataclass
class Line:
    """One line of a section, with the weight of what it says (:data:`CRITICAL`:
    never cut), the kind it is counted as when cut, and how recent it is (the
    latest is kept first within a weight). ``group`` names the header written
    before the first line of its group that is kept."""

    section: str
    text: str
    weight: int = 10
    kind: str | None = None
    recency: int = 0
    group: str | None = None
    item: Item | None = None
    _cost: int | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def cost(self) -> int:
        """Estimated tokens of the line (counted once: a line's text never changes)."""
        cost = self._cost
        if cost is None:
            cost = self._cost = estimate_tokens(self.text) + 1
        return cost


@dataclass
class Reading:
    transcript: Transcript
    specifics: Specifics
    instructions: Instructions = field(default_factory=Instructions)
    role_counts: str | None = None  # the footer's "N user, M assistant"


def latest(item: Item) -> int:
    return item.messages[-1] if item.messages else 0


# ----------------------------------------------------------------------------- the lines


def focus(r: Reading) -> list[Line]:
    sp = r.specifics
    out: list[Line] = []
    requests = sp.of(kinds.USER_REQUESTS)
    heading = "User requests, verbatim and in order:"
    for n, item in enumerate(requests, 1):
        label = "current request" if n == len(requests) else f"request {n}"
        marked = f"; {UNSENT_STATUS}" if item.status == UNSENT_STATUS else ""
        text = f"- {label} ({where(item)}{marked}): {flat(item.text)}"
        out.append(Line("current_focus", text, CRITICAL, kinds.USER_REQUESTS, n, heading, item))
    for text in focus_lines(r.instructions, r.transcript.compacted, 4, 240):
        out.append(Line("current_focus", text if text.startswith("-") else f"- {text}", 9))
    out += current_work(sp, requests)
    return out


def current_work(sp: Specifics, requests: list[Item]) -> list[Line]:
    """The current work and the next step, from the last request, the plan and
    the assistant's last words."""
    out: list[Line] = []
    plan = sp.of(kinds.PLAN)
    doing = [i for i in plan if i.status == IN_PROGRESS]
    todo = [i for i in plan if i.status in OPEN_STATUSES]
    last = sp.findings[-1] if sp.findings else None
    parts = []
    if requests:
        replied = last is not None and last[0] > requests[-1].first
        reply = f", answered in message {last[0] + 1}" if replied and last else ""
        parts.append(f"the current request ({where(requests[-1])}{reply})")
    if doing:
        parts.append("in progress: " + "; ".join(i.text for i in doing))
    if parts:
        out.append(Line("current_focus", "- Current work: " + "; ".join(parts) + ".", CRITICAL))
    if todo:
        step = (
            ", then ".join(f"{i.text} ({(i.status or '').replace('_', ' ')})" for i in todo[:2])
            + " in the agent's plan"
        )
    elif requests and requests[-1].status == NOT_ANSWERED:
        step = "answer the current request: the agent has not replied to it yet"
    else:
        stated = next_stated(last[1]) if last is not None else None
        step = (
            f"as the assistant said: {stated}"
            if stated
            else "none recorded (the last request was answered)"
        )
    if requests or todo or last is not None:
        out.append(Line("current_focus", f"- Next step: {step}.", CRITICAL))
    return out


def next_stated(text: str) -> str | None:
    """The assistant's own sentence about what comes next, if it wrote one."""
    for s in re.split(r"(?<=[.!?。！？])\s+", text):
        if NEXT_RE.search(s):
            return cut(s.rstrip("."), 300)
    return None


def environment(r: Reading) -> list[Line]:
    sp = r.specifics
    out: list[Line] = []
    for m in r.transcript.messages[: r.transcript.leading]:
        if m.own_text.strip():
            line = f"- System message {m.number} (kept as it is): {cut(m.own_text, 240)}"
            out.append(Line("environment", line, 4, "system", m.number))
    if sp.root:
        out.append(Line("environment", f"- Work folder: {sp.root.rstrip('/')}", 5))
    programs = Counter(i.key.split()[0] for i in sp.of(kinds.COMMANDS) if i.key.split())
    if programs:
        names = ", ".join(p for p, _ in programs.most_common(8))
        out.append(Line("environment", f"- Programs run: {names}", 3))
    return out


def plan_where(sp: Specifics, item: Item) -> str:
    if sp.plan_message is not None and item.first == sp.plan_message:
        return f"the plan of message {sp.plan_message + 1}"
    return f"a TODO of {where(item)}"  # a TODO: line of a request


def tasks(r: Reading) -> list[Line]:
    sp = r.specifics
    out: list[Line] = []
    plan = sp.of(kinds.PLAN)
    for item in plan:
        if item.status == COMPLETED:
            line = f"- [completed] {item.text} ({plan_where(sp, item)})"
            out.append(Line("completed_tasks", line, item.weight, kinds.PLAN, latest(item)))
    commands = sp.of(kinds.COMMANDS)
    reads = [i for i in commands if exploratory(i.key)]
    for item in commands:
        if succeeded(item.status) and item not in reads:
            line = f"- Ran `{item.text}`: {item.status} ({where(item)})"
            out.append(Line("completed_tasks", line, 5, kinds.COMMANDS, latest(item)))
    if reads:
        names = Counter(i.key.split()[0] for i in reads)
        line = (
            f"- {len(reads)} exploratory read{'s' if len(reads) != 1 else ''} "
            f"({', '.join(n for n, _ in names.most_common(6))}) not listed one by one"
        )
        out.append(Line("completed_tasks", line, 4))
    for item in plan:
        if item.status in OPEN_STATUSES:
            line = f"- [{item.status}] {item.text} ({plan_where(sp, item)})"
            out.append(Line("active_issues", line, CRITICAL, kinds.PLAN, latest(item)))
    for item in plan:
        if item.status == CANCELLED:
            line = f"- [cancelled] {item.text}"
            out.append(Line("active_issues", line, 3, kinds.PLAN, latest(item)))
    return out


def issues(r: Reading) -> list[Line]:
    """Each failed command on one line with the errors it showed, then the errors
    no command carries; a resolved one with what fixed it."""
    sp = r.specifics
    errors = {i.key: i for i in sp.of(kinds.ERRORS)}
    told: set[str] = set()
    out: list[Line] = []
    for item in sp.of(kinds.COMMANDS):
        if not failed(item.status):
            continue
        causes = [errors[k] for k in sp.causes.get(item.key, ()) if k in errors]
        told.update(c.key for c in causes)
        shown = "; ".join(c.text for c in causes)
        what = f"`{item.text}`: {item.status}" + (f": {shown}" if shown else "")
        if item.extra:  # fixed later
            fix = next((sp.fixes[c.key] for c in causes if c.key in sp.fixes), "")
            line = f"- Resolved later: {what} ({where(item)})" + (
                f"; fixed by {fix}" if fix else ""
            )
            out.append(Line("active_issues", line, 4, kinds.COMMANDS, latest(item)))
        else:
            line = f"- Failed: {what} ({where(item)})"
            out.append(Line("active_issues", line, 7, kinds.COMMANDS, latest(item)))
    # the errors no command carries: those of one message and one outcome on one line
    together: dict[tuple[str, bool, str], list[Item]] = {}
    for item in errors.values():
        if item.key not in told:
            fix = sp.fixes.get(item.key, "")
            together.setdefault((where(item), item.status == OPEN, fix), []).append(item)
    for (place, still_open, fix), items in together.items():
        what = "; ".join(i.text for i in items)
        weight = max(i.weight for i in items)
        if still_open:
            line = f"- Unresolved error ({place}): {what}"
        else:
            line = f"- Resolved later: {what} ({place})" + (f"; fixed by {fix}" if fix else "")
        out.append(Line("active_issues", line, weight, kinds.ERRORS, latest(items[-1])))
    return out


def code(r: Reading) -> list[Line]:
    sp = r.specifics
    out: list[Line] = []
    for item in sp.of(kinds.COMMANDS):
        if item.status is None:
            line = f"- Ran `{item.text}` ({where(item)}; no result recorded)"
            out.append(Line("code_state", line, 4, kinds.COMMANDS, latest(item)))
    edited = {i.key for i in sp.of(kinds.EDITED_FILES)}
    head = "Files written or edited:"
    for item in sp.of(kinds.EDITED_FILES):
        line = f"- {item.text} ({item.status or 'edited'}; {where(item)})"
        out.append(Line("code_state", line, 7, kinds.EDITED_FILES, latest(item), head))
    head = "Other files named (not written here):"
    for item in sp.of(kinds.FILE_PATHS):
        if item.key not in edited:
            line = f"- {item.text} ({where(item)})"
            out.append(Line("code_state", line, 3, kinds.FILE_PATHS, latest(item), head))
    for item in sp.of(kinds.IDENTIFIERS):
        line = f"- Definition written: {item.text} ({where(item)})"
        out.append(Line("code_state", line, 2, kinds.IDENTIFIERS, latest(item)))
    return out


def context(r: Reading) -> list[Line]:
    sp = r.specifics
    out: list[Line] = []
    head = "Instructions, verbatim:"
    for item in sp.of(kinds.INSTRUCTIONS):
        line = f"- ({where(item)}) {flat(item.text)}"
        out.append(Line("important_context", line, CRITICAL, kinds.INSTRUCTIONS, 0, head, item))
    for text in kept_lines(r.instructions):
        out.append(Line("important_context", text if text.startswith("  - ") else f"- {text}", 9))
    head = "What the assistant concluded (its last words of each turn, the latest last):"
    findings = sp.findings[-FINDINGS:]
    for n, (index, text) in enumerate(findings, 1):
        chars = FINDING_CHARS[0] if n == len(findings) else FINDING_CHARS[1]
        weight = 6 if n == len(findings) else 4
        line = f"- (message {index + 1}) {cut(text, chars)}"
        out.append(Line("important_context", line, weight, "findings", index, head))
    said = " ".join(text for _, text in findings)
    for item in sp.of(kinds.DECISIONS):
        if item.status == REJECTED:
            continue  # an approach the person turned down is no decision
        if item.status != ACCEPTED and flat(item.text) in said:
            continue  # already in the conclusions above
        label = "Design the user accepted" if item.status == ACCEPTED else "Decision"
        line = f"- {label} ({where(item)}): {item.text}"
        weight = 5 if item.status == ACCEPTED else item.weight
        out.append(Line("important_context", line, weight, kinds.DECISIONS, latest(item)))
    for item in sp.of(kinds.URLS):
        line = f"- URL ({where(item)}): {item.text}"
        out.append(Line("important_context", line, item.weight, kinds.URLS, latest(item)))
    for item in sp.of(kinds.NUMBERS):
        line = f"- Figure ({where(item)}): {item.text}"
        out.append(Line("important_context", line, item.weight, kinds.NUMBERS, latest(item)))
    return out


def lines_of(r: Reading) -> list[Line]:
    return [*focus(r), *environment(r), *tasks(r), *issues(r), *code(r), *context(r)]


# ----------------------------------------------------------------------------- writing


def _footer(r: Reading, cut_note: str | None) -> list[str]:
    out = []
    if cut_note:
        out.append(f"- {cut_note}")
    if r.instructions:
        out.append(f"- {r.instructions.note()}")
    everything = r.transcript.compacted
    if everything:
        if r.role_counts is None:  # counted once, however often the sections are written
            roles = Counter(m.role for m in everything)
            r.role_counts = ", ".join(f"{n} {role}" for role, n in roles.items())
        out.append(
            f"- Offline extractive summary (no model wrote it) of messages "
            f"{everything[0].number}–{everything[-1].number} ({r.role_counts})."
        )
    else:
        out.append("- Offline extractive summary (no model wrote it); the transcript was empty.")
    return out


def write(
    r: Reading,
    lines: list[Line],
    cut_note: str | None = None,
    *,
    had: Iterable[Line] | None = None,
    first: str | None = None,
) -> str:
    """The six sections of ``lines`` (each group's header before its first line);
    ``had``: the lines before any was cut, so a section whose lines were all cut
    says so instead of claiming there were none; ``first``: a note written
    before everything (the summary is larger than what it replaces)."""
    out: list[str] = []
    cut_sections = {ln.section for ln in had or ()}
    for name in SECTIONS:
        body: list[str] = []
        if first and name == SECTIONS[0]:
            body.append(f"- {first}")
        group = None
        for ln in lines:
            if ln.section != name:
                continue
            if ln.group is not None and ln.group != group:
                body.append(ln.group)
            group = ln.group
            body.append(ln.text)
        if name == "important_context":
            body += _footer(r, cut_note)
        elif not body:
            body = [f"- {CUT_EMPTY if name in cut_sections else EMPTY[name]}"]
        out += [f"<{name}>", *body, f"</{name}>", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def summary_cost(summary: str) -> int:
    """Estimated tokens of the summary message as it will be written."""
    return estimate_tokens(build_compact_summary_text(summary)) + MESSAGE_OVERHEAD


def replaced_tokens(transcript: Transcript) -> int:
    """Estimated tokens of the text of the messages the summary replaces."""
    return Replaced(transcript.compacted).total()


class Replaced:
    """The estimated tokens of the text of the messages the summary replaces,
    added up only as far as a question needs: a long range's total is far past
    what a summary may take, and is rarely wanted whole."""

    def __init__(self, messages: list[TMessage]) -> None:
        self._messages = messages
        self._read = 0  # messages added up so far
        self._sum = 0

    def capped(self, limit: int) -> int:
        """``min(total, limit)``."""
        messages, at, total = self._messages, self._read, self._sum
        while total < limit and at < len(messages):
            total += MESSAGE_OVERHEAD + sum(estimate_tokens(p) for p in messages[at].parts)
            at += 1
        self._read, self._sum = at, total
        return min(total, limit)

    def total(self) -> int:
        return self.capped(sys.maxsize)


@dataclass(frozen=True)
class Summary:
    """The written summary and how its size compares with what it replaces."""

    text: str
    cost: int  # estimated tokens of the summary message
    replaced: Replaced = field(compare=False, repr=False)
    trimmed: bool

    @property
    def budget(self) -> int:
        """Estimated tokens of the text of the compacted messages."""
        return self.replaced.total()

    @property
    def fits(self) -> bool:
        return self.replaced.capped(self.cost) >= self.cost  # cost <= budget


def _cut_note(dropped: Counter[str], requests_gone: str = "") -> str | None:
    parts = [
        f"{n} {(KIND_NAME_ONE if n == 1 else KIND_NAMES).get(k, k)}"
        for k, n in dropped.most_common()
    ]
    notes = []
    if parts:
        notes.append("left out to fit the budget, lowest weight first: " + ", ".join(parts))
    if requests_gone:
        notes.append(requests_gone)
    return ("Cut: " + "; ".join(notes) + ".") if notes else None


def specifics_from_transcript(transcript: Transcript) -> Specifics:
    """The specifics when the request came without them (a bare body): read
    from the request's text alone, so no tool call is seen."""
    messages = [Message.make(m.role, m.own_text) for m in transcript.messages]
    return extract(messages, range(transcript.leading, len(messages)))


def _over_critical(critical: list[Line]) -> tuple[list[Line], str]:
    """The critical lines within :data:`CRITICAL_LIMIT`: past it, the requests
    between the first and the latest go, and the note says which."""
    total = sum(ln.cost for ln in critical)
    if total <= CRITICAL_LIMIT:
        return critical, ""
    requests = [k for k, ln in enumerate(critical) if ln.kind == kinds.USER_REQUESTS]
    middle = requests[1:-LATEST_REQUESTS]
    gone: set[int] = set()
    for k in middle:
        if total <= CRITICAL_LIMIT:
            break
        gone.add(k)
        total -= critical[k].cost
    if not gone:
        return critical, ""
    items = [critical[k].item for k in sorted(gone)]
    span = f"messages {items[0].first + 1}–{items[-1].first + 1}" if items[0] and items[-1] else ""
    note = (
        f"{len(gone)} user requests ({span}) left out: too many to write whole within "
        f"{CRITICAL_LIMIT:,} tokens; the first and the latest are kept"
    )
    return [ln for k, ln in enumerate(critical) if k not in gone], note


def summarize(transcript: Transcript, specifics: Specifics | None = None) -> Summary:
    """The six-section summary of ``transcript`` from ``specifics`` (read from the
    transcript when not given): the critical lines whole, the others by weight
    within the budget (the messages it replaces, at most :data:`MAX_SUMMARY_TOKENS`
    for them), saying what was cut, and first of all when it is larger than the
    messages it replaces."""
    if specifics is None:
        specifics = specifics_from_transcript(transcript)
    # the messages' text is only read to follow a custom instruction
    instruction = transcript.instruction
    all_text = "\n".join(m.own_text for m in transcript.messages) if instruction.strip() else ""
    r = Reading(transcript, specifics, read_instructions(instruction, all_text))
    replaced = Replaced(transcript.compacted)
    lines = lines_of(r)
    critical = [ln for ln in lines if ln.weight >= CRITICAL]
    critical, requests_gone = _over_critical(critical)
    rest = [ln for ln in lines if ln.weight < CRITICAL]
    # the tags, the notice and the footer (not the notes of sections left empty)
    skeleton = summary_cost(write(r, [], _cut_note(Counter({"x": 1}), requests_gone)))
    skeleton -= sum(estimate_tokens(f"- {e}") + 1 for e in EMPTY.values())
    heads = {ln.group for ln in critical if ln.group}
    used = skeleton + sum(ln.cost for ln in critical) + sum(estimate_tokens(h) + 1 for h in heads)
    # min(budget, used + MAX) - used is min(budget - used, MAX): the total is
    # added up no further than that
    capped = replaced.capped(used + MAX_SUMMARY_TOKENS)
    room = capped - used if transcript.compacted else 0
    # a short range keeps its key facts even so (and says it is larger)
    key_room = max(0, KEY_FACTS_ROOM - max(room, 0)) if transcript.compacted else 0
    chosen: set[int] = set()
    key_taken = 0
    for ln in sorted(rest, key=lambda ln: (-ln.weight, -ln.recency)):
        cost = ln.cost
        if ln.group is not None and ln.group not in heads:
            cost += estimate_tokens(ln.group) + 1  # its group's header comes with it
        if cost <= room:
            room -= cost
        elif ln.weight >= KEY_FACTS_WEIGHT and cost <= key_room:
            key_room -= cost
            key_taken += cost
        else:
            continue
        chosen.add(id(ln))
        if ln.group is not None:
            heads.add(ln.group)
    # past a short range's budget for its key facts: said first; else the estimate
    # per line is checked against the text and the lightest lines go while it ran short
    target = None if key_taken else capped
    while True:
        kept_ids = {id(ln) for ln in critical} | chosen
        kept = [ln for ln in lines if id(ln) in kept_ids]
        dropped = Counter(ln.kind or "other" for ln in rest if id(ln) not in chosen)
        note = _cut_note(dropped, requests_gone)
        text = write(r, kept, note, had=lines)
        cost = summary_cost(text)
        if target is None or cost <= target or not chosen:
            break
        # the estimate per line ran short: drop the lightest, oldest chosen line
        lightest = min(
            (ln for ln in rest if id(ln) in chosen), key=lambda ln: (ln.weight, ln.recency)
        )
        chosen.discard(id(lightest))
    trimmed = bool(dropped) or bool(requests_gone)
    if replaced.capped(cost) < cost and transcript.compacted:  # cost > budget
        first = (
            f"Note: this summary (about {cost} tokens) is larger than the messages it "
            f"replaces (about {replaced.total()} tokens): the requests, rules and open tasks it keeps "
            "whole, and the key facts, take more than that."
        )
        text = write(r, kept, note, had=lines, first=first)
        cost = summary_cost(text)
    return Summary(text, cost, replaced, trimmed)

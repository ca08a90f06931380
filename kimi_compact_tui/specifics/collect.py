"""One collector per kind of specific, each reading the shared walk
(:mod:`.walk`): requests, instructions, the plan, commands and their results,
files written, errors, paths, decisions, identifiers, numbers and URLs, and the
items an earlier summary's anchor block carried."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from typing import Any

from kimi_compact_tui.sanitize import plain_text
from kimi_compact_tui.specifics import kinds
from kimi_compact_tui.specifics.declare import (
    OPEN_STATUSES,
    PENDING,
    UNSENT_STATUS,
    PlanShape,
    plan_status,
)
from kimi_compact_tui.specifics.items import OPEN, RESOLVED, Buckets, Item
from kimi_compact_tui.specifics.patterns import (
    DEFINITION_RE,
    DIFF_ADDED_RE,
    ERROR_HINTS,
    EXIT_RE,
    FENCE_RE,
    GENERIC_ERRORS,
    NO_FIGURES,
    SYSTEM_TAG_RE,
    TEST_ID_RE,
    TRACEBACK_START,
    TRACEBACK_TAIL_RE,
    URL_RE,
    collapse,
    command_key,
    exception_lines,
    figure_gates,
    normalise_path,
    numbers_of,
    output_numbers,
    paths_in,
    work_root,
)
from kimi_compact_tui.specifics.views import (
    Call,
    arg_strings,
    first_string,
    prose,
    sentences,
    shown,
)
from kimi_compact_tui.specifics.walk import FINDINGS, Collector, Run, Seen, Walk

ANSWERED = "answered"
NOT_ANSWERED = "not answered yet"

ACK_WEIGHT = 2  # a short acknowledgement ("ok", "thanks, go on")
ACK_WORDS = 3
DONE_TASK_WEIGHT = 6
RESOLVED_ERROR_WEIGHT = 3

# The person's standing rules: a sentence with one of these (not a question). Both
# patterns run on lower-cased text with no leading \b (which would stop the scanner
# from skipping ahead): :func:`has_word` checks the start of a word itself.
RULE_RE = re.compile(
    r"(?:always|never|don't|dont|do not|must|mustn't|from now on|"
    r"avoid|no longer|only use|keep using)\b|必须|不要|不能|务必|一定要"
)
DECISION_RE = re.compile(
    r"(?:decided|decide to|chose|choose to|instead of|went with|going with|trade-?off|"
    r"we'll use|i'll use|because)\b|决定|改用|因为"
)

# A piece of every alternative of each pattern: a text without any cannot match,
# and a substring test is far cheaper than the pattern's scan of a long reply.
RULE_HINTS = (
    "always", "never", "don", "do not", "must", "from now on", "avoid", "no longer",
    "only use", "keep using", "必须", "不要", "不能", "务必", "一定要",
)  # fmt: skip
DECISION_HINTS = (
    "decide", "chose", "choose to", "instead of", "went with", "going with", "trade",
    "'ll use", "because", "决定", "改用", "因为",
)  # fmt: skip


# The hints an ASCII text can hold (the others are CJK).
RULE_ASCII_HINTS = tuple(h for h in RULE_HINTS if h.isascii())
DECISION_ASCII_HINTS = tuple(h for h in DECISION_HINTS if h.isascii())


def has_word(
    pattern: re.Pattern[str],
    low: str,
    hints: tuple[str, ...] = (),
    ascii_hints: tuple[str, ...] | None = None,
) -> bool:
    """``pattern`` matches lower-cased ``low`` at the start of a word (a CJK
    match anywhere). ``hints``: a piece of every alternative of ``pattern``
    (none in ``low``: no match, and no scan); ``ascii_hints``: those of them
    an ASCII text can hold (read instead when ``low`` is ASCII)."""
    if hints:
        if ascii_hints is not None and low.isascii():
            hints = ascii_hints
        for h in hints:
            if h in low:
                break
        else:
            return False
    for m in pattern.finditer(low):
        at = m.start()
        if at == 0 or not m.group(0)[0].isascii():
            return True
        before = low[at - 1]
        if not (before.isalnum() or before == "_"):
            return True
    return False


PASSED_RE = re.compile(r"\b(\d+) passed\b")
FAILED_RE = re.compile(r"\b[1-9]\d* (?:failed|errors?)\b|\bFAILED\b|\bFAIL\b")
PATCH_FILE_RE = re.compile(
    r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$|^\+\+\+ b/(\S+)", re.M
)
PATCH_ACTION_RE = re.compile(r"^\*\*\* (Add|Update|Delete) File: ", re.M)
WRITE_CONTENT_KEYS = ("content", "new_string", "new_str", "new", "text", "code", "edits")
LAUNCHERS = ("python", "python3", "uv", "npx", "npm")  # their next word names the program
# A compiler's or a tool's own error line (``error[E0308]: …``, ``npm ERR! …``).
COMPILER_RE = re.compile(r"^(?:error|fatal)\[[\w-]+\]:[ \t]*(.+)$|^npm ERR! code (.+)$", re.M)
# pytest's closing line ("==== 1 failed, 3 passed in 0.14s ===="), when no other error shows.
TESTS_FAILED_RE = re.compile(r"^=+ (?:.*\b)?\d+ failed\b.*$", re.M)


# ----------------------------------------------------------------------------- statuses

SUCCEEDED = "succeeded"  # the record says so, with no exit code to show
FAILED = "failed"  # the record says so, with no exit code to show
NO_MATCH = "no match (exit 1)"  # a search that found nothing: not an error
SEARCHES = frozenset({"rg", "grep", "egrep", "fgrep", "ag", "git grep"})
MARK_SPAN = 400  # failure marks are looked for in a result's first and last characters


def succeeded(status: str | None) -> bool:
    """A command status that says it succeeded (``exit 0``, ``42 passed``, the
    record's own success, a search with no match)."""
    return status is not None and (
        status in ("exit 0", SUCCEEDED, NO_MATCH) or status.endswith(" passed")
    )


def failed(status: str | None) -> bool:
    """A command status that says it failed (a non-zero exit, ``failed``)."""
    return status is not None and not succeeded(status)


def tests_passed(text: str) -> re.Match[str] | None:
    """A test run's "N passed" in ``text`` when it shows no failure, else None."""
    passed = PASSED_RE.search(text) if " passed" in text else None
    return passed if passed and not FAILED_RE.search(text) else None


def exit_status(text: str) -> str | None:
    codes = [m.group(1) for m in EXIT_RE.finditer(text)] if "xit" in text else []
    return f"exit {codes[-1]}" if codes else None


# ----------------------------------------------------------------------------- requests


class Requests(Collector):
    """The person's own prompts, verbatim, in order; answered or not yet."""

    reads_tool_results = False
    roles = frozenset(("user",))

    def see(self, m: Seen, w: Walk) -> None:
        if m.role != "user" or m.is_tool or not m.text:
            return
        short = len(m.text) < 25 and len(m.text.split()) <= ACK_WORDS
        weight = ACK_WEIGHT if short else None
        status = UNSENT_STATUS if m.unsent else None
        w.out.add(kinds.USER_REQUESTS, f"{m.index}", m.text, m.index, weight=weight, status=status)

    def finish(self, w: Walk) -> None:
        last = w.replies[-1] if w.replies else -1  # one look, not a scan per request
        for item in w.out.items[kinds.USER_REQUESTS].values():
            if item.status == UNSENT_STATUS:
                continue  # never sent: neither answered nor waiting for an answer
            item.status = ANSWERED if last > item.first else NOT_ANSWERED


class Instructions(Collector):
    """System and developer messages in the range, and the person's standing rules."""

    reads_tool_results = False
    roles = frozenset(("system", "developer", "user"))

    def see(self, m: Seen, w: Walk) -> None:
        if m.is_tool:
            return
        if m.role in ("system", "developer"):
            own = m.text.strip()
            if own:
                w.out.add(kinds.INSTRUCTIONS, collapse(own).lower(), own, m.index)
        elif m.role == "user" and m.text and has_word(RULE_RE, m.low, RULE_HINTS, RULE_ASCII_HINTS):
            for s in sentences(prose(m.text)):
                if has_word(
                    RULE_RE, s.lower(), RULE_HINTS, RULE_ASCII_HINTS
                ) and not s.rstrip().endswith(("?", "？")):
                    w.out.add(kinds.INSTRUCTIONS, collapse(s).lower(), shown(s, 240), m.index)


# How the person answers a proposal: the start of their next message.
REJECT_RE = re.compile(
    r"^\W*(?:no\b|nope\b|don't\b|do not\b|not that\b|wrong\b|instead\b|rather\b|"
    r"that won't\b|that will not\b|i disagree\b|let's not\b|stop\b|不要|不行|不对|别)",
    re.I,
)
ACCEPT_RE = re.compile(
    r"^\W*(?:yes\b|yep\b|ok\b|okay\b|sure\b|agreed\b|go ahead\b|sounds good\b|lgtm\b|"
    r"do it\b|approved?\b|perfect\b|great\b|好的?|可以|同意|行)",
    re.I,
)
ACCEPTED = "accepted"
REJECTED = "rejected"  # a proposal the person turned down; a write they refused
REFUSED_RE = re.compile(r"\b(?:reject|refus|denied|declined)")  # a write's result, lower case


class Decisions(Collector):
    """The assistant's sentences that state a choice and its reason (a whole
    sentence, never a fragment ending in ``:``). The person's next message
    decides a proposal: one it rejects ("no, …", "instead …") is ``rejected``,
    one it accepts ("yes", "go ahead") ``accepted``."""

    reads_tool_results = False
    roles = frozenset(("user", "assistant"))
    yields = frozenset((kinds.DECISIONS,))

    def __init__(self) -> None:
        self.open: list[Item] = []  # proposed since the person last wrote

    def see(self, m: Seen, w: Walk) -> None:
        if m.is_tool:
            return
        if m.role == "user":
            if self.open and m.text:
                verdict = (
                    REJECTED
                    if REJECT_RE.match(m.text)
                    else ACCEPTED if ACCEPT_RE.match(m.text) else None
                )
                for item in self.open:
                    if verdict is not None and item.status is None:
                        item.status = verdict
                self.open = []
            return
        if m.role != "assistant" or not has_word(
            DECISION_RE, m.low, DECISION_HINTS, DECISION_ASCII_HINTS
        ):
            return
        for s in sentences(prose(m.text)):
            if has_word(
                DECISION_RE, s.lower(), DECISION_HINTS, DECISION_ASCII_HINTS
            ) and not s.endswith(("?", ":", "：")):
                item = w.out.add(kinds.DECISIONS, collapse(s).lower(), shown(s, 240), m.index)
                self.open.append(item)


class Findings(Collector):
    """What the assistant concluded: the prose of its last message before each
    of the person's messages, and at the end of the range."""

    reads_tool_results = False
    roles = frozenset(("user", "assistant"))
    yields = frozenset((FINDINGS,))

    def __init__(self) -> None:
        self.last: tuple[int, str] | None = None
        #: The assistant's messages since ``last`` was read: only the latest with
        #: any prose counts, so the others' prose is never made.
        self.since: list[Seen] = []

    def _read(self) -> tuple[int, str] | None:
        for m in reversed(self.since):
            words = collapse(prose(m.text))
            if words:
                self.last = (m.index, words)
                break
        self.since.clear()
        return self.last

    def see(self, m: Seen, w: Walk) -> None:
        if m.is_tool:
            return
        if m.role == "assistant":
            self.since.append(m)
        elif m.role == "user" and m.text:
            last = self._read()
            if last is not None:
                if not REJECT_RE.match(m.text):  # a proposal the person turned down is no finding
                    w.findings.append(last)
                self.last = None

    def finish(self, w: Walk) -> None:
        last = self._read()
        if last is not None:
            w.findings.append(last)


# ----------------------------------------------------------------------------- plan


def plan_items(args: dict[str, Any] | str, shape: PlanShape) -> list[tuple[str, str]] | None:
    if not isinstance(args, dict):
        return None
    items = args.get(shape.items)
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        title = next((item[k] for k in shape.title if isinstance(item.get(k), str)), None)
        if title and title.strip():
            out.append((collapse(plain_text(title)), plan_status(item.get(shape.status))))
    return out


TODO_RE = re.compile(r"^[ \t]*(?:[-*][ \t]*)?(?:TODO|待办)[:：][ \t]*(\S.*)$", re.M)


class Plan(Collector):
    """The agent's last plan as its plan tool set it (else an earlier block's open
    tasks), and the ``TODO:`` lines of the person's requests (open tasks too)."""

    reads_without_calls = frozenset(("user",))  # the person's TODO lines; else calls only

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] | None = None
        self.at: int | None = None
        self.carried: list[tuple[str, str, int]] = []
        self.todos: list[tuple[str, int]] = []

    def see(self, m: Seen, w: Walk) -> None:
        if m.role == "user" and not m.is_tool and ("TODO" in m.text or "待办" in m.text):
            self.todos += [(collapse(t), m.index) for t in TODO_RE.findall(prose(m.text))]
        plans = w.vocabulary.tools.plans
        for name, args, _ in m.calls:
            if name in plans:
                found = plan_items(args, plans[name])
                if found is not None:
                    self.at, self.items = m.index, found

    def earlier_summary(self, index: int, text: str, w: Walk) -> None:
        self.carried += carried_tasks(text, index)

    def finish(self, w: Walk) -> None:
        if self.items is None or self.at is None:
            for title, status, index in self.carried:
                w.out.add(kinds.PLAN, title.lower(), title, index, status=status)
        else:
            w.plan_message = self.at
            for title, status in self.items:
                weight = kinds.WEIGHTS[kinds.PLAN] if status in OPEN_STATUSES else DONE_TASK_WEIGHT
                w.out.add(kinds.PLAN, title.lower(), title, self.at, weight=weight, status=status)
        plan = w.out.items[kinds.PLAN]
        for title, index in self.todos:
            if title.lower() not in plan:  # the agent's plan took it up: its status wins
                w.out.add(kinds.PLAN, title.lower(), title, index, status=PENDING)


# ----------------------------------------------------------------------------- commands


def flagged(m: Seen, w: Walk) -> bool:
    """A tool result the record marks as failed or refused (its flag, or one of
    the format's failure marks at its start or end)."""
    if m.flagged is None:
        marks = w.vocabulary.tools.failure_marks
        head, tail = m.text[:MARK_SPAN], m.text[-MARK_SPAN:]
        m.flagged = w.vocabulary.tool_failed(m.message) or any(
            mark in head or mark in tail for mark in marks
        )
    return m.flagged


def read_status(
    m: Seen, w: Walk, run: Run, passed: re.Match[str] | None
) -> tuple[str | None, bool]:
    """(status, failed) of a command's result as the agent recorded it: its exit
    code, the record's mark, a test run's count, the format's success note.
    ``passed``: :func:`tests_passed` of its text."""
    tools = w.vocabulary.tools
    text = m.text
    code = exit_status(text)
    if code is not None:
        if code == "exit 1" and program(run.key) in SEARCHES:
            return NO_MATCH, False
        return code, code != "exit 0"
    if flagged(m, w):
        return FAILED, True
    if result_errors(m, tools.failure_marks) and not tools.marks_failures:
        return FAILED, True
    if passed is not None:
        return passed.group(0), False
    if tools.marks_failures or any(mark in text for mark in tools.success_marks):
        return SUCCEEDED, False
    return None, False


def run_command(args: dict[str, Any] | str, keys: tuple[str, ...]) -> str | None:
    """The command a run tool's arguments hold; from arguments cut short (JSON that
    does not parse), the command's own text up to the cut, never the JSON."""
    if isinstance(args, str) and args.lstrip().startswith("{"):
        for key in keys:
            m = re.search(rf'"{re.escape(key)}"\s*:\s*"((?:[^"\\]|\\.)*)("?)', args)
            if m is None:
                continue
            body = m.group(1).rstrip("\\")
            try:
                value = json.loads(f'"{body}"')
            except ValueError:
                value = body
            value = value.strip()
            return (value + (" …" if not m.group(2) else "")) if value else None
        return None
    return first_string(args, keys)


def poll_target(args: dict[str, Any] | str, keys: tuple[str, ...]) -> str | None:
    if not isinstance(args, dict):
        return None
    for key in keys:
        value = args.get(key)
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            return str(value)
    return None


class Commands(Collector):
    """Commands a run tool ran, with the status their result records (a command
    still running is followed through the polls that read it)."""

    reads_without_calls = frozenset(("tool",))  # every result; else the calls only

    def see(self, m: Seen, w: Walk) -> None:
        if m.is_tool:
            self._result(m, w)
            return
        tools = w.vocabulary.tools
        for name, args, cid in m.calls:
            if name in tools.polls:
                target = poll_target(args, tools.polls[name])
                polled = w.processes.get(target) if target else None
                if polled is not None and cid:
                    w.polls_by_id[cid] = polled
                continue
            if name not in tools.runs:
                continue
            command = run_command(args, tools.runs[name])
            if not command:
                continue
            command = plain_text(command)
            key = command_key(command)
            w.out.add(kinds.COMMANDS, key, shown(command), m.index)
            run = Run(command, key, m.index, cid)
            w.runs.append(run)
            if cid:
                w.runs_by_id[cid] = run

    def _result(self, m: Seen, w: Walk) -> None:
        text = m.text
        passed = tests_passed(text)
        if passed is not None:
            w.passes.append(m.index)
        cid = m.message.tool_call_id or ""
        run = w.runs_by_id.get(cid) or w.polls_by_id.get(cid)
        if run is None:
            return
        m.run = run
        running = w.vocabulary.tools.running
        if running and (still := re.search(running, text)) is not None:
            target = next((g for g in still.groups() if g), None)
            if target is not None:
                w.processes[target] = run
            if exit_status(text) is None:
                return  # still running: a later poll says how it ended
        status, bad = read_status(m, w, run, passed)
        run.status, run.failed = status, bad
        item = w.out.items[kinds.COMMANDS].get(run.key)
        if item is not None and status is not None:
            item.status = status


# ----------------------------------------------------------------------------- files written


def patched_files(text: str) -> list[tuple[str, str]]:
    """(path, action) of every file a patch names."""
    out = []
    for m in PATCH_FILE_RE.finditer(text):
        path = (m.group(1) or m.group(2) or m.group(3) or "").strip()
        if not path or path == "/dev/null":
            continue
        line = text[m.start() : m.end()]
        action = PATCH_ACTION_RE.match(line)
        kind = {"Add": "added", "Delete": "deleted"}.get(
            action.group(1) if action else "", "edited"
        )
        out.append((path, "moved" if line.startswith("*** Move") else kind))
    return out


class Edits(Collector):
    """Files a write, edit or patch tool changed: a write whose result the record
    marks as failed or refused (or a non-zero exit) changed nothing."""

    reads_without_calls = frozenset(("tool",))  # every result; else the calls only

    def __init__(self) -> None:
        self.pending: dict[str, list[tuple[str, int]]] = {}  # call id → (path, message)
        self.refused: list[tuple[str, int, str]] = []  # (path, message, status)

    def see(self, m: Seen, w: Walk) -> None:
        if m.is_tool:
            made = self.pending.pop(m.message.tool_call_id or "", None)
            if made and (flagged(m, w) or failed(exit_status(m.text))):
                status = REJECTED if REFUSED_RE.search(m.low) else FAILED
                self.refused += [(path, index, status) for path, index in made]
            return
        tools = w.vocabulary.tools
        for name, args, cid in m.calls:
            if name in tools.writes:
                path = first_string(args, tools.writes[name]) if isinstance(args, dict) else None
                if path:
                    self._edit(w, path, m.index, name, name, cid)
            if name in tools.patches:
                for patch in arg_strings(args):
                    for path, action in patched_files(patch):
                        self._edit(w, path, m.index, name, action, cid)

    def _edit(
        self, w: Walk, path: str, index: int, tool: str, status: str, cid: str | None
    ) -> None:
        w.edits.append(index)
        w.raw_paths.append((path, index))
        w.out.add(kinds.EDITED_FILES, path, path, index, extra=(tool,), status=status)
        if cid:
            self.pending.setdefault(cid, []).append((path, index))

    def finish(self, w: Walk) -> None:
        bucket = w.out.items[kinds.EDITED_FILES]
        for path, index, status in self.refused:
            item = bucket.get(path)
            if item is not None and index in item.messages:
                item.messages.remove(index)
                if not item.messages:
                    del bucket[path]
                    w.unwritten[path] = status  # its path carries the status
            if index in w.edits:
                w.edits.remove(index)


# ----------------------------------------------------------------------------- errors


def errors_in(
    text: str, is_tool: bool, exits: bool | None = None
) -> list[tuple[str, str, tuple[str, str]]]:
    """(key, shown, (type, message)) of each error in ``text``. ``exits``: whether
    its lower case holds ``exit`` (when the caller already knows)."""
    out: list[tuple[str, str, tuple[str, str]]] = []
    seen_types: set[str] = set()
    # the pattern's own start, looked for first: a substring test skips ahead far
    # faster than the pattern's scanner
    tracebacks = TRACEBACK_TAIL_RE.finditer(text) if TRACEBACK_START in text else ()
    for m in tracebacks:
        etype, msg = m.group(1), (m.group(2) or "").strip()
        seen_types.add(etype)
        out.append(
            (f"{etype}: {msg}".lower(), shown(f"{etype}: {msg}" if msg else etype), (etype, msg))
        )
    for etype, found in exception_lines(text):
        msg = (found or "").strip()
        generic = etype.lower() in GENERIC_ERRORS
        if etype in seen_types or (not msg and (generic or not is_tool)):
            continue
        out.append(
            (f"{etype}: {msg}".lower(), shown(f"{etype}: {msg}" if msg else etype), (etype, msg))
        )
    shouted = "ERR" in text  # in both "ERROR" and "npm ERR!": one scan rules out two
    if "FAIL" in text or (shouted and "ERROR" in text):
        for m in TEST_ID_RE.finditer(text):
            test_id = m.group(1) or m.group(2) or m.group(3)
            out.append((f"test {test_id}".lower(), f"failing test {test_id}", ("test", test_id)))
    if ("[" in text and ("error[" in text or "fatal[" in text)) or (shouted and "npm ERR!" in text):
        for m in COMPILER_RE.finditer(text):
            line = m.group(0).strip()
            out.append((line.lower(), shown(line), ("error", (m.group(1) or m.group(2)).strip())))
    closing = None if out or " failed" not in text else TESTS_FAILED_RE.search(text)
    if closing is not None:
        line = closing.group(0).strip().strip("= ")
        if line:
            out.append((line.lower(), line, ("tests", line)))
    if is_tool and ("exit" in text.lower() if exits is None else exits):
        for m in EXIT_RE.finditer(text):
            if m.group(1) != "0":
                code = m.group(1)
                out.append((f"exit {code}", f"exit code {code}", ("exit", code)))
    return out


def result_errors(m: Seen, marks: tuple[str, ...] = ()) -> list[tuple[str, str, tuple[str, str]]]:
    """The errors of a tool result (read once per message, for every collector).
    ``marks``: the format's failure marks, the result's status and never an error
    of their own (kimi-cli's ``<system>ERROR: Command failed…``)."""
    if m.errors is None:
        low = m.low
        hinted = False
        for h in ERROR_HINTS:
            if h in low:
                hinted = True
                break
        text = m.text
        for mark in marks:
            if mark in text:
                text = text.replace(mark, " ")
        # the marks and tags taken out hold no "exit" and end in no part of one
        exits = hinted and "exit" in low
        if hinted and "system>" in text:  # the tags' common part: no scan for '<' without it
            text = SYSTEM_TAG_RE.sub("\n", text)
        m.errors = errors_in(text, True, exits) if hinted else []
    return m.errors


def program(key: str) -> str:
    """The program a command runs (``pytest``; ``python -m``-like launchers: two words)."""
    words = [w for w in key.split() if not w.startswith("-")]
    if not words:
        return ""
    return " ".join(words[:2]) if words[0] in LAUNCHERS else words[0]


def after(values: list[int], index: int | None) -> int | None:
    """The first of the ascending ``values`` past ``index``."""
    if index is None:
        return None
    at = bisect_right(values, index)
    return values[at] if at < len(values) else None


class Fixes:
    """What fixed, in a later message, what failed at a message: looked up by
    bisection in the runs that succeeded (by program), the edits and the test
    runs that passed, so a long range's errors cost no scan each."""

    def __init__(self, w: Walk) -> None:
        self.ok: dict[str, tuple[list[int], list[Run]]] = {}
        for r in w.runs:
            if r.failed is False:
                indices, runs = self.ok.setdefault(program(r.key), ([], []))
                indices.append(r.index)
                runs.append(r)
        self.edits = sorted(w.edits)
        self.passes = sorted(w.passes)

    def of(self, index: int, run: Run | None) -> str | None:
        """None: nothing did. A later run of the same program that succeeded, or a
        file edited after it and a test run that passed after that edit (when no
        edit is known at all, and no run: a later test run that passed)."""
        if run is not None:
            indices, runs = self.ok.get(program(run.key), ([], []))
            at = bisect_right(indices, index)
            if at < len(indices):
                later = runs[at]
                return f"`{shown(later.command, 80)}` then succeeded (message {later.index + 1})"
        if run is None and not self.edits:  # no edit is known (a request's text): a later pass
            passed = after(self.passes, index)
            return None if passed is None else f"tests passed later (message {passed + 1})"
        edit = after(self.edits, index)
        passed = after(self.passes, edit)
        if edit is None or passed is None:
            return None
        return f"an edit (message {edit + 1}), then tests passed (message {passed + 1})"


class Errors(Collector):
    """Error lines of tool results and of pastes; resolved when a later message fixed them."""

    roles = frozenset(("user",))  # and tool results: pasted errors

    def see(self, m: Seen, w: Walk) -> None:
        if m.is_tool:
            run = m.run
            if run is not None and run.status is not None and not run.failed:
                return  # the record says the command succeeded: its lines are no errors
            found = result_errors(m, w.vocabulary.tools.failure_marks)
            if run is not None and found:
                # the command's own line carries its exit; its errors are its cause
                found = [f for f in found if f[2][0] != "exit"]
                if found:
                    w.causes[run.key] = [key for key, _, _ in found]
        elif m.role == "user" and m.text:
            found = errors_in(m.text, False)
            run = None
        else:
            return
        for key, show, extra in found:
            err = w.out.add(kinds.ERRORS, key, show, m.index, extra=extra, status=OPEN)
            w.errors_at.append((err, m.index, run))

    def finish(self, w: Walk) -> None:
        fixes = Fixes(w)
        last_seen: dict[int, tuple[Item, int, Run | None]] = {}
        for err, index, run in w.errors_at:
            last_seen[id(err)] = (err, index, run)
        for err, index, run in last_seen.values():
            fix = fixes.of(index, run)
            if fix is not None:
                err.status = RESOLVED
                err.weight = RESOLVED_ERROR_WEIGHT
                w.fixes[err.key] = fix
        for run in w.runs:
            item = w.out.items[kinds.COMMANDS].get(run.key)
            if item is None or not run.failed:
                continue
            item.extra = ("fixed later",) if fixes.of(run.index, run) is not None else ()


# ----------------------------------------------------------------------------- paths


class Paths(Collector):
    """Paths the person or the agent named or touched (not a tool output's lines);
    made relative to the work folder, edited files' too."""

    reads_tool_results = False

    def __init__(self, root: str | None) -> None:
        self.root = root

    def see(self, m: Seen, w: Walk) -> None:
        if m.is_tool:
            return
        for path in paths_in(m.hay):
            w.raw_paths.append((path, m.index))

    def finish(self, w: Walk) -> None:
        root = self.root
        if root is None:
            root = work_root(p for p, _ in w.raw_paths)
        w.root = root
        normal: dict[str, tuple[str, str] | None] = {}  # a path named again: read once
        for path, index in w.raw_paths:
            if path in normal:
                found = normal[path]
            else:
                norm = normalise_path(path, root)
                found = normal[path] = (
                    (norm.lower(), norm) if norm and norm not in ("/", "~") else None
                )
            if found is not None:
                w.out.add(kinds.FILE_PATHS, found[0], found[1], index)
        edited = w.out.items[kinds.EDITED_FILES]
        for key in list(edited):
            item = edited.pop(key)
            norm = normalise_path(item.text, root) or item.text
            target = edited.get(norm.lower())
            if target is None:
                item.key, item.text = norm.lower(), norm
                edited[item.key] = item
            else:
                for i in item.messages:
                    target.add(i)
                target.status = item.status
        paths = w.out.items[kinds.FILE_PATHS]
        for path, status in w.unwritten.items():  # only refused or failed writes named it
            key = (normalise_path(path, root) or path).lower()
            if key in paths and key not in edited:
                paths[key].status = status
        merge_bare_names(paths)


def merge_bare_names(paths: dict[str, Item]) -> None:
    """A bare ``parse.py`` is the same file as the one ``ledger/parse.py`` seen in
    the range when exactly one such path exists."""
    by_base: dict[str, list[str]] = {}
    for key in paths:
        if "/" in key:
            by_base.setdefault(key.rsplit("/", 1)[1], []).append(key)
    for key in [k for k in paths if "/" not in k]:
        owners = by_base.get(key, [])
        if len(owners) == 1:
            target = paths[owners[0]]
            for index in paths.pop(key).messages:
                target.add(index)


# ----------------------------------------------------------------------------- code, figures


def code_written(text: str, calls: list[Call], writes: Iterable[str]) -> list[str]:
    blocks = [m.group(2) for m in FENCE_RE.finditer(text)] if "```" in text or "~~~" in text else []
    if "\n+++ " in text or text.startswith("diff --git"):
        blocks.append("\n".join(m.group(1) for m in DIFF_ADDED_RE.finditer(text)))
    if not calls:
        return blocks
    # a name is looked up in them (a mapping's keys, as a set of them would be)
    writers = writes if isinstance(writes, (dict, set, frozenset, Mapping)) else set(writes)
    for name, args, _ in calls:
        if name not in writers:
            continue
        if not isinstance(args, dict):
            blocks.append("\n".join(m.group(1) for m in DIFF_ADDED_RE.finditer(args)))
            continue
        for key in WRITE_CONTENT_KEYS:
            value = args.get(key)
            if isinstance(value, str):
                blocks.append(value)
            elif isinstance(value, list):
                blocks.extend(
                    v.get("new_string", "")
                    for v in value
                    if isinstance(v, dict) and isinstance(v.get("new_string"), str)
                )
    return blocks


class Identifiers(Collector):
    """Names the session's code defines (in fences, diffs and what a write tool wrote)."""

    reads_tool_results = False

    def see(self, m: Seen, w: Walk) -> None:
        if m.is_tool:
            return
        for block in code_written(m.text, m.calls, w.vocabulary.tools.writes):
            for d in DEFINITION_RE.finditer(block):
                name = d.group(1) or d.group(2)
                w.out.add(kinds.IDENTIFIERS, name.lower(), name, m.index)


OUTPUT_WINDOW = 1_000  # a long output's figures: from its first and last characters


class Figures(Collector):
    """Numbers with a unit, versions and ports the person or the agent wrote, and
    URLs. In a tool's output, figures come from its first and last
    :data:`OUTPUT_WINDOW` characters (a summary line, an answer; the middle of a
    long listing or log is data), never from the lines the agent's harness adds
    around it (wall times) nor the versions a package manager listed."""

    def __init__(self) -> None:
        self.harness: re.Pattern[str] | None = None
        self.read = False

    def see(self, m: Seen, w: Walk) -> None:
        if not m.is_tool:
            hay = m.hay  # the text itself when there is no call: its lower case is read once
            figures(w.out, hay, m.index, numbers_of(hay, m.low if hay is m.text else None))
            return
        if not self.read:
            lines = w.vocabulary.tools.harness_lines
            self.harness = re.compile(lines, re.M) if lines else None
            self.read = True
        text = m.text
        if len(text) > 2 * OUTPUT_WINDOW:
            # whole lines: a figure is never cut from what stands before it
            end = text.rfind("\n", 0, OUTPUT_WINDOW) + 1 or OUTPUT_WINDOW
            start = text.find("\n", len(text) - OUTPUT_WINDOW) + 1 or len(text) - OUTPUT_WINDOW
            found = []
            for window, at in ((text[:end], 0), (text[start:], start)):
                if self.harness is None and figure_gates(window) is NO_FIGURES:
                    continue  # no figure can be in it: its lower case is never made
                # the window of the lower case, when it lines up with the text
                low = m.low
                lined = low[at : at + len(window)] if len(low) == len(text) else None
                found += output_numbers(window, self.harness, lined)
        else:
            found = output_numbers(text, self.harness, m._low)  # its lower case, when read
        figures(w.out, text, m.index, found)


def figures(out: Buckets, hay: str, index: int, numbers: list[tuple[str, str]]) -> None:
    if "://" in hay:
        for m in URL_RE.finditer(hay):
            url = m.group(0).rstrip(".,;:!?")
            out.add(kinds.URLS, url.lower().rstrip("/"), url, index)
    for key, number in numbers:
        out.add(kinds.NUMBERS, key, number.strip(), index)


# ----------------------------------------------------------------------------- earlier summaries

ANCHOR_LINE_RE = re.compile(
    r"^- (?P<label>user requests|instructions|open tasks|edited files|errors|commands|"
    r"file paths|identifiers|numbers|URLs): (?P<text>.+) \(messages? \d+(?:, \d+)*"
    r"(?:; (?P<status>[\w ,-]+?)(?: — [\w ,]+)?)?\)$",  # "— the summary above calls it …"
    re.M,
)
ANCHOR_KINDS = {
    "user requests": kinds.USER_REQUESTS,
    "instructions": kinds.INSTRUCTIONS,
    "edited files": kinds.EDITED_FILES,
    "errors": kinds.ERRORS,
    "commands": kinds.COMMANDS,
    "file paths": kinds.FILE_PATHS,
    "identifiers": kinds.IDENTIFIERS,
    "numbers": kinds.NUMBERS,
    "URLs": kinds.URLS,
}


def carried_tasks(text: str, index: int) -> list[tuple[str, str, int]]:
    """The open tasks of an anchor block in an earlier summary (title, status, index)."""
    if "\n- " not in text:
        return []
    return [
        (m.group("text").strip(), plan_status(m.group("status")), index)
        for m in ANCHOR_LINE_RE.finditer(text)
        if m.group("label") == "open tasks"
    ]


def error_extra(text: str) -> tuple[str, str]:
    """An error's matching data from its shown text (what :func:`errors_in` shows)."""
    if text.startswith("failing test "):
        return ("test", text[len("failing test ") :])
    if text.startswith("exit code "):
        return ("exit", text[len("exit code ") :])
    etype, _, message = text.partition(":")
    return (etype.strip(), message.strip())


class Carried(Collector):
    """The items of an earlier summary's anchor block (``- label: text (message N)``
    lines): what an earlier compaction kept exactly is carried on. Its open tasks
    are the :class:`Plan` collector's."""

    def earlier_summary(self, index: int, text: str, w: Walk) -> None:
        if "\n- " not in text:
            return
        for m in ANCHOR_LINE_RE.finditer(text):
            label, item_text = m.group("label"), m.group("text").strip()
            if label == "open tasks":
                continue
            kind = ANCHOR_KINDS[label]
            if kind == kinds.USER_REQUESTS:
                w.out.add(kind, f"anchor {index} {item_text}", item_text, index)
            elif kind == kinds.ERRORS:
                extra = error_extra(item_text)
                w.out.add(kind, item_text.lower(), item_text, index, extra=extra, status=OPEN)
            elif kind == kinds.COMMANDS:
                w.out.add(kind, command_key(item_text), item_text, index)
            else:
                w.out.add(kind, collapse(item_text).lower(), item_text, index)

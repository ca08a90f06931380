"""The one extractor of a session's specifics: deterministic, offline, no model.

:func:`extract` reads the messages of a range, tool calls included, and yields
typed :class:`Item` s, each with the 0-based indices of the messages it comes
from and a weight (what a summary must keep first):

- ``user_requests`` (10; a short acknowledgement 2): the person's own prompts,
  verbatim, in order; never a tool result, the agent's bookkeeping or an
  earlier summary; one the agent never sent to its model (declared
  :data:`~.declare.UNSENT`) has the status :data:`~.declare.UNSENT_STATUS`;
- ``instructions`` (9): ``system``/``developer`` messages in the range that are
  not bookkeeping, and the person's standing rules ("always …", "never …",
  "don't …");
- ``plan`` (open items 8, the others 4): the agent's *last* plan as its plan
  tool set it, each item with its status; ``open_tasks`` are its pending and
  in-progress items. A checklist in the agent's prose is a proposal, never read;
- ``edited_files`` (7): files a write, edit or patch tool changed;
- ``commands`` (6): commands a run tool ran, with the exit status the record
  shows (``status``);
- ``errors`` (open 6, resolved 3): error lines of tool results and of pastes,
  ``status`` ``open`` unless a later run of the same program succeeded (or a
  later test run passed with no failure);
- ``file_paths`` (3): paths the person or the agent named or touched (their
  messages and tool calls; not the lines of a tool's output);
- ``decisions`` (2), ``identifiers`` (2), ``numbers`` (1), ``urls`` (1).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kimi_compact_tui.compaction.summary import COMPACTED_NOTICE, system
from kimi_compact_tui.model import Message
from kimi_compact_tui.sanitize import plain_text
from kimi_compact_tui.specifics import kinds
from kimi_compact_tui.specifics.declare import (
    OPEN_STATUSES,
    PLAIN,
    SUMMARY,
    UNSENT,
    UNSENT_STATUS,
    PlanShape,
    Vocabulary,
    plan_status,
)
from kimi_compact_tui.specifics.patterns import (
    DEFINITION_RE,
    DIFF_ADDED_RE,
    ERROR_HINTS,
    EXC_RE,
    EXIT_RE,
    FENCE_RE,
    GENERIC_ERRORS,
    SENTENCE_RE,
    SYSTEM_TAG_RE,
    TEST_ID_RE,
    TRACEBACK_TAIL_RE,
    URL_RE,
    collapse,
    command_key,
    normalise_path,
    numbers_in,
    paths_in,
    work_root,
)

OPEN = "open"
RESOLVED = "resolved"
ANSWERED = "answered"
NOT_ANSWERED = "not answered yet"

ACK_WEIGHT = 2  # a short acknowledgement ("ok", "thanks, go on")
DONE_TASK_WEIGHT = 6
RESOLVED_ERROR_WEIGHT = 3

# The person's standing rules: a sentence with one of these (not a question).
RULE_RE = re.compile(
    r"\b(?:always|never|don't|dont|do not|must|mustn't|from now on|"
    r"avoid|no longer|only use|keep using)\b|必须|不要|不能|务必|一定要",
    re.I,
)
DECISION_RE = re.compile(
    r"\b(?:decided|decide to|chose|choose to|instead of|went with|going with|trade-?off|"
    r"we'll use|i'll use|because)\b|决定|改用|因为",
    re.I,
)
PASSED_RE = re.compile(r"\b(\d+) passed\b")
FAILED_RE = re.compile(r"\b[1-9]\d* (?:failed|errors?)\b|\bFAILED\b|\bFAIL\b")
PATCH_FILE_RE = re.compile(
    r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$|^\+\+\+ b/(\S+)", re.M
)
PATCH_ACTION_RE = re.compile(r"^\*\*\* (Add|Update|Delete) File: ", re.M)
WRITE_CONTENT_KEYS = ("content", "new_string", "new_str", "new", "text", "code", "edits")
ACK_WORDS = 3
LAUNCHERS = ("python", "python3", "uv", "npx", "npm")  # their next word names the program
# A compiler's or a tool's own error line (``error[E0308]: …``, ``npm ERR! …``).
COMPILER_RE = re.compile(r"^(?:error|fatal)\[[\w-]+\]:[ \t]*(.+)$|^npm ERR! code (.+)$", re.M)
# pytest's closing line ("==== 1 failed, 3 passed in 0.14s ===="), when no other error shows.
TESTS_FAILED_RE = re.compile(r"^=+ (?:.*\b)?\d+ failed\b.*$", re.M)
SUMMARY_START = system(COMPACTED_NOTICE)


@dataclass
class Item:
    """One specific: ``text`` as shown (a request verbatim), ``key`` its
    normalised form, ``messages`` the 0-based indices it comes from (ascending),
    ``weight``, ``status`` (a plan item's, a command's exit, an error's
    open/resolved) and ``extra`` (data for matching, e.g. an error's type)."""

    category: str
    key: str
    text: str
    messages: list[int] = field(default_factory=list)
    extra: tuple[str, ...] = ()
    weight: int = 1
    status: str | None = None

    def add(self, index: int) -> None:
        if index not in self.messages:
            self.messages.append(index)

    @property
    def first(self) -> int:
        return self.messages[0] if self.messages else 0


@dataclass
class Specifics:
    """The items of a range by kind (each kind: key → item, in message order),
    and the work folder absolute paths were made relative to."""

    items: dict[str, dict[str, Item]]
    root: str | None = None
    plan_message: int | None = None  # the message that set the last plan

    def of(self, kind: str) -> list[Item]:
        if kind == kinds.OPEN_TASKS:
            return [i for i in self.items[kinds.PLAN].values() if i.status in OPEN_STATUSES]
        return list(self.items.get(kind, {}).values())

    def by_weight(self) -> list[Item]:
        """Every item, heaviest first (message order within a weight)."""
        every = [i for kind in kinds.KINDS for i in self.items[kind].values()]
        return sorted(every, key=lambda i: (-i.weight, i.first))


# ----------------------------------------------------------------------------- message views


def call_args(call: dict[str, Any]) -> tuple[str, dict[str, Any] | str]:
    """A tool call's name and its arguments (a dict when they are a JSON object,
    else the raw text: a custom tool's input)."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict):
        return "", ""
    name = fn["name"] if isinstance(fn.get("name"), str) else ""
    raw = fn.get("arguments")
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return name, raw
        return name, parsed if isinstance(parsed, dict) else raw
    return name, raw if isinstance(raw, dict) else ""


def arg_strings(args: dict[str, Any] | str) -> list[str]:
    if isinstance(args, str):
        return [args]
    out: list[str] = []
    for v in args.values():
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, str))
    return out


Call = tuple[str, "dict[str, Any] | str", "str | None"]  # name, arguments, call id


def parsed_calls(message: Message) -> list[Call]:
    out: list[Call] = []
    for call in message.tool_calls:
        name, args = call_args(call)
        cid = call.get("id") if isinstance(call, dict) else None
        out.append((name, args, cid if isinstance(cid, str) else None))
    return out


def message_haystack(message: Message) -> str:
    """Everything a reader of the message sees: its text and its tool calls, as a
    terminal shows them."""
    text = plain_text(message.text())
    calls = parsed_calls(message)
    if not calls:
        return text
    chunks = [text]
    for name, args, _ in calls:
        chunks.append(name)
        chunks.extend(arg_strings(args))
    return plain_text("\n".join(c for c in chunks if c))


def without_tags(text: str, tags: Iterable[str]) -> str:
    """``text`` without the ``<tag>…</tag>`` blocks of ``tags`` (an unclosed one
    runs to the end)."""
    for tag in tags:
        if f"<{tag}>" in text:
            text = re.sub(rf"<{re.escape(tag)}>.*?(?:</{re.escape(tag)}>|\Z)", "", text, flags=re.S)
    return text.strip()


def sentences(text: str) -> list[str]:
    return [s for s in (m.group(0).strip() for m in SENTENCE_RE.finditer(text)) if s]


def shown(text: str, width: int = 160) -> str:
    flat = collapse(text)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _first_string(args: dict[str, Any] | str, keys: Iterable[str]) -> str | None:
    if isinstance(args, str):
        return args.strip() or None
    for key in keys:
        value = args.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _plan_items(args: dict[str, Any] | str, shape: PlanShape) -> list[tuple[str, str]] | None:
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


# ----------------------------------------------------------------------------- extraction


class _Out:
    def __init__(self) -> None:
        self.items: dict[str, dict[str, Item]] = {k: {} for k in kinds.KINDS}

    def add(
        self,
        kind: str,
        key: str,
        text: str,
        index: int,
        *,
        extra: tuple[str, ...] = (),
        weight: int | None = None,
        status: str | None = None,
    ) -> Item:
        bucket = self.items[kind]
        item = bucket.get(key)
        if item is None:
            w = kinds.WEIGHTS[kind] if weight is None else weight
            item = bucket[key] = Item(kind, key, text, [], tuple(extra), w, status)
        elif status is not None:
            item.status = status
        item.add(index)
        return item


def _errors_in(text: str, is_tool: bool) -> list[tuple[str, str, tuple[str, str]]]:
    """(key, shown, (type, message)) of each error in ``text``."""
    out: list[tuple[str, str, tuple[str, str]]] = []
    seen_types: set[str] = set()
    for m in TRACEBACK_TAIL_RE.finditer(text):
        etype, msg = m.group(1), (m.group(2) or "").strip()
        seen_types.add(etype)
        out.append(
            (f"{etype}: {msg}".lower(), shown(f"{etype}: {msg}" if msg else etype), (etype, msg))
        )
    for m in EXC_RE.finditer(text):
        etype, msg = m.group(1), (m.group(2) or "").strip()
        generic = etype.lower() in GENERIC_ERRORS
        if etype in seen_types or (not msg and (generic or not is_tool)):
            continue
        out.append(
            (f"{etype}: {msg}".lower(), shown(f"{etype}: {msg}" if msg else etype), (etype, msg))
        )
    if "FAIL" in text or "ERROR" in text:
        for m in TEST_ID_RE.finditer(text):
            test_id = m.group(1) or m.group(2) or m.group(3)
            out.append((f"test {test_id}".lower(), f"failing test {test_id}", ("test", test_id)))
    for m in COMPILER_RE.finditer(text):
        line = m.group(0).strip()
        out.append((line.lower(), shown(line), ("error", (m.group(1) or m.group(2)).strip())))
    closing = None if out else TESTS_FAILED_RE.search(text)
    if closing is not None:
        line = closing.group(0).strip().strip("= ")
        if line:
            out.append((line.lower(), line, ("tests", line)))
    if is_tool and "exit" in text.lower():
        for m in EXIT_RE.finditer(text):
            if m.group(1) != "0":
                code = m.group(1)
                out.append((f"exit {code}", f"exit code {code}", ("exit", code)))
    return out


def succeeded(status: str | None) -> bool:
    """A command status that says it succeeded (``exit 0``, ``42 passed``)."""
    return status is not None and (status == "exit 0" or status.endswith(" passed"))


def failed(status: str | None) -> bool:
    """A command status that says it failed (a non-zero exit, ``failed``)."""
    return status is not None and not succeeded(status)


def _exit_status(text: str) -> str | None:
    codes = [m.group(1) for m in EXIT_RE.finditer(text)] if "xit" in text else []
    return f"exit {codes[-1]}" if codes else None


def _code_written(text: str, calls: list[Call], writes: Iterable[str]) -> list[str]:
    blocks = [m.group(2) for m in FENCE_RE.finditer(text)] if "```" in text or "~~~" in text else []
    if "\n+++ " in text or text.startswith("diff --git"):
        blocks.append("\n".join(m.group(1) for m in DIFF_ADDED_RE.finditer(text)))
    writers = set(writes)
    for name, args, _ in calls:
        if name in writers:
            if isinstance(args, dict):
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
            else:
                blocks.append("\n".join(m.group(1) for m in DIFF_ADDED_RE.finditer(args)))
    return blocks


def _patched_files(text: str) -> list[tuple[str, str]]:
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


@dataclass
class _Run:
    command: str
    key: str
    index: int
    call_id: str | None
    status: str | None = None
    failed: bool | None = None


def extract(
    messages: Sequence[Message],
    indices: Iterable[int],
    vocabulary: Vocabulary = PLAIN,
    root: str | None = None,
) -> Specifics:
    """The specifics of ``messages[i]`` for ``i`` in ``indices`` (ascending).
    ``vocabulary``: the format's tool roles and bookkeeping (the job passes the
    session format's); ``root``: the work folder absolute paths are made
    relative to (else the one the paths themselves point to)."""
    tools = vocabulary.tools
    writes = tools.writes
    runs = tools.runs
    plans = tools.plans
    patches = set(tools.patches)
    tags = ("system-reminder", *tools.inline_tags) if tools.inline_tags else ()
    out = _Out()
    raw_paths: list[tuple[str, int]] = []
    runs_by_id: dict[str, _Run] = {}
    all_runs: list[_Run] = []
    errors_at: list[tuple[Item, int, _Run | None]] = []
    plan_index: int | None = None
    plan_items: list[tuple[str, str]] | None = None
    anchored_tasks: list[tuple[str, str, int]] = []  # open tasks of an earlier anchor block
    passes: list[int] = []  # indices of tool results with tests passing and no failure
    edits: list[int] = []  # indices of the messages that wrote a file
    order = list(indices)
    for index in order:
        message = messages[index]
        role = message.role
        kind = vocabulary.bookkeeping(message)
        raw_text = message.text()
        if kind == SUMMARY or (role == "user" and _is_earlier_summary(raw_text)):
            # an earlier summary is never a request; the items of its anchor block are
            # carried on (they are what an earlier compaction kept exactly)
            anchored_tasks += _anchored_items(out, plain_text(raw_text), index)
            continue
        if kind is not None and kind != UNSENT:
            continue  # the agent's bookkeeping: never a request, a rule, a path or a number
        text = plain_text(raw_text)
        is_tool = message.is_tool_result()
        calls = parsed_calls(message)
        if is_tool:
            run = runs_by_id.get(message.tool_call_id or "")
            failed_flag = vocabulary.tool_failed(message)
            low = text.lower()
            found = (
                _errors_in(SYSTEM_TAG_RE.sub("\n", text), True)
                if any(h in low for h in ERROR_HINTS)
                else []
            )
            passed = PASSED_RE.search(text)
            if run is not None:
                run.status = _exit_status(text) or ("failed" if failed_flag or found else None)
                if run.status is None and passed and not FAILED_RE.search(text):
                    run.status = passed.group(0)
                run.failed = failed_flag or bool(found) or failed(run.status)
                item = out.items[kinds.COMMANDS].get(run.key)
                if item is not None and run.status is not None:
                    item.status = run.status
            for key, show, extra in found:
                err = out.add(kinds.ERRORS, key, show, index, extra=extra, status=OPEN)
                errors_at.append((err, index, run))
            if passed and not FAILED_RE.search(text):
                passes.append(index)
            _numbers_urls(out, text, index)
            continue
        if role == "user":
            own = without_tags(text, tags) if tags else text.strip()
            own = SYSTEM_TAG_RE.sub("", own).strip() if "<system>" in own else own
            if own:
                short = len(own.split()) <= ACK_WORDS and len(own) < 25
                out.add(
                    kinds.USER_REQUESTS,
                    f"{index}",
                    own,
                    index,
                    weight=ACK_WEIGHT if short else None,
                    status=UNSENT_STATUS if kind == UNSENT else None,
                )
                _rules(out, own, index)
                for key, show, extra in _errors_in(own, False):
                    err = out.add(kinds.ERRORS, key, show, index, extra=extra, status=OPEN)
                    errors_at.append((err, index, None))
            text = own
        elif role == "system" or role == "developer":
            own = text.strip()
            if own:
                out.add(kinds.INSTRUCTIONS, collapse(own).lower(), own, index)
        elif role == "assistant":
            for s in sentences(_prose(text)):
                if DECISION_RE.search(s) and not s.endswith("?"):
                    out.add(kinds.DECISIONS, collapse(s).lower(), shown(s, 240), index)
        hay_parts = [text]
        for name, args, cid in calls:
            hay_parts.append(name)
            hay_parts.extend(arg_strings(args))
            if name in plans:
                found_plan = _plan_items(args, plans[name])
                if found_plan is not None:
                    plan_index, plan_items = index, found_plan
            if name in runs:
                command = _first_string(args, runs[name])
                if command:
                    command = plain_text(command)
                    key = command_key(command)
                    out.add(kinds.COMMANDS, key, shown(command), index)
                    r = _Run(command, key, index, cid)
                    all_runs.append(r)
                    if cid:
                        runs_by_id[cid] = r
            if name in writes:
                path = _first_string(args, writes[name]) if isinstance(args, dict) else None
                if path:
                    edits.append(index)
                    raw_paths.append((path, index))
                    out.add(kinds.EDITED_FILES, path, path, index, extra=(name,), status=name)
            if name in patches:
                for patch in arg_strings(args):
                    for path, action in _patched_files(patch):
                        edits.append(index)
                        raw_paths.append((path, index))
                        out.add(kinds.EDITED_FILES, path, path, index, extra=(name,), status=action)
        hay = plain_text("\n".join(c for c in hay_parts if c))
        for path in paths_in(hay):
            raw_paths.append((path, index))
        for block in _code_written(text, calls, writes):
            for m in DEFINITION_RE.finditer(block):
                name = m.group(1) or m.group(2)
                out.add(kinds.IDENTIFIERS, name.lower(), name, index)
        _numbers_urls(out, hay, index)
    _request_statuses(out, messages, order)
    if plan_items is None:  # no plan tool in the range: an earlier block's open tasks
        for title, status, index in anchored_tasks:
            out.add(kinds.PLAN, title.lower(), title, index, status=status)
    if plan_items is not None and plan_index is not None:
        for title, status in plan_items:
            weight = kinds.WEIGHTS[kinds.PLAN] if status in OPEN_STATUSES else DONE_TASK_WEIGHT
            out.add(kinds.PLAN, title.lower(), title, plan_index, weight=weight, status=status)
    _resolve(out, errors_at, all_runs, passes, edits)
    root = _paths(out, raw_paths, root)
    for bucket in out.items.values():
        for item in bucket.values():
            item.messages.sort()
    return Specifics(out.items, root, plan_index)


ANCHOR_LINE_RE = re.compile(
    r"^- (?P<label>user requests|instructions|open tasks|edited files|errors|commands|"
    r"file paths): (?P<text>.+) \(messages? \d+(?:, \d+)*(?:; (?P<status>[\w ]+))?\)$",
    re.M,
)
ANCHOR_KINDS = {
    "user requests": kinds.USER_REQUESTS,
    "instructions": kinds.INSTRUCTIONS,
    "edited files": kinds.EDITED_FILES,
    "errors": kinds.ERRORS,
    "commands": kinds.COMMANDS,
    "file paths": kinds.FILE_PATHS,
}


def _anchored_items(out: _Out, text: str, index: int) -> list[tuple[str, str, int]]:
    """Add the items of an anchor block (``- label: text (message N)`` lines) in an
    earlier summary at ``index``; returns its open tasks (title, status, index)."""
    tasks: list[tuple[str, str, int]] = []
    if "\n- " not in text:
        return tasks
    for m in ANCHOR_LINE_RE.finditer(text):
        label, item_text, status = m.group("label"), m.group("text").strip(), m.group("status")
        if label == "open tasks":
            tasks.append((item_text, plan_status(status), index))
            continue
        kind = ANCHOR_KINDS[label]
        if kind == kinds.USER_REQUESTS:
            out.add(kind, f"anchor {index} {item_text}", item_text, index)
        elif kind == kinds.ERRORS:
            out.add(
                kind,
                item_text.lower(),
                item_text,
                index,
                extra=_error_extra(item_text),
                status=OPEN,
            )
        elif kind == kinds.COMMANDS:
            out.add(kind, command_key(item_text), item_text, index)
        else:
            out.add(kind, collapse(item_text).lower(), item_text, index)
    return tasks


def _error_extra(text: str) -> tuple[str, str]:
    """An error's matching data from its shown text (what :func:`_errors_in` shows)."""
    if text.startswith("failing test "):
        return ("test", text[len("failing test ") :])
    if text.startswith("exit code "):
        return ("exit", text[len("exit code ") :])
    etype, _, message = text.partition(":")
    return (etype.strip(), message.strip())


def _request_statuses(out: _Out, messages: Sequence[Message], order: list[int]) -> None:
    """A request the agent replied to (an assistant message follows it in the
    range) is ``answered``; the others ``not answered yet``."""
    replied = [i for i in order if messages[i].role == "assistant"]
    for item in out.items[kinds.USER_REQUESTS].values():
        if item.status == UNSENT_STATUS:
            continue
        item.status = ANSWERED if any(r > item.first for r in replied) else NOT_ANSWERED


def _is_earlier_summary(text: str) -> bool:
    """This tool's own summary message (what an earlier compaction wrote)."""
    return text.lstrip().startswith(SUMMARY_START)


def _prose(text: str) -> str:
    return FENCE_RE.sub(" ", text) if "```" in text or "~~~" in text else text


def _rules(out: _Out, text: str, index: int) -> None:
    if not RULE_RE.search(text):
        return
    for s in sentences(_prose(text)):
        if RULE_RE.search(s) and not s.rstrip().endswith(("?", "？")):
            out.add(kinds.INSTRUCTIONS, collapse(s).lower(), shown(s, 240), index)


def _numbers_urls(out: _Out, hay: str, index: int) -> None:
    if "://" in hay:
        for m in URL_RE.finditer(hay):
            url = m.group(0).rstrip(".,;:!?")
            out.add(kinds.URLS, url.lower().rstrip("/"), url, index)
    for key, number in numbers_in(hay.lower(), hay):
        out.add(kinds.NUMBERS, key, number.strip(), index)


def _program(key: str) -> str:
    """The program a command runs (``pytest``; ``python -m``-like launchers: two words)."""
    words = [w for w in key.split() if not w.startswith("-")]
    if not words:
        return ""
    return " ".join(words[:2]) if words[0] in LAUNCHERS else words[0]


def _fixed_later(
    index: int, run: _Run | None, runs: list[_Run], passes: list[int], edits: list[int]
) -> bool:
    """Did a later message fix what failed at ``index``: a later run of the same
    program succeeded, or a file was edited after it and a test run passed after
    that edit (when no edit is known at all, and no run: a later test run passed)."""
    if run is not None and any(
        r.index > index and r.failed is False and _program(r.key) == _program(run.key) for r in runs
    ):
        return True
    if run is None and not edits:  # no edit is known (a request's text): a later pass
        return any(p > index for p in passes)
    edit = next((e for e in edits if e > index), None)
    return edit is not None and any(p > edit for p in passes)


def _resolve(
    out: _Out,
    errors_at: list[tuple[Item, int, _Run | None]],
    runs: list[_Run],
    passes: list[int],
    edits: list[int],
) -> None:
    """Errors and failed commands that a later message fixed are resolved."""
    last_seen: dict[int, tuple[Item, int, _Run | None]] = {}
    for err, index, run in errors_at:
        last_seen[id(err)] = (err, index, run)
    for err, index, run in last_seen.values():
        if _fixed_later(index, run, runs, passes, edits):
            err.status = RESOLVED
            err.weight = RESOLVED_ERROR_WEIGHT
    for run in runs:
        item = out.items[kinds.COMMANDS].get(run.key)
        if item is None or not run.failed:
            continue
        if _fixed_later(run.index, run, runs, passes, edits):
            item.extra = ("fixed later",)
        else:
            item.extra = ()


def _paths(out: _Out, raw_paths: list[tuple[str, int]], root: str | None) -> str | None:
    if root is None:
        root = work_root(p for p, _ in raw_paths)
    for path, index in raw_paths:
        norm = normalise_path(path, root)
        if norm and norm not in ("/", "~"):
            out.add(kinds.FILE_PATHS, norm.lower(), norm, index)
    edited = out.items[kinds.EDITED_FILES]
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
    _merge_bare_names(out.items[kinds.FILE_PATHS])
    return root


def _merge_bare_names(paths: dict[str, Item]) -> None:
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

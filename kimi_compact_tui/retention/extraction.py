"""Extract the specifics of a compacted range: deterministic, offline, no model.

Each category maps a normalised key to an :class:`Item` (the text shown to
people and every 0-based message index it came from). The categories are the
ones named in :data:`CATEGORIES`; docs/retention.md explains each.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kimi_compact_tui.model import Message
from kimi_compact_tui.retention.patterns import (
    COMMAND_ARGS,
    DEFINITION_RE,
    DIFF_ADDED_RE,
    ERROR_HINTS,
    EXC_RE,
    EXIT_RE,
    FENCE_RE,
    GENERIC_ERRORS,
    OPEN_HINTS,
    OPEN_RE,
    REQUIREMENT_HINTS,
    REQUIREMENT_RE,
    SENTENCE_RE,
    SHELL_TOOLS,
    SYSTEM_TAG_RE,
    TEST_ID_RE,
    TRACEBACK_TAIL_RE,
    URL_RE,
    WRITE_TOOLS,
    collapse,
    command_key,
    normalise_path,
    numbers_in,
    paths_in,
    work_root,
)
from kimi_compact_tui.sanitize import plain_text

FILE_PATHS = "file_paths"
COMMANDS = "commands"
ERRORS = "errors"
IDENTIFIERS = "identifiers"
URLS = "urls"
NUMBERS = "numbers"
REQUIREMENTS = "requirements"
OPEN_ITEMS = "open_items"
LATEST_REQUEST = "latest_request"

CATEGORIES = (
    FILE_PATHS,
    COMMANDS,
    ERRORS,
    IDENTIFIERS,
    URLS,
    NUMBERS,
    REQUIREMENTS,
    OPEN_ITEMS,
    LATEST_REQUEST,
)


@dataclass
class Item:
    category: str
    key: str  # normalised form used for de-duplication and matching
    text: str  # shown to people
    messages: list[int] = field(default_factory=list)  # 0-based, ascending, unique
    extra: tuple[str, ...] = ()  # category data for matching (e.g. an error's type)

    def add(self, index: int) -> None:
        if not self.messages or self.messages[-1] != index:
            if index not in self.messages:
                self.messages.append(index)


Extracted = dict[str, dict[str, Item]]

# ----------------------------------------------------------------------------- message views


def tool_call_args(call: dict[str, Any]) -> tuple[str, dict[str, Any] | str]:
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict):
        return "", ""
    name: str = fn["name"] if isinstance(fn.get("name"), str) else ""
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
    return [v for v in args.values() if isinstance(v, str)]


Call = tuple[str, "dict[str, Any] | str"]


def parsed_calls(message: Message) -> list[Call]:
    return [tool_call_args(call) for call in message.tool_calls] if message.tool_calls else []


def message_haystack(
    message: Message, text: str | None = None, calls: list[Call] | None = None
) -> str:
    """Everything a reader of the message sees: its text and its tool calls, as a
    terminal shows them (escape sequences and controls dropped: :func:`plain_text`)."""
    text = plain_text(message.text()) if text is None else text
    calls = parsed_calls(message) if calls is None else calls
    if not calls:
        return text
    chunks = [text]
    for name, args in calls:
        chunks.append(name)
        chunks.extend(arg_strings(args))
    return plain_text("\n".join(c for c in chunks if c))


def shell_command(name: str, args: dict[str, Any] | str) -> str | None:
    if not SHELL_TOOLS.search(name):
        return None
    if isinstance(args, str):
        return plain_text(args).strip() or None
    for key in COMMAND_ARGS:
        value = args.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if isinstance(value, str) and value.strip():
            return plain_text(value).strip() or None
    return None


def sentences(text: str) -> Iterable[str]:
    for m in SENTENCE_RE.finditer(text):
        s = m.group(0).strip()
        if s:
            yield s


def shown(text: str, width: int = 160) -> str:
    flat = collapse(text)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# ----------------------------------------------------------------------------- extraction


class _Collector:
    def __init__(self) -> None:
        self.out: Extracted = {c: {} for c in CATEGORIES}

    def add(
        self, category: str, key: str, text: str, index: int, extra: tuple[str, ...] = ()
    ) -> None:
        bucket = self.out[category]
        item = bucket.get(key)
        if item is None:
            item = bucket[key] = Item(category, key, text, [], tuple(extra))
        item.add(index)


def _errors(c: _Collector, text: str, index: int, is_tool: bool) -> None:
    seen_types: set[str] = set()
    for m in TRACEBACK_TAIL_RE.finditer(text):
        etype, msg = m.group(1), (m.group(2) or "").strip()
        seen_types.add(etype)
        c.add(
            ERRORS,
            f"{etype}: {msg}".lower(),
            shown(f"{etype}: {msg}" if msg else etype),
            index,
            (etype, msg),
        )
    for m in EXC_RE.finditer(text):
        etype, msg = m.group(1), (m.group(2) or "").strip()
        generic = etype.lower() in GENERIC_ERRORS
        if etype in seen_types or (not msg and (generic or not is_tool)):
            continue
        c.add(
            ERRORS,
            f"{etype}: {msg}".lower(),
            shown(f"{etype}: {msg}" if msg else etype),
            index,
            (etype, msg),
        )
    for m in TEST_ID_RE.finditer(text) if "FAIL" in text or "ERROR" in text else ():
        test_id = m.group(1) or m.group(2) or m.group(3)
        c.add(
            ERRORS, f"test {test_id}".lower(), f"failing test {test_id}", index, ("test", test_id)
        )
    if is_tool and "exit" in text.lower():
        for m in EXIT_RE.finditer(text):
            if m.group(1) != "0":
                code = m.group(1)
                c.add(ERRORS, f"exit {code}", f"exit code {code}", index, ("exit", code))


def _code_blocks(text: str, calls: list[Call]) -> list[str]:
    """Code written or changed: fenced blocks, write/edit tool arguments and
    the added lines of a diff."""
    blocks = [m.group(2) for m in FENCE_RE.finditer(text)] if "```" in text or "~~~" in text else []
    if "\n+++ " in text or text.startswith("diff --git"):
        blocks.append("\n".join(m.group(1) for m in DIFF_ADDED_RE.finditer(text)))
    for name, args in calls:
        if WRITE_TOOLS.search(name) and isinstance(args, dict):
            for key in ("content", "new", "new_str", "new_string", "text", "code", "patch", "diff"):
                value = args.get(key)
                if isinstance(value, str):
                    blocks.append(value)
    return blocks


def extract(
    messages: Sequence[Message], indices: Iterable[int], root: str | None = None
) -> tuple[Extracted, str | None]:
    """The items of every category in ``messages[i]`` for ``i`` in ``indices``,
    with the work folder that absolute paths were made relative to (``root``,
    else the one :func:`work_root` finds)."""
    c = _Collector()
    raw_paths: list[tuple[str, int]] = []
    last_user: int | None = None
    for index in indices:
        message = messages[index]
        role = message.role
        text = plain_text(message.text())
        calls = parsed_calls(message)
        hay = message_haystack(message, text, calls)
        is_tool = message.is_tool_result()
        low = hay.lower()
        for path in paths_in(hay):
            raw_paths.append((path, index))
        if "://" in hay:
            for m in URL_RE.finditer(hay):
                url = m.group(0).rstrip(".,;:!?")
                c.add(URLS, url.lower().rstrip("/"), url, index)
        for key, number in numbers_in(low, hay):
            c.add(NUMBERS, key, number.strip(), index)
        for name, args in calls:
            command = shell_command(name, args)
            if command:
                c.add(COMMANDS, command_key(command), shown(command), index)
        if any(h in low for h in ERROR_HINTS):
            _errors(c, SYSTEM_TAG_RE.sub("\n", text), index, is_tool)
        for block in _code_blocks(text, calls):
            for m in DEFINITION_RE.finditer(block):
                name = m.group(1) or m.group(2)
                c.add(IDENTIFIERS, name.lower(), name, index)
        if is_tool or role not in ("user", "assistant"):
            continue
        if role == "user":
            last_user = index
        text_low = text.lower()
        wants_req = role == "user" and any(h in text_low for h in REQUIREMENT_HINTS)
        wants_open = any(h in text_low for h in OPEN_HINTS)
        if wants_req or wants_open:
            for sentence in sentences(FENCE_RE.sub(" ", text) if "```" in text else text):
                sentence_low = sentence.lower()
                key = collapse(sentence_low)
                if wants_req and REQUIREMENT_RE.search(sentence_low):
                    c.add(REQUIREMENTS, key, shown(sentence, 240), index)
                if wants_open and OPEN_RE.search(sentence_low):
                    c.add(OPEN_ITEMS, key, shown(sentence, 240), index)
    if last_user is not None:
        text = plain_text(messages[last_user].text()).strip()
        if text:
            c.add(LATEST_REQUEST, collapse(text).lower(), shown(text, 240), last_user)
    if root is None:
        root = work_root(p for p, _ in raw_paths)
    for path, index in raw_paths:
        norm = normalise_path(path, root)
        if norm and norm not in ("/", "~"):
            c.add(FILE_PATHS, norm.lower(), norm, index)
    _merge_bare_names(c.out[FILE_PATHS])
    for bucket in c.out.values():
        for item in bucket.values():
            item.messages.sort()
    return c.out, root


def _merge_bare_names(paths: dict[str, Item]) -> None:
    """A bare ``parse.py`` is the same file as the one ``ledger/parse.py`` seen
    in the range when exactly one such path exists."""
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

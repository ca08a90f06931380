"""Reading kimi-code's ``wire.jsonl`` journal as kimi-code 2.1 reads it.

Lines: the file is split on ``b"\\n"``, one trailing ``\\r`` is dropped and
empty lines are skipped. A line that is not JSON is an error (kimi-code 2.1
cuts the journal there and resumes the prefix; we refuse, since anything we
appended after it would be cut away). A last line without its newline that is
not JSON is a record being written (or torn): ignored with a warning.

Records: every JSON value counts as one *record line* (kimi-code's line
numbers, used by ``agent.switched``); values that are not objects with a
string ``type`` are skipped with a warning. The first record must be the
``metadata`` record of protocol 1.5 (older journals are migrated, and
rewritten, by kimi-code itself; newer ones are not ours to read).

Branches: ``agent.switched {branch, base: {branch, line}}`` starts a branch
(kimi-code's undo). The history is folded from the *restorable chain*: the
active branch back through its bases, without ``context.undone`` records and
the ``context.undo`` records paired with a switch, plus the injected messages
of abandoned branches whose owner prompt survives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import SessionFormatError

PROTOCOL_VERSION = "1.5"
SWITCHED = "agent.switched"
MAIN_BRANCH = "main"

TAIL_NEWLINE = "newline"  # the file ends with "\n" (or is empty)
TAIL_UNTERMINATED = "unterminated"  # the last record is whole but has no "\n"
TAIL_TORN = "torn"  # the last line is a partial record (ignored)


@dataclass
class Entry:
    line: int  # kimi-code's record line (1-based, JSON values only)
    physical: int  # line number in the file, for messages
    record: dict[str, Any]


@dataclass
class Journal:
    entries: list[Entry]
    tail: str
    warnings: list[str] = field(default_factory=list)
    record_lines: int = 0


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)  # JSON.parse has no NaN
_loads = _DECODER.decode


def read_journal(data: bytes, path: Path) -> Journal:
    lines = data.split(b"\n")
    last_index = len(lines) - 1  # the part after the last "\n" (b"" when it ends with one)
    entries: list[Entry] = []
    warnings: list[str] = []
    tail = TAIL_NEWLINE
    record_line = 0
    first_record = True
    for index, raw in enumerate(lines):
        physical = index + 1
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw:
            continue
        text = raw.decode("utf-8", "replace")
        if index == 0 and text.startswith("\ufeff"):
            text = text[1:]  # kimi-code's TextDecoder drops a byte-order mark
        if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
            warnings.append(f"{path}:{physical}: bytes that are not UTF-8 read as U+FFFD")
        try:
            value = _loads(text)
        except RecursionError:
            raise SessionFormatError(f"{path}:{physical}: JSON nested too deeply") from None
        except ValueError as exc:
            if index == last_index:
                tail = TAIL_TORN
                warnings.append(
                    f"{path}:{physical}: the last line is a partial record (no newline); ignored"
                )
                break
            msg = getattr(exc, "msg", str(exc))
            col = getattr(exc, "colno", None)
            at = f", column {col}" if col else ""
            raise SessionFormatError(
                f"{path}:{physical}: invalid JSON ({msg}{at}); kimi-code would cut the "
                "journal at this line"
            ) from None
        if index == last_index:
            tail = TAIL_UNTERMINATED
        record_line += 1
        if type(value) is not dict or type(value.get("type")) is not str:
            warnings.append(f"{path}:{physical}: not a wire record (no string 'type'); skipped")
            continue
        if first_record:
            first_record = False
            _check_metadata(value, path, physical)
        entries.append(Entry(record_line, physical, value))
    if first_record:
        raise SessionFormatError(f"{path}: the journal holds no records")
    return Journal(entries, tail, warnings, record_line)


def _check_metadata(record: dict[str, Any], path: Path, physical: int) -> None:
    if record["type"] != "metadata":
        raise SessionFormatError(
            f"{path}:{physical}: no metadata record first: a journal older than protocol "
            f"{PROTOCOL_VERSION}; open it once in kimi-code 2.1, which migrates it"
        )
    version = record.get("protocol_version")
    if type(version) is not str or type(record.get("created_at")) not in (int, float):
        raise SessionFormatError(f"{path}:{physical}: malformed metadata record")
    if version != PROTOCOL_VERSION:
        raise SessionFormatError(
            f"{path}:{physical}: wire protocol {version}, this tool reads {PROTOCOL_VERSION} "
            "(kimi-code 2.1)"
        )


# --- branches (kimi-code's journal tree) ------------------------------------------------------


@dataclass
class _Edge:
    line: int
    branch: str
    base_branch: str
    base_line: int | float
    legacy_undo_line: int | float | None


@dataclass
class _Segment:
    branch: str
    edge: _Edge | None
    from_line: int
    to_line: int


def _read_edge(entry: Entry) -> _Edge | None:
    record = entry.record
    branch = record.get("branch")
    base = record.get("base")
    if type(branch) is not str or type(base) is not dict:
        return None
    base_branch = base.get("branch")
    base_line = base.get("line")
    if type(base_branch) is not str or type(base_line) not in (int, float):
        return None
    legacy = record.get("legacyUndoLine")
    return _Edge(
        entry.line,
        branch,
        base_branch,
        base_line,  # type: ignore[arg-type]  # checked as a number by _read_edge's caller
        legacy if type(legacy) in (int, float) else None,
    )


def _segments(
    entries: list[Entry], last_line: int, warnings: list[str], path: Path
) -> tuple[list[_Segment], set[int | float]]:
    edges: list[_Edge] = []
    paired: set[int | float] = set()
    for entry in entries:
        if entry.record["type"] != SWITCHED:
            continue
        edge = _read_edge(entry)
        if edge is None:
            warnings.append(f"{path}:{entry.physical}: malformed {SWITCHED} record; ignored")
            continue
        edges.append(edge)
        if edge.legacy_undo_line is not None:
            paired.add(edge.legacy_undo_line)
    segments: list[_Segment] = []
    branch, from_line, opening = MAIN_BRANCH, 1, None
    for edge in edges:
        segments.append(_Segment(branch, opening, from_line, edge.line))
        branch, opening, from_line = edge.branch, edge, edge.line + 1
    segments.append(_Segment(branch, opening, from_line, max(last_line, from_line - 1)))
    return segments, paired


def _active_chain(entries: list[Entry], segments: list[_Segment], path: Path) -> list[Entry]:
    by_branch = {s.branch: s for s in segments}  # a repeated branch name: the last one wins
    out: list[Entry] = []
    visited: set[str] = set()

    def walk(branch: str, upto: int | float | None) -> None:
        if branch in visited:
            raise SessionFormatError(f"{path}: {SWITCHED} bases form a cycle at '{branch}'")
        visited.add(branch)
        segment = by_branch.get(branch)
        if segment is None:
            raise SessionFormatError(f"{path}: {SWITCHED} names an unknown branch '{branch}'")
        if segment.edge is not None:
            walk(segment.edge.base_branch, segment.edge.base_line)
        floor = 1 if segment.edge is None else segment.edge.line + 1
        ceil = segment.to_line if upto is None else upto
        out.extend(e for e in entries if e.record["type"] != SWITCHED and floor <= e.line <= ceil)

    walk(segments[-1].branch, None)
    return out


def _message_of(entry: Entry) -> dict[str, Any] | None:
    if entry.record["type"] != "context.append_message":
        return None
    message = entry.record.get("message")
    if type(message) is dict and type(message.get("role")) is str:
        if type(message.get("content")) is list:
            return message
    return None


def restorable_chain(journal: Journal, path: Path) -> list[Entry]:
    """The records kimi-code folds the history from, in file order."""
    entries = journal.entries
    last_line = entries[-1].line if entries else 0
    segments, paired = _segments(entries, last_line, journal.warnings, path)
    if len(segments) == 1:  # no branches: the whole journal
        return [e for e in entries if e.record["type"] != "context.undone"]
    chain = [
        e
        for e in _active_chain(entries, segments, path)
        if e.record["type"] != "context.undone"
        and not (e.record["type"] == "context.undo" and e.line in paired)
    ]
    on_chain = {e.line for e in chain}
    surviving: set[Any] = set()
    for entry in chain:
        message = _message_of(entry)
        if message is not None and message.get("id") is not None and is_undo_anchor(message):
            surviving.add(message["id"])
    for entry in entries:
        if entry.line in on_chain:
            continue
        message = _message_of(entry)
        origin = message.get("origin") if message is not None else None
        if type(origin) is not dict or origin.get("kind") != "injection":
            continue
        owner = origin.get("ownerPromptId")
        if owner is None or owner in surviving:
            chain.append(entry)
    chain.sort(key=lambda e: e.line)
    return chain


def is_undo_anchor(message: dict[str, Any]) -> bool:
    """A user prompt that kimi-code's undo counts (a turn)."""
    if message.get("role") != "user":
        return False
    origin = message.get("origin")
    if origin is None:
        return True
    if type(origin) is not dict:
        return False
    if origin.get("inTurn") is True:
        return False
    kind = origin.get("kind")
    if kind == "user":
        return True
    return kind in ("skill_activation", "plugin_command") and origin.get("trigger") == "user-slash"

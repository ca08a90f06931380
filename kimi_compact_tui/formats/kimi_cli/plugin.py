"""kimi-cli ``context.jsonl``: message lines plus special records.

Read: every line is kept with its exact text, so an unchanged session is
written back byte for byte. Write: lines that were read are written as they
were; new lines are written the way kimi-cli writes them — special records
with ``json.dumps`` defaults, messages as compact JSON (UTF-8 raw, nulls
dropped at the top level, key order ``role, name, content, tool_calls,
tool_call_id, partial``, a content of exactly one text part as a string).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.summary import COMPACTED_NOTICE, system
from kimi_compact_tui.compaction.tokens import kimi_estimate
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.base import (
    MessagesFile,
    Session,
    SessionInfo,
    SessionMeta,
    splice,
    state_of,
)
from kimi_compact_tui.formats.fastjson import MISS, decoder, plain_message, share_strings
from kimi_compact_tui.formats.kimi_cli import discover as kimi_discover
from kimi_compact_tui.formats.kimi_cli import roles as kimi_roles
from kimi_compact_tui.formats.kimi_cli.checkpoints import CheckpointPairs, checkpoint_message
from kimi_compact_tui.formats.lines import Lines, raw_bytes
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.formats.strategies import Rotate
from kimi_compact_tui.formats.validate import check_message, type_name
from kimi_compact_tui.model import Message

SPECIAL_ROLES = ("_system_prompt", "_checkpoint", "_usage")
# role -> (field, exact type, how the error names it)
SPECIAL_FIELDS = {
    "_system_prompt": ("content", str, "a string"),
    "_usage": ("token_count", int, "an integer"),
    "_checkpoint": ("id", int, "an integer"),
}
KEY_ORDER = ("role", "name", "content", "tool_calls", "tool_call_id", "partial")


class BlankLine(bytes):
    """A blank line in the file, kept so the bytes survive a round trip."""

    __slots__ = ()


class SpecialLine(bytes):
    """A special record's line (``_system_prompt``, ``_checkpoint``, ``_usage``,
    or one unknown), kept as its bytes: what the session needs of it (the
    system prompt, the recorded tokens) is read out at load, and the line is
    written back as it was."""

    __slots__ = ()


@dataclass(frozen=True)
class KimiState:
    """What the kimi-cli plugin keeps of a session: every line in file order
    (messages, and the other lines as their bytes) for the byte-for-byte round
    trip, or None for a rebuilt (compacted) session, written in kimi-cli's
    layout."""

    entries: list[Any] | None
    trailing_newline: bool = True
    # Each ``_checkpoint`` record is followed by its ``<system>CHECKPOINT N</system>``
    # user message (the agent has the D-Mail tool): see checkpoints.py.
    checkpoint_messages: bool = False
    # A rebuilt session: the index of the message the ``_checkpoint`` 0 record is
    # written before (0: right after the system prompt, as kimi-cli writes it).
    checkpoint_at: int = 0


def looks_like_kimi(text: str) -> bool:
    """True when the first records look like kimi-cli special records."""
    for marker in ('"role": "_system_prompt"', '"role": "_checkpoint"', '"role": "_usage"'):
        if marker in text[:65536]:
            return True
    return False


# kimi-cli reads its lines with json.loads(strict=False): raw control characters
# inside strings are allowed.
_LENIENT = json.JSONDecoder(strict=False)


class SkippedLine(bytes):
    """A line kimi-cli itself would skip on resume (malformed JSON, not an
    object, no valid role, an invalid special record or message). Kept so the
    file's bytes survive a round trip; never part of the history, and left out
    of a rebuilt (compacted) file."""

    __slots__ = ()


def _skip_reason(data: Any) -> str | None:
    """Why kimi-cli would skip this decoded line (None: it keeps it)."""
    if type(data) is not dict:
        return f"not a JSON object (a {type_name(data)})"
    role = data.get("role")
    if type(role) is not str:
        return "missing or invalid role"
    rule = SPECIAL_FIELDS.get(role)
    if rule is not None:
        key, kind, described = rule
        value = data.get(key)
        if type(value) is not kind:
            return f"{role} '{key}' must be {described}, got {type_name(value)}"
    return None


def parse(data: bytes, path: Path) -> Session:
    return parse_lines(Lines(path, data=data), path)


def parse_lines(lines: Lines, path: Path) -> Session:
    """Parse a ``context.jsonl`` the way kimi-cli resumes it: a line kimi-cli
    would skip (see :class:`SkippedLine`) is skipped here too, with a warning
    naming it. A file with no valid record at all is an error."""
    entries: list[Any] = []
    messages: list[Message] = []
    warnings: list[str] = []
    system_prompt = None
    recorded = None
    valid = 0
    checkpoints = CheckpointPairs()
    loads = _LENIENT.decode  # one decoder: json.loads(strict=False) builds one per call
    keep = lines.keep
    fast, refused = decoder()
    add_entry, add_message, special = entries.append, messages.append, SPECIAL_FIELDS.get
    for number, start, batch in lines.batches():  # no generator step per line
        lineno, next_offset = number - 1, start
        for raw in batch:
            lineno += 1
            offset, next_offset = next_offset, next_offset + len(raw) + 1
            # The fast decoder takes what it decodes exactly; the rest (blank lines,
            # bad UTF-8, what only the lenient decoder accepts) goes the json way.
            try:
                record = fast(raw)
            except refused:
                record = MISS
            # The common lines, a plain message or a well-formed special record,
            # in one pass (checked as check_message and _skip_reason would, the
            # message's strings shared); anything else the slow way below.
            if type(record) is dict:
                role = record.get("role")
                if type(role) is str:
                    if role[:1] != "_":
                        if plain_message(record):
                            valid += 1
                            if checkpoints.pending is not None:
                                checkpoints.next_record(record)
                            message = Message(record, keep(raw, offset))
                            add_entry(message)
                            add_message(message)
                            continue
                    else:
                        rule = special(role)
                        if rule is None or type(record.get(rule[0])) is rule[1]:
                            valid += 1
                            if role == "_checkpoint":
                                checkpoints.checkpoint(record["id"])
                            elif checkpoints.pending is not None:
                                checkpoints.next_record(record)
                            if role == "_system_prompt":
                                system_prompt = record["content"]
                            elif role == "_usage":
                                recorded = record["token_count"]
                            add_entry(SpecialLine(raw))
                            continue
            line = None
            if record is MISS:
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:  # kimi-cli reads with errors="replace"
                    line = raw.decode("utf-8", "replace")
                    warnings.append(
                        f"{path}:{lineno}: not valid UTF-8 (byte {offset + exc.start}); read with "
                        "replacement characters, as kimi-cli does"
                    )
                if not line.strip():
                    entries.append(BlankLine(raw))
                    continue
            try:
                if line is not None:
                    record = loads(line)
                reason = _skip_reason(record)
                if reason is None and not record["role"].startswith("_"):
                    check_message(record, f"{path}:{lineno}")
            except RecursionError:
                reason = "JSON nested too deeply"
            except ValueError as exc:
                msg = getattr(exc, "msg", str(exc))
                col = getattr(exc, "colno", None)
                reason = f"invalid JSON ({msg}{f', column {col}' if col else ''})"
            except SessionFormatError as exc:
                reason = str(exc).split(": ", 1)[-1]
            if reason is not None:
                warnings.append(f"{path}:{lineno}: skipped, as kimi-cli does on resume: {reason}")
                entries.append(SkippedLine(raw))
                if checkpoints.pending is not None:
                    checkpoints.next_record(None)
                continue
            valid += 1
            role = record["role"]
            if role == "_checkpoint":
                checkpoints.checkpoint(record["id"])
            elif checkpoints.pending is not None:
                checkpoints.next_record(record)
            if role.startswith("_"):
                if role == "_system_prompt":
                    system_prompt = record["content"]
                elif role == "_usage":
                    recorded = record["token_count"]
                entries.append(SpecialLine(raw))
                continue
            share_strings(record)
            message = Message(record, keep(raw, offset))
            entries.append(message)
            messages.append(message)
    if not valid:
        first = warnings[0].split(": skipped, as kimi-cli does on resume: ", 1) if warnings else []
        detail = f" ({first[0]}: {first[1]})" if len(first) == 2 else ""
        raise SessionFormatError(f"{path}: no valid kimi-cli record in the file{detail}")
    return Session(
        SessionRef(path),
        FORMAT,
        messages,
        warnings,
        SessionMeta(system_prompt=system_prompt, recorded_tokens=recorded),
        KimiState(entries, lines.trailing_newline, checkpoints.found),
    )


def dump_special(data: dict[str, Any]) -> str:
    return json.dumps(data)


def dump_message(data: dict[str, Any]) -> str:
    out: dict[str, Any] = {}
    for key in KEY_ORDER:
        value = data.get(key)
        if value is None:
            continue
        if key == "content" and type(value) is list and len(value) == 1:
            part = value[0]
            if type(part) is dict and part.get("type") == "text" and set(part) == {"type", "text"}:
                value = part["text"]
        out[key] = value
    for key, value in data.items():
        if key not in out and key not in KEY_ORDER and value is not None:
            out[key] = value
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def serialize(session: Session) -> bytes:
    state = state_of(session, KimiState)
    lines: list[bytes] = []
    if state.entries is not None:
        for entry in state.entries:
            if isinstance(entry, bytes):  # blank, skipped and special lines
                lines.append(bytes(entry))
            elif entry.raw is not None:
                lines.append(raw_bytes(entry.raw))
            else:
                lines.append(dump_message(entry.data).encode("utf-8"))
    else:
        # A rebuilt session (after compaction): kimi-cli's layout.
        specials: list[dict[str, Any]] = []
        meta = session.meta
        if meta.system_prompt is not None:
            specials.append({"role": "_system_prompt", "content": meta.system_prompt})
        lines.extend(dump_special(d).encode("utf-8") for d in specials)
        at = state.checkpoint_at
        for i, m in enumerate(session.messages):
            if i == at:
                lines.append(dump_special({"role": "_checkpoint", "id": 0}).encode("utf-8"))
            lines.append(raw_bytes(m.raw) if m.raw is not None else dump_message(m.data).encode())  # type: ignore[arg-type]  # bytes, str or RawRef
        if at >= len(session.messages):
            lines.append(dump_special({"role": "_checkpoint", "id": 0}).encode("utf-8"))
        if meta.recorded_tokens is not None:
            usage = {"role": "_usage", "token_count": meta.recorded_tokens}
            lines.append(dump_special(usage).encode("utf-8"))
    out = b"\n".join(lines)
    if lines and (state.trailing_newline or state.entries is None):
        out += b"\n"
    return out


# ----------------------------------------------------------------------------- the plugin

_ROTATED = re.compile(r"^context(_\d+)?\.jsonl$")


class KimiCliFormat(MessagesFile):
    """kimi-cli ``context.jsonl`` (a file, or the session folder holding it).
    Written back the way kimi-cli's ``/compact`` writes: the file is rotated
    to the next ``context_N.jsonl`` and a new one holds ``_system_prompt``,
    ``_checkpoint`` 0, the summary, the kept messages and ``_usage``."""

    name = "kimi"
    label = "kimi-cli context.jsonl"
    agent = "kimi-cli"
    storage = Rotate()
    roles = kimi_roles.ROLES
    tail_skips_bookkeeping = False  # kimi-cli's own scan counts its checkpoint messages

    streams_lines = True

    def recognise(self, path: Path, head: bytes) -> bool:
        if path.suffix.lower() == ".json":
            return False
        return bool(_ROTATED.match(path.name)) or looks_like_kimi(head.decode("utf-8", "ignore"))

    def resolve_folder(self, folder: Path) -> Path | None:
        candidate = folder / "context.jsonl"
        return candidate if candidate.is_file() else None

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        return kimi_discover.discover(env, home)

    def discovery_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [kimi_discover.share_dir(env, home) / "sessions"]

    def find_file(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        return kimi_discover.find_session(session_id, env, home)

    def describe(self, path: Path) -> SessionInfo:
        return kimi_discover.describe_session(path if path.is_dir() else path.parent)

    def short_name(self, ref: SessionRef) -> str:
        path = ref.path
        return f"{path.parent.name}/{path.name}" if path.parent.name else path.name

    def parse(self, data: bytes, path: Path) -> Session:
        return parse(data, path)

    def parse_lines(self, lines: Lines, path: Path) -> Session:
        return parse_lines(lines, path)

    def new_state(self) -> KimiState:
        return KimiState(None)

    def dump(self, session: Session) -> bytes:
        return serialize(session)

    def summary_message(self, summary: str) -> Message:
        return Message.make(
            "user",
            [
                {"type": "text", "text": system(COMPACTED_NOTICE)},
                {"type": "text", "text": summary},
            ],
        )

    def compacted_session(
        self, session: Session, plan: CompactionPlan, summary: str, output_tokens: int | None
    ) -> Session:
        """kimi-cli's ``_usage`` after ``/compact``: the summary's output tokens
        when the provider reported them (else the summary message's characters
        // 4) plus the kept messages' characters // 4. A session with checkpoint
        messages gets checkpoint 0's message before the summary (after the
        leading system messages, so they stay leading), as kimi-cli writes it;
        like kimi-cli, its ``_usage`` does not count that message."""
        messages = splice(session, plan, self.summary_message(summary))
        after = messages[plan.leading :]
        if output_tokens is not None:
            recorded = output_tokens + kimi_estimate(after[1:])
        else:
            recorded = kimi_estimate(after)
        meta = SessionMeta(session.meta.system_prompt, recorded)
        state = KimiState(None)
        if state_of(session, KimiState).checkpoint_messages:
            messages.insert(plan.leading, checkpoint_message(0))
            state = KimiState(None, checkpoint_messages=True, checkpoint_at=plan.leading)
        return Session(session.ref, self, messages, meta=meta, format_state=state)

    def rotation_name(self, path: Path, number: int) -> str:
        return f"{path.stem}_{number}{path.suffix}"

    def rotation_number(self, path: Path, name: str) -> int | None:
        m = re.fullmatch(rf"{re.escape(path.stem)}_(\d+){re.escape(path.suffix)}", name)
        return int(m.group(1)) if m else None


FORMAT = KimiCliFormat()

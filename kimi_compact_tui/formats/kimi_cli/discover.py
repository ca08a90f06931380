"""The kimi-cli sessions on this machine, labelled cheaply for the picker.

kimi-cli keeps its data in ``$KIMI_SHARE_DIR`` (default ``~/.kimi``): each
session is a folder ``sessions/<md5 of the work folder>/<session id>/`` with
``context.jsonl`` (the messages), ``wire.jsonl`` (the turns: the first
``TurnBegin`` user input is the session's title) and ``state.json`` (a title
the user set, ``custom_title``); ``kimi.json`` lists the work folders.

Nothing here reads a whole session to label it: a title comes from the
first kilobytes of ``wire.jsonl`` or ``context.jsonl``, the message count
from counting lines (skipped above :data:`COUNT_LIMIT` bytes), and the
parse check decodes the lines in the first and last :data:`PROBE_BYTES`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.base import SessionInfo
from kimi_compact_tui.formats.storage import SessionRef

FORMAT_NAME = "kimi"
CONTEXT = "context.jsonl"
WIRE = "wire.jsonl"
STATE = "state.json"
PROBE_BYTES = 64 * 1024  # decoded at each end of context.jsonl
WIRE_HEAD_BYTES = 256 * 1024  # searched for the first TurnBegin
COUNT_LIMIT = 32 * 1024 * 1024  # larger files: message count not shown
CHUNK = 1024 * 1024


def share_dir(env: Mapping[str, str], home: Path) -> Path:
    """``$KIMI_SHARE_DIR``, else ``~/.kimi``."""
    value = env.get("KIMI_SHARE_DIR")
    return Path(value).expanduser() if value else home / ".kimi"


def work_dirs_by_hash(share: Path) -> dict[str, str]:
    """md5(work folder) -> work folder, from ``kimi.json`` when it can be read."""
    try:
        data = json.loads((share / "kimi.json").read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    entries = data.get("work_dirs") if isinstance(data, dict) else None
    out: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        path = entry.get("path") if isinstance(entry, dict) else entry
        if isinstance(path, str):
            out[hashlib.md5(path.encode("utf-8")).hexdigest()] = path
    return out


def _text_of(content: Any) -> str | None:
    """The text of a message content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
        return " ".join(texts)
    return None


def _clean(text: str | None) -> str | None:
    return (text.strip() or None) if isinstance(text, str) else None


def state_title(folder: Path) -> str | None:
    """The title the user gave the session (``state.json`` ``custom_title``)."""
    try:
        with (folder / STATE).open("rb") as fh:
            data = json.loads(fh.read(PROBE_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    return _clean(data.get("custom_title")) if isinstance(data, dict) else None


def wire_title(wire: Path) -> str | None:
    """The first ``TurnBegin`` user input in ``wire.jsonl`` (a bounded read)."""
    try:
        with wire.open("rb") as fh:
            head = fh.read(WIRE_HEAD_BYTES)
    except OSError:
        return None
    for raw in head.split(b"\n"):
        if b"TurnBegin" not in raw:
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        message = record.get("message") if isinstance(record, dict) else None
        if not isinstance(message, dict) or message.get("type") != "TurnBegin":
            continue
        payload = message.get("payload")
        title = _clean(_text_of(payload.get("user_input"))) if isinstance(payload, dict) else None
        if title:
            return title
    return None


def _read_ends(path: Path, size: int) -> tuple[bytes, bytes]:
    """The first and last :data:`PROBE_BYTES` of ``path`` (the tail is empty
    when the head holds the whole file)."""
    with path.open("rb") as fh:
        head = fh.read(PROBE_BYTES)
        if size <= PROBE_BYTES:
            return head, b""
        fh.seek(max(PROBE_BYTES, size - PROBE_BYTES))
        return head, fh.read()


def _check_line(raw: bytes) -> str | None:
    """Why ``raw`` is not a kimi-cli record, or None."""
    try:
        record = json.loads(raw)
    except UnicodeDecodeError:
        return "is not UTF-8"
    except (ValueError, RecursionError):
        return "is not valid JSON"
    if not isinstance(record, dict) or not isinstance(record.get("role"), str):
        return "is not a kimi-cli record (no role)"
    return None


def count_messages(path: Path, size: int) -> int | None:
    """Non-empty lines that are not special records (``_usage``,
    ``_checkpoint``, ``_system_prompt``), counted without decoding JSON;
    None above :data:`COUNT_LIMIT` bytes."""
    if size > COUNT_LIMIT:
        return None
    count = 0
    rest = b""
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()  # the line the next chunk continues
            count += sum(1 for line in lines if _is_message_line(line))
    return count + _is_message_line(rest)


def _is_message_line(line: bytes) -> bool:
    head = line[:16].replace(b" ", b"")
    return bool(line.strip()) and not head.startswith(b'{"role":"_')


def wire_time(wire: Path) -> float | None:
    """The ``timestamp`` of the last record of ``wire.jsonl`` (read from its end), or None."""
    try:
        with open(wire, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - 4096))
            last = fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        record = json.loads(last)  # a line cut by the 4 KB read does not parse
    except (OSError, ValueError, RecursionError):
        return None
    stamp = record.get("timestamp") if isinstance(record, dict) else None
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)):
        return None
    return float(stamp)


def describe_session(folder: Path, work_dir: str | None = None) -> SessionInfo:
    """One session folder, labelled: title, work folder, time, count, error."""
    info = SessionInfo(
        ref=SessionRef(folder), format=FORMAT_NAME, work_dir=work_dir, session_id=folder.name
    )
    context = folder / CONTEXT
    try:
        stat = context.stat()
    except FileNotFoundError:
        info.error = f"no {CONTEXT} in the session folder"
        info.title = state_title(folder) or wire_title(folder / WIRE)
        return info
    except OSError as exc:
        info.error = f"cannot read {CONTEXT} ({exc.strerror or exc})"
        return info
    info.updated = stat.st_mtime
    info.last_record = wire_time(folder / WIRE)
    try:
        head, tail = _read_ends(context, stat.st_size)
        if not head.strip() and stat.st_size <= len(head):
            info.error = f"{CONTEXT}: file is empty"  # as loading it says
            return info
        if stat.st_size <= len(head):  # the whole file is in hand
            info.message_count = sum(map(_is_message_line, head.split(b"\n")))
        else:
            info.message_count = count_messages(context, stat.st_size)
    except OSError as exc:
        info.error = f"cannot read {CONTEXT} ({exc.strerror or exc})"
        return info
    first_user, info.error = _probe(head, tail, stat.st_size)
    if info.error:
        info.message_count = None  # lines of a file that cannot be read are not messages
    info.title = state_title(folder) or wire_title(folder / WIRE) or first_user
    return info


def _probe(head: bytes, tail: bytes, size: int) -> tuple[str | None, str | None]:
    """(the first user message's text, why the file cannot be parsed) from
    the decoded ends of ``context.jsonl``."""
    first_user = None
    lines = head.split(b"\n")
    if size > len(head):
        lines = lines[:-1]  # cut by the probe: checked only if it is the tail's
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        why = _check_line(raw)
        if why:
            return first_user, f"{CONTEXT}: line {number} {why}"
        if first_user is None and b'"user"' in raw:
            record = json.loads(raw)
            if record.get("role") == "user":
                first_user = _clean(_text_of(record.get("content")))
    if tail:
        last = tail.rstrip(b"\n").rsplit(b"\n", 1)
        if len(last) == 2 and last[1].strip():
            why = _check_line(last[1])
        else:  # a last line longer than the probe: a record ends with "}"
            why = None if tail.rstrip().endswith(b"}") else "is not valid JSON"
        if why:
            return first_user, f"{CONTEXT}: the last line {why} (cut short?)"
    return first_user, None


def session_folders(share: Path) -> list[Path]:
    """Every ``sessions/<hash>/<id>`` folder (one ``scandir`` per level)."""
    root = share / "sessions"
    out: list[Path] = []
    try:
        groups = [e for e in os.scandir(root) if e.is_dir()]
    except OSError:
        return out
    for group in groups:
        try:
            out += [Path(e.path) for e in os.scandir(group.path) if e.is_dir()]
        except OSError:
            continue
    return out


def discover(env: Mapping[str, str], home: Path) -> list[SessionInfo]:
    """The kimi-cli sessions under ``$KIMI_SHARE_DIR`` (or ``~/.kimi``),
    newest first; a session that cannot be parsed carries ``error``."""
    share = share_dir(env, home)
    folders = work_dirs_by_hash(share)
    found = [describe_session(f, folders.get(f.parent.name)) for f in session_folders(share)]
    found.sort(key=lambda s: s.updated or 0.0, reverse=True)
    return found


def find_session(session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
    """The folder of the kimi-cli session with this id (``sessions/<hash>/<id>``),
    or None. An id in two work folders is the newest."""
    if not session_id or session_id.startswith(".") or "/" in session_id or "\\" in session_id:
        return None
    root = share_dir(env, home) / "sessions"
    try:
        groups = [e.path for e in os.scandir(root) if e.is_dir()]
    except OSError:
        return None
    found = [Path(g) / session_id for g in groups if (Path(g) / session_id / CONTEXT).is_file()]
    if not found:
        return None
    return max(found, key=lambda p: (p / CONTEXT).stat().st_mtime)

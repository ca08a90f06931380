"""kimi-cli's ledger: its rotations.

kimi-cli compacts by rotating: the context as it was goes to the next free
``context_N.jsonl`` and a new ``context.jsonl`` starts with the summary (a user
message whose first part is the compaction notice, then the summary) and the
messages it kept. So each rotation followed by a file that starts that way is
a compaction, and the rotated file holds what it replaced. A rotation followed
by anything else (``/clear``, a D-Mail back to a checkpoint) is not one. The
time is the rotated file's modification time; the tokens are its last
``_usage`` and the next file's first. The trigger is not recorded.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from kimi_compact_tui.compaction.summary import COMPACTED_NOTICE
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.context import whole
from kimi_compact_tui.formats.ledger import Compaction, parse_bytes
from kimi_compact_tui.model import Message

NOTICE = f"<system>{COMPACTED_NOTICE}</system>"


def _summary(messages: list[Message]) -> tuple[int, str] | None:
    """(the index of the summary message, its summary text), or None."""
    for i, m in enumerate(messages):
        if m.role == "system":
            continue
        parts = m.text_parts()
        if m.role == "user" and parts and parts[0].strip() == NOTICE:
            return i, "\n".join(parts[1:])
        return None
    return None


def _first_usage(data: bytes) -> int | None:
    for line in data.split(b"\n"):
        if b'"_usage"' in line:
            try:
                return whole(json.loads(line).get("token_count"))
            except (ValueError, AttributeError):
                return None
    return None


def compactions(session: Session) -> list[Compaction]:
    path = session.path
    if path is None:
        return []
    fmt = session.format
    try:
        names = [p for p in path.parent.iterdir() if p.is_file()]
    except OSError:
        return []
    numbered = sorted((n, p) for p in names if (n := fmt.rotation_number(path, p.name)) is not None)
    chain: list[Path] = [p for _, p in numbered] + [path]
    out: list[Compaction] = []
    for older, newer in zip(chain, chain[1:], strict=False):
        try:
            data = newer.read_bytes()
            after = session if newer == path else parse_bytes(fmt, data, newer)
        except Exception:  # noqa: BLE001 - an unreadable file: not listed
            continue
        found = _summary(list(after.messages))
        if found is None:
            continue
        index, summary = found
        stamp = time.gmtime(older.stat().st_mtime)
        entry = Compaction(
            time=time.strftime("%Y-%m-%dT%H:%M:%SZ", stamp),
            trigger=None,
            summary=summary,
            tokens_after=_first_usage(data),
            source=str(older),
        )
        try:
            before = parse_bytes(fmt, older.read_bytes(), older)
        except Exception as exc:  # noqa: BLE001 - then what it replaced is not judged
            entry.notes.append(f"{older.name} could not be read ({exc})")
        else:
            entry.before = list(before.messages)
            entry.tokens_before = before.meta.recorded_tokens
            later = list(after.messages[index + 1 :])
            entry.kept_messages = [m for m in later if m in entry.before]
        out.append(entry)
    return out

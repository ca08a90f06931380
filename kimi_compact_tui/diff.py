"""Message-level diff of two sessions: what a compaction kept, removed and added.

``diff_sessions(before, after)`` pairs messages whose data is equal (a
compaction keeps messages verbatim), in order. The common prefix and suffix
are matched first by identity or identical source line, without hashing,
which makes the compaction case (leading system messages, summary, kept tail)
linear and cheap; each message left in the middle has its JSON hashed once
(keys sorted, so key order does not matter, like ``dict`` equality) and is
matched with :class:`difflib.SequenceMatcher` (``autojunk=False``), which is
correct for any pair of sessions.

Rows come in display order: at each difference, the removed messages first,
then the added ones, then the next kept message. ``format_diff`` is the plain
text the ``diff`` command prints; ``SessionDiff.to_json`` its ``--json`` form.
The TUI shows the same rows.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kimi_compact_tui.compaction.tokens import message_tokens
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.model import Message
from kimi_compact_tui.previews import message_preview
from kimi_compact_tui.sanitize import one_line
from kimi_compact_tui.wording import count, number

KEPT = "kept"
REMOVED = "removed"
ADDED = "added"
MARKERS = {KEPT: "=", REMOVED: "-", ADDED: "+"}


@dataclass(frozen=True)
class DiffRow:
    """One message of the diff. Indices are 0-based (``None`` on the side
    where the message does not exist); ``tokens`` is ``message_tokens``."""

    kind: str  # "kept" | "removed" | "added"
    before_index: int | None
    after_index: int | None
    message: Message
    tokens: int

    @property
    def marker(self) -> str:
        return MARKERS[self.kind]

    @property
    def number(self) -> int:
        """The 1-based message number shown to people: the number in the
        "before" session, or in the "after" session for an added message."""
        index = self.before_index if self.before_index is not None else self.after_index
        return (index or 0) + 1

    def to_json(self, *, with_message: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "before_index": self.before_index,
            "after_index": self.after_index,
            "role": self.message.role,
            "tokens": self.tokens,
            "preview": preview(self.message),
        }
        if with_message:
            out["message"] = self.message.data
        return out


@dataclass
class SessionDiff:
    rows: list[DiffRow]
    tokens_before: int
    tokens_after: int
    before_count: int
    after_count: int
    before_path: str | None = None
    after_path: str | None = None
    recorded_before: int | None = None  # kimi-cli ``_usage`` figures, when present
    recorded_after: int | None = None
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.counts:
            counts = {KEPT: 0, REMOVED: 0, ADDED: 0}
            for row in self.rows:
                counts[row.kind] += 1
            self.counts = counts

    @property
    def kept(self) -> int:
        return self.counts[KEPT]

    @property
    def removed(self) -> int:
        return self.counts[REMOVED]

    @property
    def added(self) -> int:
        return self.counts[ADDED]

    @property
    def identical(self) -> bool:
        return self.removed == 0 and self.added == 0

    @property
    def tokens_removed(self) -> int:
        return sum(r.tokens for r in self.rows if r.kind == REMOVED)

    @property
    def tokens_added(self) -> int:
        return sum(r.tokens for r in self.rows if r.kind == ADDED)

    def summary_line(self) -> str:
        saved = self.tokens_before - self.tokens_after
        pct = f" ({saved * 100 // self.tokens_before}%)" if self.tokens_before and saved > 0 else ""
        return (
            f"{number(self.kept)} kept, {number(self.removed)} removed, {number(self.added)} added; "
            f"~{number(self.tokens_before)} tokens before, ~{number(self.tokens_after)} after"
            + (f", ~{number(saved)} saved{pct}" if saved > 0 else "")
        )

    def to_json(self, *, with_messages: bool = False) -> dict[str, Any]:
        return {
            "before": {
                "path": self.before_path,
                "messages": self.before_count,
                "tokens": self.tokens_before,
                "recorded_tokens": self.recorded_before,
            },
            "after": {
                "path": self.after_path,
                "messages": self.after_count,
                "tokens": self.tokens_after,
                "recorded_tokens": self.recorded_after,
            },
            "counts": dict(self.counts),
            "tokens_removed": self.tokens_removed,
            "tokens_added": self.tokens_added,
            "rows": [r.to_json(with_message=with_messages) for r in self.rows],
        }


def message_key(message: Message) -> bytes:
    """A digest of the message data, equal exactly when the data is equal
    (key order ignored)."""
    text = json.dumps(message.data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _same(x: Message, y: Message) -> bool:
    """A cheap "certainly equal": the same object, the same data, or the same
    source line. False means "unknown" (the keys decide)."""
    if x is y or x.data is y.data:
        return True
    return x.raw is not None and x.raw == y.raw


def _signature(message: Message) -> tuple[Any, ...]:
    """Cheap facts equal messages share; messages whose signature appears on
    only one side cannot match and are never hashed."""
    data = message.data
    content = data.get("content")
    size = len(content) if isinstance(content, (str, list)) else -1
    return (data.get("role"), type(content), size, len(data))


def _middle_keys(a: Sequence[Message], b: Sequence[Message]) -> tuple[list[Any], list[Any]]:
    if not a or not b:
        return [], []
    sig_a = [_signature(x) for x in a]
    sig_b = [_signature(x) for x in b]
    common = set(sig_a).intersection(sig_b)
    keys_a: list[Any] = [
        message_key(x) if s in common else ("a", i)
        for i, (x, s) in enumerate(zip(a, sig_a, strict=True))
    ]
    keys_b: list[Any] = [
        message_key(x) if s in common else ("b", j)
        for j, (x, s) in enumerate(zip(b, sig_b, strict=True))
    ]
    return keys_a, keys_b


def match_messages(a: Sequence[Message], b: Sequence[Message]) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of equal messages forming an in-order matching of
    ``a`` and ``b``. The common start and end are matched first without
    hashing (a compaction keeps the very same messages, so this is linear and
    cheap); only the middle is keyed and given to ``SequenceMatcher``."""
    n, m = len(a), len(b)
    pre = 0
    while pre < n and pre < m and _same(a[pre], b[pre]):
        pre += 1
    suf = 0
    while suf < n - pre and suf < m - pre and _same(a[n - 1 - suf], b[m - 1 - suf]):
        suf += 1
    pairs = [(i, i) for i in range(pre)]
    mid_a, mid_b = _middle_keys(a[pre : n - suf], b[pre : m - suf])
    if mid_a and mid_b:
        matcher = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False)
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                pairs.append((pre + block.a + k, pre + block.b + k))
    pairs.extend((n - suf + k, m - suf + k) for k in range(suf))
    return pairs


def diff_messages(
    before: Sequence[Message],
    after: Sequence[Message],
    *,
    before_tokens: Sequence[int] | None = None,
    after_tokens: Sequence[int] | None = None,
) -> list[DiffRow]:
    """The diff rows of two message lists. Token counts may be passed when
    already computed; otherwise they are estimated, and for the after side
    only for messages that were not kept (a kept message has the same count)."""
    bt = list(before_tokens) if before_tokens is not None else [message_tokens(x) for x in before]

    def after_count(j: int) -> int:
        return after_tokens[j] if after_tokens is not None else message_tokens(after[j])

    pairs = match_messages(before, after)
    rows: list[DiffRow] = []
    i = j = 0
    for pi, pj in [*pairs, (len(before), len(after))]:
        while i < pi:
            rows.append(DiffRow(REMOVED, i, None, before[i], bt[i]))
            i += 1
        while j < pj:
            rows.append(DiffRow(ADDED, None, j, after[j], after_count(j)))
            j += 1
        if pi < len(before) and pj < len(after):
            rows.append(DiffRow(KEPT, pi, pj, before[pi], bt[pi]))
            i, j = pi + 1, pj + 1
    return rows


def diff_sessions(
    before: Session, after: Session, *, before_tokens: Sequence[int] | None = None
) -> SessionDiff:
    """The message-level diff of ``before`` and ``after`` (pass
    ``before_tokens`` when the per-message estimates are already known)."""
    with gc_paused():
        rows = diff_messages(before.messages, after.messages, before_tokens=before_tokens)
    tokens_before = (
        sum(before_tokens)
        if before_tokens is not None
        else sum(r.tokens for r in rows if r.kind != ADDED)
    )
    return SessionDiff(
        rows=rows,
        tokens_before=tokens_before,
        tokens_after=sum(r.tokens for r in rows if r.kind != REMOVED),
        before_count=len(before.messages),
        after_count=len(after.messages),
        before_path=str(before.path) if before.path is not None else None,
        after_path=str(after.path) if after.path is not None else None,
        recorded_before=before.meta.recorded_tokens,
        recorded_after=after.meta.recorded_tokens,
    )


def preview(message: Message, width: int = 72) -> str:
    """The one-line preview every view shows (:func:`kimi_compact_tui.previews.message_preview`)."""
    return message_preview(message, width)


def format_diff(diff: SessionDiff, *, context: int | None = None, width: int = 72) -> str:
    """Plain text: a header, one line per message (marker, number in the
    before session / number in the after session, role, tokens, preview) and
    a totals line. With ``context``, runs of kept messages longer than
    ``2 * context + 1`` are shortened to their first and last ``context``."""
    lines = [
        f"--- {diff.before_path or 'before'}: {count(diff.before_count, 'message')}, "
        f"~{number(diff.tokens_before)} tokens"
        + (
            f" (recorded {number(diff.recorded_before)})"
            if diff.recorded_before is not None
            else ""
        ),
        f"+++ {diff.after_path or 'after'}: {count(diff.after_count, 'message')}, "
        f"~{number(diff.tokens_after)} tokens"
        + (f" (recorded {number(diff.recorded_after)})" if diff.recorded_after is not None else ""),
    ]
    nb = len(str(max(diff.before_count, 1)))
    na = len(str(max(diff.after_count, 1)))

    def row_line(row: DiffRow) -> str:
        b = str(row.before_index + 1) if row.before_index is not None else "."
        a = str(row.after_index + 1) if row.after_index is not None else "."
        role = one_line(str(row.message.role), 12)
        return (
            f"{row.marker} {b:>{nb}} {a:>{na}}  {role:<9} {row.tokens:>7,} tok  "
            f"{preview(row.message, width)}"
        )

    rows = diff.rows
    k = 0
    while k < len(rows):
        if context is not None and rows[k].kind == KEPT:
            end = k
            while end < len(rows) and rows[end].kind == KEPT:
                end += 1
            run = end - k
            if run > 2 * context + 1:
                lines.extend(row_line(r) for r in rows[k : k + context])
                hidden = rows[k + context : end - context]
                lines.append(
                    f"= … {count(len(hidden), 'kept message')} "
                    f"(~{number(sum(r.tokens for r in hidden))} tokens) not shown"
                )
                lines.extend(row_line(r) for r in rows[end - context : end])
            else:
                lines.extend(row_line(r) for r in rows[k:end])
            k = end
            continue
        lines.append(row_line(rows[k]))
        k += 1
    lines.append(diff.summary_line())
    return "\n".join(lines) + "\n"

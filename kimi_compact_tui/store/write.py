"""Writing a compacted session back, as its format's write policy says.

The rules, in the order they run:

1. **Conflict check.** The file is read again; its fingerprint must be the
   one taken when it was loaded, else nothing is written.
2. **Keep a copy first** (:mod:`store.keep`): the current file becomes the
   next rotation ("rotate", what kimi-cli's ``/compact`` leaves behind) or a
   timestamped backup ("backup", and "append" too). The copy is whole before
   anything else happens; the file's size and mtime are checked once more.
3. **Write.** "rotate" and "backup": an atomic replace keeping the mode.
   "append": the format's records are appended and fsynced; earlier bytes
   never change. A crash at any moment leaves the old file or the new one,
   whole, and the copy is there.
4. **Failure.** Any ``OSError`` becomes one ``ApplyError`` line naming the
   file; the copy made by this call is removed again while the session still
   holds the old bytes.
5. **Audit** (:mod:`store.audit`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.store import audit
from kimi_compact_tui.store.durable import (
    append_durable,
    atomic_write_bytes,
    os_error_line,
    step,
)
from kimi_compact_tui.store.fingerprint import Fingerprint, conflict_message, read_fingerprinted
from kimi_compact_tui.store.keep import drop_copy, keep_copy
from kimi_compact_tui.wording import count, number


@dataclass(frozen=True)
class Provenance:
    """Where a summary came from, for the audit record (never a key, never text
    of the session or the summary)."""

    prompt: PromptSource | None = None
    provider: str | None = None  # the provider's kind ("offline", "openai", ...)
    provider_detail: str | None = None  # kind, model, URL without credentials
    model: str | None = None
    usage: Mapping[str, Any] | None = None


def now_utc(now: datetime | None = None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    return now if now.tzinfo else now.replace(tzinfo=UTC)


@dataclass
class ApplyResult:
    path: Path  # the session file written
    backup_path: Path  # the rotation or backup holding the previous version
    format: str
    policy: str
    messages_before: int
    messages_after: int
    compacted: int  # messages replaced by the summary
    kept: int  # messages kept verbatim (leading system + tail)
    before: Fingerprint
    after_sha256: str
    after_size: int
    audit_path: Path | None = None
    audit_error: str | None = None
    written: list[Path] = field(default_factory=list)

    def describe(self) -> str:
        how = "appended to" if self.policy == "append" else "wrote"
        line = (
            f"{how.capitalize()} {self.path} ({count(self.messages_before, 'message')} → "
            f"{number(self.messages_after)}: {number(self.compacted)} compacted into the summary, "
            f"{number(self.kept)} kept); "
            f"the previous version is {self.backup_path}"
        )
        if self.audit_error:
            line += f"\nwarning: {self.audit_error}"
        return line


def _check(source: Session, compacted: Session, summary: str, plan: CompactionPlan) -> Path:
    if source.path is None:
        raise ApplyError("the session has no file to write to")
    path = Path(source.path)
    if compacted.format is not source.format:
        raise ApplyError(
            f"{path}: the compacted session is {compacted.format.name}, "
            f"the file is {source.format.name}"
        )
    if plan.noop:
        raise ApplyError(f"{path}: nothing to write: {plan.noop}")
    if not summary or not summary.strip():
        raise ApplyError(f"{path}: nothing written: the summary is empty")
    # the messages the compaction adds (between the leading system messages and
    # the kept ones: the summary, and what the format writes beside it)
    added = compacted.messages[plan.leading : len(compacted.messages) - len(plan.preserved_indices)]
    if not any(m.text().endswith(summary) for m in added):
        raise ApplyError(
            f"{path}: nothing written: the compacted session does not hold the reviewed summary"
        )
    return path


def apply_compaction(
    source_session: Session,
    compacted_session: Session,
    *,
    loaded_fingerprint: Fingerprint,
    summary: str,
    plan: CompactionPlan,
    provenance: Provenance,
    now: datetime | None = None,
) -> ApplyResult:
    """Write ``compacted_session`` for ``source_session`` (see the module docstring)."""
    path = _check(source_session, compacted_session, summary, plan)
    when = now_utc(now)
    try:
        old_bytes, current, mode = read_fingerprinted(path)
    except OSError as exc:
        raise ApplyError(os_error_line(path, exc, "read the session")) from None
    if current != loaded_fingerprint:
        raise ApplyError(conflict_message(path, loaded_fingerprint, current))
    step("checked")
    # Built after the check: kept lines are read back from the (unchanged) file.
    fmt = source_session.format
    op = fmt.write_op(source_session, compacted_session)

    backup: Path | None = None
    try:
        backup = keep_copy(path, fmt, old_bytes, mode, current.mtime_ns, when)
        step("backup-done")
        st = os.stat(path)
        if st.st_size != current.size or st.st_mtime_ns != current.mtime_ns:
            drop_copy(path, current.sha256, backup)
            backup = None
            changed = Fingerprint(st.st_size, st.st_mtime_ns, "(changed)")
            raise ApplyError(conflict_message(path, current, changed))
        if op.policy == "append":
            append_durable(path, op.data, current.size)
            new_size = current.size + len(op.data)
            after_sha = hashlib.sha256(old_bytes + op.data).hexdigest()
        else:
            atomic_write_bytes(path, op.data, mode=mode)
            new_size = len(op.data)
            after_sha = hashlib.sha256(op.data).hexdigest()
        step("replaced")
    except FileExistsError:
        drop_copy(path, current.sha256, backup)
        raise ApplyError(conflict_message(path, current, Fingerprint(-1, 0, "(grew)"))) from None
    except OSError as exc:
        drop_copy(path, current.sha256, backup)
        raise ApplyError(os_error_line(path, exc, "write the compacted session")) from None

    n = len(source_session.messages)
    leading, boundary = plan.leading, plan.boundary
    usage = provenance.usage
    record = {
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "action": "apply",
        "tool": audit.tool_name(),
        "source": str(path),
        "format": fmt.name,
        "policy": op.policy,
        "backup": str(backup),
        "before": {"size": current.size, "sha256": current.sha256, "messages": n},
        "after": {
            "size": new_size,
            "sha256": after_sha,
            "messages": len(compacted_session.messages),
        },
        "indices": {
            "base": 0,
            "ranges": "half-open [start, stop) in the source session",
            "leading_system": [0, leading],
            "compacted": [leading, boundary],
            "kept": [boundary, n],
        },
        "plan": {
            "mode": plan.mode,
            "up_to": plan.up_to,
            "max_preserved_messages": plan.max_preserved_messages,
        },
        "prompt": audit.prompt_json(provenance.prompt),
        "provider": audit.scrub_text(provenance.provider) if provenance.provider else None,
        "provider_detail": (
            audit.scrub_text(provenance.provider_detail) if provenance.provider_detail else None
        ),
        "model": audit.scrub_text(provenance.model) if provenance.model else None,
        "usage": audit.numbers_only(dict(usage)) if isinstance(usage, Mapping) else None,
        "summary_sha256": hashlib.sha256(summary.encode("utf-8", "surrogatepass")).hexdigest(),
        "summary_chars": len(summary),
    }
    if op.policy == "append":
        record["appended"] = {
            "offset": current.size,
            "size": len(op.data),
            "sha256": hashlib.sha256(op.data).hexdigest(),
        }
    log, audit_error = audit.append_audit(path, fmt, record, mode)
    step("audited")
    return ApplyResult(
        path=path,
        backup_path=backup,
        format=fmt.name,
        policy=op.policy,
        messages_before=n,
        messages_after=len(compacted_session.messages),
        compacted=boundary - leading,
        kept=leading + (n - boundary),
        before=current,
        after_sha256=after_sha,
        after_size=new_size,
        audit_path=None if audit_error else log,
        audit_error=audit_error,
        written=[backup, path] + ([] if audit_error else [log]),
    )

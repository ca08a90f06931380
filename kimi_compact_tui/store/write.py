"""Writing a compacted session back, through its format's write strategy.

The store checks what is the same for every format, then drives the strategy
(``SessionFormat.storage``, ``formats/strategies.py``), which owns, in this
order:

1. **the conflict check**: the session's own content (a file's bytes, a
   database session's rows) must still have the fingerprint taken when it was
   loaded, else nothing is written;
2. **the copy kept first**: the next rotation, a timestamped backup, or a
   database session's rows exported; whole before anything else happens;
3. **the write**: an atomic replace, an append, or one transaction. A crash at
   any moment leaves the old session or the new one, whole, and the copy;
4. **failure**: one ``ApplyError`` line naming the session; the copy made is
   removed again while the session still holds the old content.

Then the store writes the **audit** record (:mod:`store.audit`), keyed by the
session reference.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.durable import step
from kimi_compact_tui.formats.storage import Fingerprint, Located, SessionRef
from kimi_compact_tui.hooks.pending import clear_written
from kimi_compact_tui.store import audit
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
    #: A revision of an earlier summary by feedback: the rounds of feedback its
    #: request sent, and how many older ones were left out to fit (None: not one).
    revision: tuple[int, int] | None = None


def now_utc(now: datetime | None = None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    return now if now.tzinfo else now.replace(tzinfo=UTC)


@dataclass
class ApplyResult(Located):
    ref: SessionRef  # the session written (its file and key)
    backup_path: Path  # the rotation or backup holding the previous version
    format: str
    policy: str  # the strategy's name (for people and the audit log)
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
    verb: str = "wrote"  # how the strategy tells its write ("appended to")

    def describe(self) -> str:
        line = (
            f"{self.verb.capitalize()} {self.ref} "
            f"({count(self.messages_before, 'message')} → {number(self.messages_after)}: "
            f"{number(self.compacted)} compacted into the summary, {number(self.kept)} kept); "
            f"the previous version is {self.backup_path}"
        )
        if self.audit_error:
            line += f"\nwarning: {self.audit_error}"
        return line


def _check(source: Session, compacted: Session, summary: str, plan: CompactionPlan) -> SessionRef:
    if not source.saved:
        raise ApplyError("the session has no file to write to")
    path = source.ref
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
    if compacted.ref != source.ref:
        raise ApplyError(f"{path}: the compacted session is of another session ({compacted.ref})")
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
    ref = _check(source_session, compacted_session, summary, plan)
    path = ref.path
    when = now_utc(now)
    fmt = source_session.format
    strategy = fmt.storage
    written = strategy.write(source_session, compacted_session, loaded_fingerprint, when)
    current, backup = written.before, written.backup

    n = len(source_session.messages)
    leading, boundary = plan.leading, plan.boundary
    usage = provenance.usage
    record = {
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "action": "apply",
        "tool": audit.tool_name(),
        "source": str(path),
        **({"key": ref.key} if ref.key is not None else {}),
        "format": fmt.name,
        "policy": strategy.name,
        "backup": str(backup),
        "before": {"size": current.size, "sha256": current.sha256, "messages": n},
        "after": {
            "size": written.after.size,
            "sha256": written.after.sha256,
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
    if provenance.revision is not None:  # the summary is a revision, and says so
        rounds, left_out = provenance.revision
        record["revision"] = {"rounds": rounds, "left_out": left_out}
    record.update(written.undo or {})  # what the strategy's undo reads back
    try:  # the audit log takes the session's mode, which its copy has
        mode = backup.stat().st_mode & 0o7777
    except OSError:
        mode = 0o600
    log, audit_error = audit.append_audit(ref, fmt, record, mode)
    step("audited")
    clear_written(path)  # a review the gate held for this session is done (never raises)
    return ApplyResult(
        ref=ref,
        backup_path=backup,
        format=fmt.name,
        policy=strategy.name,
        messages_before=n,
        messages_after=len(compacted_session.messages),
        compacted=boundary - leading,
        kept=leading + (n - boundary),
        before=current,
        after_sha256=written.after.sha256,
        after_size=written.after.size,
        audit_path=None if audit_error else log,
        audit_error=audit_error,
        written=[backup, path] + ([] if audit_error else [log]),
        verb=strategy.verb,
    )

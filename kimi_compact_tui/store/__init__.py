"""The store: the conflict check, durable writes, the copies kept before a
change (rotations and backups, as the format's write policy says), the audit
log, and undo / restore.

Front ends call :func:`apply_compaction` (through the compaction job),
:func:`restore`, :func:`undo_plan` and :func:`restore_points` on a
:class:`Target` (a session file and its format); nothing here asks a person
anything (the y/N prompt belongs to the command line).
"""

from kimi_compact_tui.store.audit import audit_path, read_audit
from kimi_compact_tui.store.fingerprint import Fingerprint, fingerprint
from kimi_compact_tui.store.keep import keep_description, next_rotation
from kimi_compact_tui.store.points import (
    RestorePoint,
    Target,
    locate,
    pick_point,
    restore_points,
)
from kimi_compact_tui.store.restore import (
    RestoreResult,
    UndoPlan,
    keeps_current_as,
    restore,
    undo_plan,
)
from kimi_compact_tui.store.write import ApplyResult, Provenance, apply_compaction

__all__ = [
    "ApplyResult",
    "Fingerprint",
    "Provenance",
    "RestorePoint",
    "RestoreResult",
    "Target",
    "UndoPlan",
    "apply_compaction",
    "audit_path",
    "fingerprint",
    "keep_description",
    "keeps_current_as",
    "locate",
    "next_rotation",
    "pick_point",
    "read_audit",
    "restore",
    "restore_points",
    "undo_plan",
]

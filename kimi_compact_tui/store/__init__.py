"""The store: drives the session format's write strategy (the conflict check,
the copy kept before a change, the write, undo, the restore points: see
``formats/strategies.py``) and keeps the audit log, keyed by the session
reference; it decides which version an undo puts back and when a restore
must refuse.

Front ends call :func:`apply_compaction` (through the compaction job),
:func:`restore`, :func:`undo_plan` and :func:`restore_points` on a
:class:`Target` (a session reference and its format); nothing here asks a
person anything (the y/N prompt belongs to the command line).
"""

from kimi_compact_tui.store.audit import audit_path, read_audit
from kimi_compact_tui.store.fingerprint import Fingerprint, fingerprint
from kimi_compact_tui.store.keep import keep_description
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
    "pick_point",
    "read_audit",
    "restore",
    "restore_points",
    "undo_plan",
]

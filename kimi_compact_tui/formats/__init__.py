"""Session file formats: each is a plugin behind the contract in
:mod:`formats.base`, listed once in :mod:`formats.registry`; :mod:`formats.loader`
is the one load path.
"""

from __future__ import annotations

from kimi_compact_tui.formats.base import Session, SessionFormat, SessionInfo, SessionMeta
from kimi_compact_tui.formats.loader import (
    Fingerprint,
    Loaded,
    dump_session,
    load,
    load_session,
    parse_bytes,
    save_session,
)
from kimi_compact_tui.formats.registry import resolve

__all__ = [
    "Fingerprint",
    "Loaded",
    "Session",
    "SessionFormat",
    "SessionInfo",
    "SessionMeta",
    "dump_session",
    "load",
    "load_session",
    "parse_bytes",
    "resolve",
    "save_session",
]

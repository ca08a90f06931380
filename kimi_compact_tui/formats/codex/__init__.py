"""Codex CLI (``@openai/codex`` 0.171) rollouts: see :mod:`.plugin` and :mod:`.rollout`;
:mod:`.hook` is its compaction hook's facts and :mod:`.trust` the trust entry that
hook needs. The names below load with their module when first asked for, so the
hook loads the facts alone."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kimi_compact_tui.formats.codex.plugin import (
        CLOSE_NOTE,
        FORMAT,
        CodexFormat,
        write_refusal,
    )
    from kimi_compact_tui.formats.codex.state import CodexState

__all__ = ["CLOSE_NOTE", "FORMAT", "CodexFormat", "CodexState", "write_refusal"]
_WHERE = {"CLOSE_NOTE": "plugin", "FORMAT": "plugin", "CodexFormat": "plugin",
          "write_refusal": "plugin", "CodexState": "state"}  # fmt: skip


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{where}"), name)

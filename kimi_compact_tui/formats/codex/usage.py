"""Codex's context meter.

- The fill: the last ``token_count`` event's ``last_token_usage.total_tokens``
  since the last compaction (our estimate when none);
- the window: that event's ``info.model_context_window`` (Codex records it in
  the rollout), else ``model_context_window`` in ``config.toml``;
- the threshold: ``model_auto_compact_token_limit`` in ``config.toml`` when set,
  else 90% of the window. ``config.toml`` is the one in the Codex home the
  rollout lives in (``<home>/sessions/YYYY/MM/DD/rollout-….jsonl``), else
  ``$CODEX_HOME``, else ``~/.codex``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.codex.state import CodexState
from kimi_compact_tui.formats.context import (
    RECORDED,
    ContextUsage,
    fill,
    home_config,
    records_from_end,
    records_in,
    whole,
)
from kimi_compact_tui.formats.storage import SessionRef

AUTO_SHARE = 0.9
#: What a line must hold to matter to the meter: a count, a compaction.
MARKS = (b'"token_count"', b'"compacted"')


def last_count(data: bytes) -> tuple[int | None, int | None]:
    """(the last ``total_tokens`` since the last compaction, the last window seen)."""
    return _count(records_in(data, MARKS))


def _count(found: Iterable[Any]) -> tuple[int | None, int | None]:
    used: int | None = None
    window: int | None = None
    decided = False
    for record in found:
        if not isinstance(record, dict):
            continue
        if record.get("type") == "compacted":
            decided = True  # no count since the last compaction: ours to estimate
            if window is not None:
                break
            continue
        payload = record.get("payload")
        if not isinstance(payload, dict) or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        if not isinstance(info, dict):
            continue
        window = window or whole(info.get("model_context_window"))
        last = info.get("last_token_usage")
        if not decided and isinstance(last, dict) and whole(last.get("total_tokens")) is not None:
            used, decided = whole(last.get("total_tokens")), True
        if decided and window is not None:
            break
    return used, window


def peek(ref: SessionRef, env: Mapping[str, str] | None = None) -> ContextUsage | None:
    """The meter read from the rollout's end only (``list``, the picker); None when
    no count came since the last compaction (the estimate needs a full read)."""
    used, window = _count(records_from_end(ref.path, MARKS))
    return None if used is None else meter(used, RECORDED, window, ref.path, env)


def context_usage(session: Session, env: Mapping[str, str] | None = None) -> ContextUsage:
    state = session.format_state
    used, window = last_count(state.data) if isinstance(state, CodexState) else (None, None)
    tokens, source = fill(used, session.messages)
    return meter(tokens, source, window, session.path, env)


def meter(
    used: int, source: str, window: int | None, path: Path | None, env: Mapping[str, str] | None
) -> ContextUsage:
    """The meter of ``used`` tokens of the rollout at ``path`` (``window``: as it records it)."""
    config_path, config = home_config(path, 4, env, "CODEX_HOME", ".codex")
    window_source = "the rollout's model_context_window"
    if window is None and whole(config.get("model_context_window")):
        window, window_source = whole(config.get("model_context_window")), f"{config_path}"
    elif window is None:
        window_source = "not recorded"
    limit = whole(config.get("model_auto_compact_token_limit"))
    if limit is not None:
        return ContextUsage(
            used, window, limit, source, window_source,
            f"model_auto_compact_token_limit in {config_path}",
        )  # fmt: skip
    compacts_at = int(window * AUTO_SHARE) if window else None
    return ContextUsage(
        used, window, compacts_at, source, window_source, "Codex's rule: 90% of the window"
    )

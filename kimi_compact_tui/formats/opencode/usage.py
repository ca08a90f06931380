"""opencode's context meter.

- The fill: the last assistant message's ``tokens`` (``total``, else input +
  output + cache read and write) since the last compaction; our estimate when
  none;
- the window: the model's limits (``limit.context``, ``limit.input``,
  ``limit.output``) from opencode's configuration (``opencode.json``'s
  ``provider.<id>.models.<id>.limit``) or its models cache
  (``$XDG_CACHE_HOME/opencode/models.json``); unknown when neither has them;
- the threshold, opencode's overflow: the input limit (else the window) less
  the room kept for the summary, the model's output limit but at most 20,000.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterable, Mapping
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.context import (
    RECORDED,
    ContextUsage,
    fill,
    read_json,
    table,
    whole,
)
from kimi_compact_tui.formats.opencode.db import open_snapshot
from kimi_compact_tui.formats.opencode.store import OpencodeState
from kimi_compact_tui.formats.storage import SessionRef

SUMMARY_ROOM = 20_000


def last_tokens(state: OpencodeState) -> tuple[int | None, str | None, str | None]:
    """(the last assistant reply's tokens, its provider, its model)."""
    return _last(row.data for row in reversed(state.rows.messages))


def _last(found: Iterable[dict[str, Any]]) -> tuple[int | None, str | None, str | None]:
    for data in found:
        if data.get("role") != "assistant":
            continue
        if data.get("summary") is True or data.get("mode") == "compaction":
            return None, None, None
        tokens = data.get("tokens")
        if not isinstance(tokens, dict):
            continue
        total = whole(tokens.get("total"))
        if not total:
            cache = table(tokens.get("cache"))
            parts = (
                tokens.get("input"),
                tokens.get("output"),
                cache.get("read"),
                cache.get("write"),
            )
            total = sum((whole(v) or 0) for v in parts)
        if total:
            return total, data.get("providerID"), data.get("modelID")
    return None, None, None


def _folder(env: Mapping[str, str], name: str, default: str) -> Path:
    given = env.get(name)
    return Path(given) if given else Path(env.get("HOME") or Path.home()) / default


def model_limit(
    provider: str | None, model: str | None, env: Mapping[str, str]
) -> tuple[dict[str, Any], str]:
    if not provider or not model:
        return {}, "unknown (no reply names its model)"
    config = _folder(env, "XDG_CONFIG_HOME", ".config") / "opencode" / "opencode.json"
    cache = _folder(env, "XDG_CACHE_HOME", ".cache") / "opencode" / "models.json"
    for path, where in (
        (config, f"provider.{provider}.models.{model}.limit"),
        (cache, f"{provider}/{model}"),
    ):
        data = read_json(path)
        tree = data.get("provider") if path == config else data
        entry = tree.get(provider) if isinstance(tree, dict) else None
        models = entry.get("models") if isinstance(entry, dict) else None
        found = models.get(model) if isinstance(models, dict) else None
        limit = found.get("limit") if isinstance(found, dict) else None
        if isinstance(limit, dict) and whole(limit.get("context")):
            return limit, f"{where} in {path}"
    return {}, f"unknown ({provider}/{model} is in neither {config} nor {cache})"


def _rows_from_end(ref: SessionRef) -> Generator[dict[str, Any], None, None]:
    """The session's message rows' data, last first (opencode's order reversed)."""
    import json

    with open_snapshot(ref.path) as conn:
        cursor = conn.execute(
            "SELECT data FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC",
            (ref.key,),
        )
        for (raw,) in cursor:
            try:
                data = json.loads(raw)
            except (TypeError, ValueError):
                continue
            if isinstance(data, dict):
                yield data


def peek(ref: SessionRef, env: Mapping[str, str] | None = None) -> ContextUsage | None:
    """The meter read from the session's last rows only (``list``, the picker); None
    when no reply came since the last compaction (the estimate needs a full read)."""
    if ref.key is None:
        return None
    rows = _rows_from_end(ref)
    try:
        used, provider, model = _last(rows)
    finally:
        rows.close()
    return None if used is None else meter(used, RECORDED, provider, model, env)


def context_usage(session: Session, env: Mapping[str, str] | None = None) -> ContextUsage:
    state = session.format_state
    used, provider, model = (
        last_tokens(state) if isinstance(state, OpencodeState) else (None, None, None)
    )
    tokens, source = fill(used, session.messages)
    return meter(tokens, source, provider, model, env)


def meter(
    used: int,
    source: str,
    provider: Any,
    model: Any,
    env: Mapping[str, str] | None,
) -> ContextUsage:
    """The meter of ``used`` tokens of a session whose last reply came from ``model``."""
    env = os.environ if env is None else env
    provider = provider if isinstance(provider, str) else None
    model = model if isinstance(model, str) else None
    limit, where = model_limit(provider, model, env)
    window = whole(limit.get("context"))
    if window is None:
        return ContextUsage(used, None, None, source, where, "-")
    room = min(SUMMARY_ROOM, whole(limit.get("output")) or SUMMARY_ROOM)
    usable = whole(limit.get("input")) or window
    return ContextUsage(
        used, window, usable - room, source, where,
        f"opencode's overflow: the input limit less {room:,} for the summary",
    )  # fmt: skip

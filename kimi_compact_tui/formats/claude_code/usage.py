"""Claude Code's context meter.

- The fill: the last reply's usage, as the API reported it, counted as Claude
  Code 2.1.197 counts it against its threshold (``input_tokens +
  cache_creation_input_tokens + cache_read_input_tokens + output_tokens``: the
  reply is in the next request), since the last compaction; with no reply
  since, our estimate of the messages.
- The window: 200,000 tokens, Claude Code's window for every model but those
  named with ``[1m]`` (1,000,000); the transcript does not record it.
- The threshold, as Claude Code 2.1 computes it: the window less the room kept
  for the summary (the model's output limit, at most 20,000), less a 13,000
  buffer: 167,000 of 200,000 (83.5%). ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` (the
  environment or ``settings.json``'s ``env``) lowers it to that percentage of
  the window less the summary room; ``DISABLE_AUTO_COMPACT`` turns it off.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.claude_code.state import ClaudeState
from kimi_compact_tui.formats.context import (
    RECORDED,
    ContextUsage,
    env_folder,
    fill,
    read_json,
    records_from_end,
    table,
    whole,
)
from kimi_compact_tui.formats.storage import SessionRef

WINDOW = 200_000
WINDOW_1M = 1_000_000
SUMMARY_ROOM = 20_000
BUFFER = 13_000
USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def _last(objs: Iterable[dict[str, Any]]) -> tuple[int | None, str | None]:
    """(the last reply's context size since the last compaction, its model), from
    the transcript's records last first."""
    for obj in objs:
        if obj.get("isCompactSummary") is True or obj.get("subtype") == "compact_boundary":
            return None, None
        if obj.get("type") != "assistant" or obj.get("isSidechain") is True:
            continue
        message = table(obj.get("message"))
        usage = message.get("usage")
        model = message.get("model")
        if not isinstance(usage, dict) or model == "<synthetic>":
            continue
        total = sum(whole(usage.get(k)) or 0 for k in USAGE_KEYS)
        if total > 0:
            return total, model if isinstance(model, str) else None
    return None, None


def last_usage(state: ClaudeState) -> tuple[int | None, str | None]:
    """(the last reply's context size since the last compaction, its model)."""
    return _last(rec.obj for rec in reversed(state.records))


#: What a line must hold to matter to :func:`peek` (a reply's usage, a compaction).
MARKS = (b'"usage"', b'"compact_boundary"', b'"isCompactSummary"')


def peek(ref: SessionRef, env: Mapping[str, str] | None = None) -> ContextUsage | None:
    """The meter read from the transcript's end only (``list``, the picker); None
    when no reply came since the last compaction (the estimate needs a full read)."""
    used, model = _last(records_from_end(ref.path, MARKS))
    return None if used is None else meter(used, RECORDED, model, env)


def context_usage(session: Session, env: Mapping[str, str] | None = None) -> ContextUsage:
    state = session.format_state
    used, model = last_usage(state) if isinstance(state, ClaudeState) else (None, None)
    tokens, source = fill(used, session.messages)
    return meter(tokens, source, model, env)


def meter(used: int, source: str, model: str | None, env: Mapping[str, str] | None) -> ContextUsage:
    """The meter of ``used`` tokens of a session whose last reply came from ``model``."""
    env = os.environ if env is None else env
    if model and "[1m]" in model:
        window, window_source = WINDOW_1M, f"Claude Code's window for {model}"
    else:
        window, window_source = WINDOW, "Claude Code's window for its models (200,000)"
    settings = read_json(env_folder(env, "CLAUDE_CONFIG_DIR", ".claude") / "settings.json")
    settings_env = table(settings.get("env"))

    def setting(name: str) -> tuple[str | None, str]:
        if env.get(name):
            return env[name], f"${name}"
        value = settings_env.get(name)
        return (str(value), f"settings.json env {name}") if value not in (None, "") else (None, "")

    off, where = setting("DISABLE_AUTO_COMPACT")
    if off and off.lower() not in ("0", "false", "no"):
        return ContextUsage(used, window, None, source, window_source, f"off ({where})")
    effective = window - SUMMARY_ROOM
    compacts_at = effective - BUFFER
    threshold_source = f"Claude Code's rule: window - {SUMMARY_ROOM:,} for the summary - {BUFFER:,}"
    pct, where = setting("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
    try:
        share = float(pct) if pct else None
    except ValueError:
        share = None
    if share is not None and 0 < share <= 100:
        compacts_at = min(int(effective * share / 100), compacts_at)
        threshold_source = f"{where} = {pct}% of the window less the summary's room"
    return ContextUsage(used, window, compacts_at, source, window_source, threshold_source)

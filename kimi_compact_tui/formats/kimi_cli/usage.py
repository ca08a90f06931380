"""kimi-cli's context meter.

- The fill: the last ``_usage`` line's ``token_count`` (our estimate when none);
- the window: ``max_context_size`` of the configured model (``default_model``)
  in kimi-cli's ``config.toml`` (the share folder the session lives in:
  ``<share>/sessions/<md5>/<uuid>/context.jsonl``, else ``$KIMI_SHARE_DIR``, else
  ``~/.kimi``); unknown when it does not say;
- the threshold, as kimi-cli decides: the first of ``compaction_trigger_ratio``
  of the window (default 0.85) and the window less ``reserved_context_size``
  (default 50,000), both from ``[loop_control]``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.context import (
    RECORDED,
    ContextUsage,
    fill,
    home_config,
    records_from_end,
    table,
    whole,
)
from kimi_compact_tui.formats.storage import SessionRef

RATIO = 0.85
RESERVED = 50_000


def peek(ref: SessionRef, env: Mapping[str, str] | None = None) -> ContextUsage | None:
    """The meter read from ``context.jsonl``'s end only (``list``, the picker): its
    last ``_usage`` line; None when it has none (the estimate needs a full read)."""
    for record in records_from_end(ref.path, (b'"_usage"',)):
        used = whole(record.get("token_count")) if record.get("role") == "_usage" else None
        if used is not None:
            return meter(used, RECORDED, ref.path, env)
    return None


def context_usage(session: Session, env: Mapping[str, str] | None = None) -> ContextUsage:
    used = session.meta.recorded_tokens
    tokens, source = fill(used, session.messages)
    return meter(tokens, source, session.path, env)


def meter(used: int, source: str, path: Path | None, env: Mapping[str, str] | None) -> ContextUsage:
    """The meter of ``used`` tokens of the session at ``path``."""
    config_path, config = home_config(path, 3, env, "KIMI_SHARE_DIR", ".kimi")
    models = table(config.get("models"))
    name = config.get("default_model")
    model = models.get(name) if isinstance(name, str) else None
    window = whole(model.get("max_context_size")) if isinstance(model, dict) else None
    if window is None:
        return ContextUsage(
            used, None, None, source, f"unknown ({config_path} names no max_context_size)", "-"
        )
    loop = table(config.get("loop_control"))
    ratio = loop.get("compaction_trigger_ratio", RATIO)
    reserved = whole(loop.get("reserved_context_size")) or RESERVED
    ratio = ratio if isinstance(ratio, int | float) and not isinstance(ratio, bool) else RATIO
    compacts_at = min(math.ceil(window * ratio), window - reserved)
    return ContextUsage(
        used, window, compacts_at, source, f"max_context_size of {name} in {config_path}",
        f"kimi-cli's rule: the first of {ratio:g} of the window and the window less "
        f"{reserved:,} ({config_path} [loop_control], else its defaults)",
    )  # fmt: skip

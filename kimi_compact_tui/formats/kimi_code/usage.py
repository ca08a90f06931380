"""Kimi Code's context meter (kimi-code 2.1).

- The fill: the last ``token_counting.*`` record of the journal's agent
  (``measured`` after each reply, ``turn_recorded`` at a turn's end, ``rebased``
  after a compaction, ``truncated`` after an undo): kimi-code's own count, the
  one it compares with its threshold (it adds its estimate of any message
  appended after that count); our estimate when the journal has none;
- the window: the model's ``max_input_size``, else its ``max_context_size``, in
  the ``[models.<alias>]`` table of kimi-code's ``config.toml`` (the Kimi Code
  home the session lives in: ``<home>/sessions/<workspace>/<session>/agents/<agent>/wire.jsonl``,
  else ``$KIMI_CODE_HOME``, else ``~/.kimi-code``); the alias is the last
  ``profile.bind`` record's ``modelAlias``, else ``default_model``; unknown when
  the configuration does not say;
- the threshold, as kimi-code decides (``shouldCompact``): the first of
  ``compaction_trigger_ratio`` of the window (default 0.85) and the window less
  ``reserved_context_size`` (default 50,000), both from ``[loop_control]``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.context import (
    RECORDED,
    ContextUsage,
    fill,
    home_config,
    records_from_end,
    records_in,
    table,
    whole,
)
from kimi_compact_tui.formats.kimi_code.plugin import KimiCodeState
from kimi_compact_tui.formats.storage import SessionRef

RATIO = 0.85
RESERVED = 50_000
TOKEN_PREFIX = "token_counting."
#: What a line must hold to matter to the meter: a count, the model's binding.
MARKS = (b'"token_counting.', b'"modelAlias"')


def agent_of(path: Path) -> str:
    """``agents/<id>/wire.jsonl`` names its agent; anything else is ``main``."""
    if path.name == "wire.jsonl" and path.parent.parent.name == "agents":
        return path.parent.name
    return "main"


def _last(records: Iterable[dict[str, Any]], agent: str) -> tuple[int | None, str | None]:
    """(the agent's last count, its model alias), from the journal's records last first."""
    used: int | None = None
    alias: str | None = None
    for record in records:
        if record.get("agentId", agent) != agent:
            continue
        kind = record.get("type")
        if used is None and isinstance(kind, str) and kind.startswith(TOKEN_PREFIX):
            tokens = record.get("tokens")
            if isinstance(tokens, int | float) and not isinstance(tokens, bool) and tokens >= 0:
                used = int(tokens)
        elif kind == "profile.bind" and isinstance(record.get("modelAlias"), str):
            alias = record["modelAlias"]
        if used is not None and alias is not None:
            break
    return used, alias


def peek(ref: SessionRef, env: Mapping[str, str] | None = None) -> ContextUsage | None:
    """The meter read from the journal's end only (``list``, the picker); None when
    it records no count (the estimate needs a full read)."""
    used, alias = _last(records_from_end(ref.path, MARKS), agent_of(ref.path))
    return None if used is None else meter(used, RECORDED, alias, ref.path, env)


def context_usage(session: Session, env: Mapping[str, str] | None = None) -> ContextUsage:
    path = session.path
    used, alias = None, None
    if path is not None:
        state = session.format_state
        records = (
            records_in(state.journal, MARKS)
            if isinstance(state, KimiCodeState)
            else records_from_end(path, MARKS)
        )
        used, alias = _last(records, agent_of(path))
    tokens, source = fill(used, session.messages)
    return meter(tokens, source, alias, path, env)


def meter(
    used: int, source: str, alias: str | None, path: Path | None, env: Mapping[str, str] | None
) -> ContextUsage:
    """The meter of ``used`` tokens of the journal at ``path``, bound to model ``alias``."""
    config_path, config = home_config(path, 5, env, "KIMI_CODE_HOME", ".kimi-code")
    name = alias
    if name is None and isinstance(config.get("default_model"), str):
        name = config["default_model"]
    model = table(table(config.get("models")).get(name)) if name is not None else {}
    context = whole(model.get("max_context_size")) or None
    given_input = whole(model.get("max_input_size")) or None
    window = given_input if given_input is not None else context
    if window is not None and context is not None:
        window = min(window, context)  # kimi-code caps the input size at the context size
    if window is None:
        what = f"model {name}" if name else "no model"
        return ContextUsage(
            used, None, None, source,
            f"unknown ({config_path} gives no max_context_size for {what})", "-",
        )  # fmt: skip
    key = "max_input_size" if given_input is not None else "max_context_size"
    loop = table(config.get("loop_control"))
    ratio = loop.get("compaction_trigger_ratio", RATIO)
    ratio = ratio if isinstance(ratio, int | float) and not isinstance(ratio, bool) else RATIO
    reserved = whole(loop.get("reserved_context_size"))
    reserved = RESERVED if reserved is None else reserved
    compacts_at = math.ceil(window * ratio)
    if 0 < reserved < window:
        compacts_at = min(compacts_at, window - reserved)
    return ContextUsage(
        used, window, compacts_at, source, f"{key} of {name} in {config_path}",
        f"kimi-code's rule: the first of {ratio:g} of the window and the window less "
        f"{reserved:,} ({config_path} [loop_control], else its defaults)",
    )  # fmt: skip

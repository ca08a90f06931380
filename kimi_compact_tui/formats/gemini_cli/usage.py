"""Gemini CLI's context meter.

- The fill: the last reply's prompt size (``tokens.input`` of the last
  ``gemini`` message since the last compression; our estimate when none);
- the window: Gemini CLI's token limit for the reply's model (1,048,576; the
  Gemma 4 models 256,000);
- the threshold: ``model.compressionThreshold`` of the window, from Gemini
  CLI's user ``settings.json`` (``$GEMINI_CLI_HOME/.gemini``, else
  ``~/.gemini``), default 0.5.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kimi_compact_tui.formats.base import Session
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
from kimi_compact_tui.formats.gemini_cli.state import GeminiState
from kimi_compact_tui.formats.storage import SessionRef

WINDOW = 1_048_576
GEMMA_4_WINDOW = 256_000
THRESHOLD = 0.5


def last_prompt(records: tuple[dict[str, Any], ...]) -> tuple[int | None, str | None]:
    """(the last reply's prompt tokens, its model); None after a compression with no
    reply since (the kept messages keep their older times)."""
    found: int | None = None
    model: str | None = None
    latest = ""
    for msg in records:
        stamp = msg.get("timestamp")
        if isinstance(stamp, str) and stamp < latest:
            found = None
            continue
        latest = max(latest, stamp) if isinstance(stamp, str) else latest
        tokens = msg.get("tokens") if msg.get("type") == "gemini" else None
        value = whole(tokens.get("input")) if isinstance(tokens, dict) else None
        if value:
            found = value
            model = msg.get("model") if isinstance(msg.get("model"), str) else model
    return found, model


#: What a line must hold to matter to :func:`peek`: a reply, a rewrite of the history.
MARKS = (b'"gemini"', b'"$set"', b'"$rewindTo"')


def peek(ref: SessionRef, env: Mapping[str, str] | None = None) -> ContextUsage | None:
    """The meter read from the session file's end only (``list``, the picker): the
    last reply's prompt when no rewrite of the history (a compression, a resume,
    a rewind) came after it; None otherwise, or for a one-object ``.json`` session (its
    reading needs the whole file)."""
    if ref.path.suffix != ".jsonl":
        return None
    for msg in records_from_end(ref.path, MARKS):
        if "$rewindTo" in msg:
            return None  # messages were dropped since: the full reading decides
        if "$set" in msg:
            if "messages" in table(msg.get("$set")):
                return None  # the history was rewritten since: the full reading decides
            continue
        tokens = msg.get("tokens") if msg.get("type") == "gemini" else None
        value = whole(tokens.get("input")) if isinstance(tokens, dict) else None
        if value:
            model = msg.get("model")
            return meter(value, RECORDED, model if isinstance(model, str) else None, env)
    return None


def context_usage(session: Session, env: Mapping[str, str] | None = None) -> ContextUsage:
    state = session.format_state
    used, model = last_prompt(state.records) if isinstance(state, GeminiState) else (None, None)
    tokens, source = fill(used, session.messages)
    return meter(tokens, source, model, env)


def meter(used: int, source: str, model: str | None, env: Mapping[str, str] | None) -> ContextUsage:
    """The meter of ``used`` tokens of a session whose last reply came from ``model``."""
    if model and model.startswith("gemma-4"):
        window = GEMMA_4_WINDOW
    else:
        window = WINDOW
    window_source = f"Gemini CLI's token limit for {model or 'its models'}"
    root = env_folder(env, "GEMINI_CLI_HOME", "")
    settings_path = root / ".gemini" / "settings.json"
    settings = read_json(settings_path)
    model_settings = table(settings.get("model"))
    share = model_settings.get("compressionThreshold")
    if isinstance(share, int | float) and not isinstance(share, bool) and 0 < share <= 1:
        where = f"model.compressionThreshold {share:g} in {settings_path}"
    else:
        share, where = THRESHOLD, "Gemini CLI's default compressionThreshold 0.5"
    return ContextUsage(used, window, int(window * share), source, window_source, where)

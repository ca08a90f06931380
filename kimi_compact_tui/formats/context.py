"""The context meter: how full a session's context is, against the point at
which its agent compacts on its own (``73% · compacts at 84%``).

Each agent's reader is a module of its own (``formats/<agent>/usage.py``),
reached through the format's one hook, ``SessionFormat.context_usage``. A
reader takes the figures from the agent's own records and configuration where
they are, and says where each came from; what it cannot know it says is
unknown, never guessed.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.compaction.tokens import session_tokens
from kimi_compact_tui.fsutil import json_object
from kimi_compact_tui.model import Message

RECORDED = "recorded"
ESTIMATED = "estimated"


@dataclass(frozen=True)
class ContextUsage:
    """A session's context fill and its agent's compaction threshold."""

    used_tokens: int
    window: int | None  # the model's context window (None: unknown)
    compacts_at: (
        int | None
    )  # the context size at which the agent compacts (None: unknown, or never)
    tokens_source: str  # RECORDED (the agent's own last count) or ESTIMATED (ours)
    window_source: str  # where the window came from, for people
    threshold_source: str  # where the threshold came from, for people

    @property
    def percent(self) -> int | None:
        return None if not self.window else round(100 * self.used_tokens / self.window)

    @property
    def compacts_at_percent(self) -> int | None:
        if not self.window or self.compacts_at is None:
            return None
        return round(100 * self.compacts_at / self.window)

    def line(self) -> str:
        """``73% · compacts at 84%`` (with the token figures when the window is unknown)."""
        if self.percent is None:
            used = f"{self.used_tokens:,} tokens"
            if self.compacts_at is not None:
                return f"{used} · compacts at {self.compacts_at:,}"
            return f"{used} · window unknown"
        at = self.compacts_at_percent
        return f"{self.percent}% · " + (
            f"compacts at {at}%" if at is not None else "no auto-compaction"
        )

    def describe(self) -> str:
        """The line, the figures and where they came from (``plan`` prints it)."""
        window = f"{self.window:,}" if self.window else "unknown"
        at = f"{self.compacts_at:,}" if self.compacts_at is not None else "-"
        return (
            f"{self.line()} ({self.used_tokens:,} {self.tokens_source} of {window}; "
            f"compacts at {at}: {self.threshold_source}; window: {self.window_source})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "used_tokens": self.used_tokens,
            "window": self.window,
            "compacts_at": self.compacts_at,
            "percent": self.percent,
            "compacts_at_percent": self.compacts_at_percent,
            "source": {
                "tokens": self.tokens_source,
                "window": self.window_source,
                "threshold": self.threshold_source,
            },
        }


def fill(recorded: int | None, messages: Iterable[Message]) -> tuple[int, str]:
    """The fill a meter shows and its source: the agent's own last count when it
    recorded one, else our estimate of ``messages``."""
    if recorded is not None:
        return recorded, RECORDED
    return session_tokens(messages), ESTIMATED


def read_toml(path: Path) -> dict[str, Any]:
    """An agent's TOML configuration, or {} when absent or unreadable (the meter
    then says it used the agent's defaults)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return data


def read_json(path: Path) -> dict[str, Any]:
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def env_folder(env: Mapping[str, str] | None, name: str, default: str) -> Path:
    """``$name``, else ``~/default``."""
    env = os.environ if env is None else env
    given = env.get(name)
    if given:
        return Path(given).expanduser()
    return Path(env.get("HOME") or Path.home()) / default


def home_above(
    path: Path | None, depth: int, env: Mapping[str, str] | None, variable: str, default: str
) -> Path:
    """The agent's home a session file ``depth`` folders below its ``sessions``
    folder lives in; else ``$variable``, else ``~/default``."""
    if (
        path is not None
        and len(path.parents) > depth
        and path.parents[depth - 1].name == "sessions"
    ):
        return path.parents[depth]
    return env_folder(env, variable, default)


def home_config(
    path: Path | None, depth: int, env: Mapping[str, str] | None, variable: str, default: str
) -> tuple[Path, dict[str, Any]]:
    """The agent's ``config.toml`` in its home (:func:`home_above`) and its
    tables ({} when it is absent or unreadable)."""
    config_path = home_above(path, depth, env, variable, default) / "config.toml"
    return config_path, read_toml(config_path)


def whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


#: Each format's meter: the module (``formats/<agent>/usage.py``) whose
#: ``context_usage(session, env)`` reads it, loaded when first asked for.
READERS: dict[str, str] = {
    "claude-code": "kimi_compact_tui.formats.claude_code.usage",
    "codex": "kimi_compact_tui.formats.codex.usage",
    "gemini-cli": "kimi_compact_tui.formats.gemini_cli.usage",
    "kimi": "kimi_compact_tui.formats.kimi_cli.usage",
    "kimi-code": "kimi_compact_tui.formats.kimi_code.usage",
    "opencode": "kimi_compact_tui.formats.opencode.usage",
}


def loaded(modules: Mapping[str, str], name: str, attr: str) -> Any:
    """``attr`` of the module ``modules`` lists for the format named ``name``
    (imported when first asked for), or None when it lists none."""
    module = modules.get(name)
    if module is None:
        return None
    import importlib

    return getattr(importlib.import_module(module), attr)


def reader_of(name: str) -> Any:
    """The meter function of the format named ``name``, or None."""
    return loaded(READERS, name, "context_usage")


def peeker_of(name: str) -> Any:
    """The cheap meter of the format named ``name`` (``peek(ref, env)``: read from
    the session's end only; None when that cannot decide), or None."""
    return loaded(READERS, name, "peek")


def table(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object or TOML table, else an empty one."""
    return value if isinstance(value, dict) else {}


#: How much of a file's end :func:`lines_from_end` reads at a time.
TAIL_CHUNK = 64 * 1024


def lines_from_end(path: Path, marks: tuple[bytes, ...]) -> Iterator[bytes]:
    """The lines of the file at ``path`` holding one of ``marks``, last first,
    read backwards a chunk at a time: the meter of a long session is at its end,
    so ``list`` reads only as far back as it must. Lines are split on ``\\n``."""
    with open(path, "rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        carry: list[bytes] = []  # the pieces of a line that starts in an earlier chunk, last first
        while end > 0:
            start = max(0, end - TAIL_CHUNK)
            fh.seek(start)
            block = fh.read(end - start)
            end = start
            head = b""
            if start > 0:
                cut = block.find(b"\n")
                if cut < 0:  # inside one long line: keep reading back
                    carry.append(block)
                    continue
                head, block = block[:cut], block[cut + 1 :]
            carry.reverse()
            lines = (block + b"".join(carry)).split(b"\n")
            carry = [head]
            for line in reversed(lines):
                if any(m in line for m in marks):
                    yield line


def records_from_end(path: Path, marks: tuple[bytes, ...]) -> Iterator[dict[str, Any]]:
    """The JSON objects of :func:`lines_from_end` (lines that are not one are skipped)."""
    for line in lines_from_end(path, marks):
        record = json_object(line)
        if record is not None:
            yield record


def records_in(data: bytes, marks: tuple[bytes, ...]) -> Iterator[dict[str, Any]]:
    """The JSON objects of ``data``'s lines holding one of ``marks``, last first,
    without splitting the whole of it (a long file's end is what matters)."""
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1 if end > 1 else 0
        line = data[start:end]
        end = start
        if any(m in line for m in marks):
            record = json_object(line)
            if record is not None:
                yield record

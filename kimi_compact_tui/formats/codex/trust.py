"""The trust entry Codex needs before it runs a hook.

Codex (0.171.0) runs a hook from ``hooks.json`` or ``config.toml`` only once
its user config holds, for that hook's key, the hash of the hook's definition:

    [hooks.state."<source file>:pre_compact:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"

The hash is Codex's own (``codex-rs/hooks``, discovery of command handlers;
``codex-rs/config``, ``version_for_toml``): the hook's definition normalised
(the event's snake-case name, the group's matcher, and the one command
handler with its timeout filled in, 600 s when not given, and ``async``),
turned into JSON with every object's keys sorted, written compactly, and
hashed with SHA-256. A field with no value is left out, as TOML has no null.
This module computes it the same way and edits ``config.toml`` as text, so
nothing else in the user's file changes. :data:`TRUST` is the scheme as the
gate takes it (:class:`kimi_compact_tui.agenthook.HookTrust`).

Standard library only, TOML read only when asked: the hook's facts (:mod:`.hook`)
load it, and the hook runs before every compaction.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from kimi_compact_tui.agenthook import toml_string

#: The timeout Codex gives a command hook that names none (seconds).
DEFAULT_TIMEOUT = 600


def event_key(event: str) -> str:
    """``PreCompact`` → ``pre_compact`` (the event's name in a trust key)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trust_key(source: str, event: str, group: int, handler: int) -> str:
    return f"{source}:{event_key(event)}:{group}:{handler}"


def identity(event: str, matcher: str | None, handler: dict[str, Any]) -> dict[str, Any]:
    """The normalised definition Codex hashes, for one command handler."""
    timeout = handler.get("timeout")
    normal: dict[str, Any] = {
        "type": "command",
        "command": handler["command"],
        "timeout": max(1, int(timeout)) if isinstance(timeout, int) else DEFAULT_TIMEOUT,
        "async": bool(handler.get("async", False)),
    }
    if isinstance(handler.get("statusMessage"), str):
        normal["statusMessage"] = handler["statusMessage"]
    out: dict[str, Any] = {"event_name": event_key(event), "hooks": [normal]}
    if matcher is not None:
        out["matcher"] = matcher
    return out


def trusted_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    text = json.dumps(
        identity(event, matcher, handler), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def header(key: str) -> str:
    return f"[hooks.state.{toml_string(key)}]"


def state_of(text: str) -> dict[str, Any]:
    """``hooks.state`` of a config.toml's text (empty when none)."""
    import tomllib  # install and status read TOML; the hook, which loads this, does not

    data = tomllib.loads(text)
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def with_trust(text: str, key: str, value: str) -> str:
    """``text`` with ``[hooks.state."key"] trusted_hash = value``: appended as a
    table of its own, or the hash line of that table replaced. Raises
    ValueError when the file cannot be changed that way."""
    current = state_of(text).get(key)
    if isinstance(current, dict) and current.get("trusted_hash") == value:
        return text
    if current is None:
        lead = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        out = f"{text}{lead}{header(key)}\ntrusted_hash = {toml_string(value)}\n"
    else:
        start, end = _table_span(text, key)
        block = text[start:end]
        pattern = re.compile(r"(?m)^(\s*trusted_hash\s*=\s*)(\"[^\"\n]*\"|'[^'\n]*')[^\n]*$")
        if pattern.search(block):
            block = pattern.sub(lambda m: m.group(1) + toml_string(value), block, count=1)
        else:
            line_end = block.index("\n") + 1 if "\n" in block else len(block)
            block = (
                block[:line_end]
                + ("" if block.endswith("\n") or "\n" in block else "\n")
                + f"trusted_hash = {toml_string(value)}\n"
                + block[line_end:]
            )
        out = text[:start] + block + text[end:]
    if state_of(out).get(key, {}).get("trusted_hash") != value:
        raise ValueError("the trust entry could not be written as a table of its own")
    return out


def without_trust(text: str, key: str) -> str:
    """``text`` without the table ``[hooks.state."key"]`` (unchanged when absent).
    Only a table holding nothing but ``trusted_hash``/``enabled`` is taken out."""
    if key not in state_of(text):
        return text
    start, end = _table_span(text, key)
    body = [
        line.strip()
        for line in text[start:end].split("\n")[1:]
        if line.strip() and not line.strip().startswith("#")
    ]
    if any(not re.match(r"(trusted_hash|enabled)\s*=", line) for line in body):
        raise ValueError("the trust table holds more than the trust entry")
    before, after = text[:start], text[end:]
    if not after and before.endswith("\n\n"):
        before = before[:-1]
    out = before + after
    if key in state_of(out):
        raise ValueError("the trust entry is defined another way than as a table")
    return out


def _table_span(text: str, key: str) -> tuple[int, int]:
    """Where the table ``[hooks.state."key"]`` starts and ends in ``text``."""
    lines = text.split("\n")
    pos = 0
    start = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if start is None and stripped.startswith("[") and _names(stripped, key):
            start = pos
        elif start is not None and stripped.startswith("["):
            return start, pos
        pos += len(line) + (1 if i < len(lines) - 1 else 0)
    if start is None:
        raise ValueError("the trust entry is not a table of its own")
    return start, len(text)


def _names(header_line: str, key: str) -> bool:
    """Whether a table header line is ``[hooks.state."key"]`` (however quoted)."""
    import tomllib

    try:
        data = tomllib.loads(header_line)
    except tomllib.TOMLDecodeError:
        return False
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return isinstance(state, dict) and list(state) == [key]


class CodexTrust:
    """Codex's trust entries in its ``config.toml`` (a :class:`HookTrust`)."""

    config_name = "config.toml"
    review_place = "/hooks"

    def key(self, source: str, event: str, group: int, handler: int) -> str:
        return trust_key(source, event, group, handler)

    def value(self, event: str, matcher: str | None, handler: dict[str, Any]) -> str:
        return trusted_hash(event, matcher, handler)

    def state_of(self, text: str) -> dict[str, Any]:
        return state_of(text)

    def with_trust(self, text: str, key: str, value: str) -> str:
        return with_trust(text, key, value)

    def without_trust(self, text: str, key: str) -> str:
        return without_trust(text, key)

    def shown(self, key: str) -> str:
        return f"[hooks.state.{json.dumps(key)}]"

    def project_trust(self, project: Path) -> str:
        return f'[projects."{project}"] trust_level = "trusted"'


TRUST = CodexTrust()

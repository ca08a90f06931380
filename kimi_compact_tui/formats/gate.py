"""The agents' compaction hooks, as their formats declare them: the facts the
gate (``hooks/``) is handed.

Each agent's package declares its hook in ``<agent>/hook.py`` as ``HOOK``: an
:class:`~kimi_compact_tui.agenthook.AgentHook` (its event, its configuration
file, how a compaction is stopped, how its last usage is read, the trust it
needs), or a :class:`~kimi_compact_tui.agenthook.NoHook` saying in one line why
there is none. This module lists them by the word on our command line (``hook
install NAME``), beside the formats' registry, and loads each only when it is
asked for: the hook, run before every compaction of an agent, loads its own
agent's facts and nothing else.
"""

from __future__ import annotations

import importlib

from kimi_compact_tui.agenthook import AgentHook, NoHook

#: Agents whose hook we install, in the order the help lists them: where each
#: declares it.
HOOKS: dict[str, str] = {
    "claude-code": "kimi_compact_tui.formats.claude_code.hook",
    "codex": "kimi_compact_tui.formats.codex.hook",
    "gemini-cli": "kimi_compact_tui.formats.gemini_cli.hook",
    "kimi-cli": "kimi_compact_tui.formats.kimi_cli.hook",
}
#: Agents that compact but have no hook to install: where each says why.
NO_HOOK: dict[str, str] = {
    "opencode": "kimi_compact_tui.formats.opencode.hook",
    "kimi-code": "kimi_compact_tui.formats.kimi_code.hook",
}


def names() -> tuple[str, ...]:
    """The agents with a hook (loads none)."""
    return tuple(HOOKS)


def _declared(module: str) -> AgentHook | NoHook:
    found = importlib.import_module(module).HOOK
    assert isinstance(found, AgentHook | NoHook), module
    return found


def hook_of(name: str) -> AgentHook | None:
    """The hook of the agent ``name`` (None when it has none, or is no agent)."""
    module = HOOKS.get(name)
    if module is None:
        return None
    found = _declared(module)
    assert isinstance(found, AgentHook), module
    return found


def hooks() -> list[AgentHook]:
    """Every agent's hook, in :data:`HOOKS` order."""
    return [h for h in (hook_of(name) for name in HOOKS) if h is not None]


def agent_named(name: str) -> AgentHook:
    """The hook of the agent ``name``; ValueError (one line) for an agent
    without one (why) or an unknown name (the known ones)."""
    found = hook_of(name)
    if found is not None:
        return found
    if name in NO_HOOK:
        none = _declared(NO_HOOK[name])
        assert isinstance(none, NoHook), name
        raise ValueError(none.reason)
    known = ", ".join(HOOKS)
    raise ValueError(f"unknown agent {name!r} (agents with a compaction hook: {known})")

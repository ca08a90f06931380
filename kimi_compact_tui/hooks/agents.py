"""What each agent's compaction hook is: its event, where its configuration
lives, whether it can stop a compaction and how.

Facts, checked with the agents themselves (docs/hooks.md says how):

- Claude Code (2.1.197): ``PreCompact`` in ``settings.json`` (the user's in
  ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``; a project's in
  ``.claude/settings.json``). The matcher is the trigger (``auto`` or
  ``manual``). Exit status 2 blocks the compaction, and the hook's stderr is
  shown to the user.
- Codex (0.171.0): ``PreCompact`` in ``$CODEX_HOME/hooks.json`` (else
  ``~/.codex``; a project's in ``.codex/hooks.json``), the same shape. It
  runs only once trusted (:mod:`.codex_trust`). Exit 2 does not block;
  ``{"continue": false, "stopReason": ...}`` on stdout does.
- Gemini CLI (0.61.0): ``PreCompress`` in ``settings.json`` (``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``
  or a project's ``.gemini``), the same shape; advisory only.
- kimi-cli (1.51): ``[[hooks]]`` tables with ``event = "PreCompact"`` in its
  ``config.toml`` (``$KIMI_SHARE_DIR``, else ``~/.kimi``); its result is
  awaited and ignored, and it carries no transcript path.

Standard library only: :mod:`.run` imports this before every compaction.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: How a blocking agent is told to stop: exit 2 with one stderr line, or a
#: JSON object on stdout (exit 0).
EXIT_2 = "exit-2"
CONTINUE_FALSE = "continue-false"

#: The shape of the configuration file our hook goes into.
JSON_HOOKS = "json-hooks"  # {"hooks": {EVENT: [{"matcher": ..., "hooks": [{...}]}]}}
TOML_HOOK_TABLES = "toml-hook-tables"  # [[hooks]] event = ..., command = ...

SCOPES = ("user", "project")


@dataclass(frozen=True)
class AgentHook:
    name: str  # the word on our command line: ``hook install NAME``
    label: str  # for people
    event: str  # the agent's event name
    stop: str | None  # how a compaction is stopped; None: advisory only
    shape: str
    env_dir: str | None  # the variable naming the agent's user folder
    user_dir: str  # that folder under HOME when the variable is unset
    user_file: str  # the file in it
    project_file: str | None  # a project's file, under the project folder
    trust: bool = False  # the hook runs only once trusted (Codex)
    env_sub: str = ""  # the folder under ``$env_dir`` (Gemini CLI: ``.gemini``)

    @property
    def blocking(self) -> bool:
        return self.stop is not None

    def user_folder(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
        env = os.environ if env is None else env
        given = env.get(self.env_dir) if self.env_dir else None
        if given:
            return Path(given).expanduser() / self.env_sub
        return (home or Path(env.get("HOME") or Path.home())) / self.user_dir

    def config_file(
        self,
        scope: str,
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
        cwd: Path | None = None,
    ) -> Path:
        if scope == "project":
            if self.project_file is None:
                raise ValueError(f"{self.label} has no project hooks")
            return (cwd or Path.cwd()) / self.project_file
        return self.user_folder(env, home) / self.user_file

    def matcher(self, manual: bool) -> str | None:
        """The matcher of our group: automatic compactions only, or (``--manual``)
        every compaction."""
        if manual:
            return None if self.name != "kimi-cli" else ""
        return "auto"


AGENTS: dict[str, AgentHook] = {
    a.name: a
    for a in (
        AgentHook(
            "claude-code",
            "Claude Code",
            "PreCompact",
            EXIT_2,
            JSON_HOOKS,
            "CLAUDE_CONFIG_DIR",
            ".claude",
            "settings.json",
            ".claude/settings.json",
        ),
        AgentHook(
            "codex",
            "Codex",
            "PreCompact",
            CONTINUE_FALSE,
            JSON_HOOKS,
            "CODEX_HOME",
            ".codex",
            "hooks.json",
            ".codex/hooks.json",
            trust=True,
        ),
        AgentHook(
            "gemini-cli",
            "Gemini CLI",
            "PreCompress",
            None,
            JSON_HOOKS,
            "GEMINI_CLI_HOME",
            ".gemini",
            "settings.json",
            ".gemini/settings.json",
            env_sub=".gemini",
        ),
        AgentHook(
            "kimi-cli",
            "kimi-cli",
            "PreCompact",
            None,
            TOML_HOOK_TABLES,
            "KIMI_SHARE_DIR",
            ".kimi",
            "config.toml",
            None,
        ),
    )
}

#: Agents that compact but have no hook to install (said, not guessed).
NO_HOOK: dict[str, str] = {
    "opencode": "opencode has no compaction hook a command can use: its plugin hook "
    "experimental.session.compacting can change the compaction prompt but not stop it, "
    "and needs a JavaScript plugin; `history` still lists its compactions",
    "kimi-code": "kimi-code has no compaction hook; `history` still lists its compactions",
}


def agent_named(name: str) -> AgentHook:
    try:
        return AGENTS[name]
    except KeyError:
        known = ", ".join(AGENTS)
        if name in NO_HOOK:
            raise ValueError(NO_HOOK[name]) from None
        raise ValueError(
            f"unknown agent {name!r} (agents with a compaction hook: {known})"
        ) from None

"""What an agent's compaction hook is, as its format declares it: plain data.

Each agent's format package declares its hook in ``formats/<agent>/hook.py``
(an :class:`AgentHook`, or a :class:`NoHook` saying why there is none), and
``formats/gate.py`` lists them; the gate (``hooks/``) is handed the facts and
never names an agent. An :class:`AgentHook` says the agent's event, where its
configuration lives, whether it can stop a compaction and how, how its last
recorded usage is read from a transcript's end, and (Codex) the
:class:`HookTrust` scheme its hook needs before it runs.

Standard library only: the hook, which runs before every compaction of the
agent, loads this.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

#: How a blocking agent is told to stop: exit 2 with one stderr line, or a
#: JSON object on stdout (exit 0).
EXIT_2 = "exit-2"
CONTINUE_FALSE = "continue-false"

#: The shape of the configuration file our hook goes into.
JSON_HOOKS = "json-hooks"  # {"hooks": {EVENT: [{"matcher": ..., "hooks": [{...}]}]}}
TOML_HOOK_TABLES = "toml-hook-tables"  # [[hooks]] event = ..., command = ...

SCOPES = ("user", "project")


class HookTrust(Protocol):
    """An agent that runs a hook only once its configuration trusts it: the
    trust entry for one hook, written into a file in the agent's user folder."""

    #: The file in the agent's user folder that holds the trust entries.
    config_name: str
    #: Where in the agent a person reviews (and trusts) a hook.
    review_place: str

    def key(self, source: str, event: str, group: int, handler: int) -> str:
        """The entry's key: the hook's file, event and place."""
        ...

    def value(self, event: str, matcher: str | None, handler: dict[str, Any]) -> str:
        """What the entry holds for exactly this hook."""
        ...

    def state_of(self, text: str) -> dict[str, Any]:
        """Every trust entry in the file's text, by key."""
        ...

    def with_trust(self, text: str, key: str, value: str) -> str:
        """The text with the entry added or updated (ValueError when it cannot be)."""
        ...

    def without_trust(self, text: str, key: str) -> str:
        """The text without the entry (ValueError when it cannot be taken out)."""
        ...

    def shown(self, key: str) -> str:
        """The entry as a person finds it in the file."""
        ...

    def project_trust(self, project: Path) -> str:
        """The setting that trusts a project (whose own hooks load only then)."""
        ...


#: The context size a transcript's record says the agent last sent, or None.
UsageOf = Callable[[dict[str, Any]], int | None]


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
    env_sub: str = ""  # the folder under ``$env_dir`` (Gemini CLI: ``.gemini``)
    #: Our group's matcher with ``--manual`` (every compaction): none at all, or
    #: the agent's word for "any" (kimi-cli's ``[[hooks]]`` tables: ``""``).
    manual_matcher: str | None = None
    #: The hook runs only once trusted (Codex): how it is trusted.
    trust: HookTrust | None = None
    #: A transcript line holding this is read for the last recorded usage ...
    usage_mark: bytes = b""
    #: ... by this (None: the hook reads no usage from the transcript).
    usage_of: UsageOf | None = None

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
        return self.manual_matcher if manual else "auto"


@dataclass(frozen=True)
class NoHook:
    """An agent that compacts but has no hook to install (said, not guessed)."""

    name: str
    reason: str  # one line, for people


def toml_string(text: str) -> str:
    """A TOML basic string (our ``[[hooks]]`` tables, a trust entry)."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)

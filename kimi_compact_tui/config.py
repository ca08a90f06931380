"""YAML configuration, validated with pydantic, read by the engine as typed values.

The file is a flat mapping (the spec's flattened ``base_config``)::

    compaction:
      enabled: true              # required when the block is present
      type: "kimi"               # required when the block is present
      max_preserved_messages: 2
      compaction_model: null
      prompt: null               # inline prompt text
      prompt_file: null          # a prompt file (relative to the config file)
      settings_overrides: {}
    compaction_model: null       # per-session override; wins over compaction.compaction_model
    context_window: null         # the model's context window in tokens (else a table, else unknown)
    provider: {kind: offline}    # one settings model per kind: kimi_compact_tui.providers.settings

With no config file at all, compaction is enabled with type ``kimi`` and the
defaults, so the tool works out of the box.

:class:`AppConfig` keeps the flat mapping (``raw``, the spec's shape, which the
spec's helpers :func:`_get_compaction_config`, :func:`compaction_enablement`
and :func:`effective_compaction_model` read) and gives the engine its typed
view, :attr:`AppConfig.compaction` (a :class:`CompactionSettings`), the
model's configured context window, :attr:`AppConfig.context_window`, and the
active prompt, :meth:`AppConfig.prompt`. Nothing outside this module reads
``raw`` for these, nor calls the spec helper ``_get_compaction_config``. yaml and pydantic load only when a
config file is read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kimi_compact_tui import limits
from kimi_compact_tui.compaction.prompts import PromptSource, resolve_prompt
from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.fsutil import read_utf8
from kimi_compact_tui.providers.registry import validate_provider_block

if TYPE_CHECKING:
    from pydantic import BaseModel

CONFIG_ENV = "KIMI_COMPACT_TUI_CONFIG"
DEFAULT_MAX_PRESERVED = 2
MAX_CONTEXT_WINDOW = 100_000_000


@cache
def _file_model() -> type[BaseModel]:
    """The pydantic model of a config file (made when a config file is read,
    so a run without one never loads pydantic)."""
    from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr

    class CompactionBlock(BaseModel):
        model_config = ConfigDict(extra="forbid")

        enabled: StrictBool | None = None
        type: StrictStr | None = None
        max_preserved_messages: StrictInt = DEFAULT_MAX_PRESERVED
        compaction_model: StrictStr | None = None
        prompt: StrictStr | None = None
        prompt_file: StrictStr | None = None
        settings_overrides: dict[str, Any] = {}

    class ConfigFile(BaseModel):
        model_config = ConfigDict(extra="forbid")

        compaction: CompactionBlock | None = None
        compaction_model: StrictStr | None = None
        context_window: StrictInt | None = None  # the model's, in tokens (checked below)
        provider: dict[Any, Any] | None = None  # field names are checked with the block

    return ConfigFile


@dataclass(frozen=True)
class CompactionSettings:
    """The compaction settings the engine reads, typed: whether compaction is
    on (and why not), the preserved tail, the request model override (the
    top-level ``compaction_model`` over ``compaction.compaction_model``), the
    prompt settings and the request's ``settings_overrides``."""

    enabled: bool = True
    disabled_reason: str | None = None
    max_preserved_messages: int = DEFAULT_MAX_PRESERVED
    compaction_model: str | None = None  # the effective override
    block_model: str | None = None  # compaction.compaction_model, as written
    prompt: str | None = None
    prompt_file: str | None = None
    settings_overrides: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, config: dict[str, Any] | None) -> CompactionSettings:
        """The settings of a flat config mapping (the one place it is read)."""
        config = config or {}
        block = config.get("compaction")
        block = block if isinstance(block, dict) else {}
        enabled, reason = compaction_enablement(config)
        max_preserved = block.get("max_preserved_messages")
        block_model = block.get("compaction_model")
        top = config.get("compaction_model")
        model = str(top) if top else (None if block_model is None else str(block_model))
        return cls(
            enabled=enabled,
            disabled_reason=reason,
            max_preserved_messages=(
                DEFAULT_MAX_PRESERVED if max_preserved is None else int(max_preserved)
            ),
            compaction_model=model,
            block_model=block_model,
            prompt=block.get("prompt"),
            prompt_file=block.get("prompt_file"),
            settings_overrides=dict(block.get("settings_overrides") or {}),
        )

    def as_spec(self) -> dict[str, Any]:
        """The spec's compaction config mapping (what ``_get_compaction_config``
        returns, and what the spec-shaped request builder reads)."""
        return {
            "max_preserved_messages": self.max_preserved_messages,
            "compaction_model": self.block_model,
            "prompt": self.prompt,
            "prompt_file": self.prompt_file,
            "settings_overrides": dict(self.settings_overrides),
        }


DEFAULT_CONFIG: dict[str, Any] = {
    "compaction": {
        "enabled": True,
        "type": "kimi",
        "max_preserved_messages": DEFAULT_MAX_PRESERVED,
        "compaction_model": None,
        "prompt": None,
        "prompt_file": None,
        "settings_overrides": {},
    }
}


@dataclass
class AppConfig:
    """The loaded configuration: ``raw`` is the flat config mapping the
    engine reads (``compaction`` at the root), ``path`` the file it came from
    (None for built-in defaults)."""

    raw: dict[str, Any] = field(default_factory=lambda: _deep_copy(DEFAULT_CONFIG))
    path: Path | None = None

    @property
    def provider(self) -> dict[str, Any] | None:
        return self.raw.get("provider")

    @property
    def context_window(self) -> int | None:
        """The model's context window in tokens, as configured (None: not set;
        the job then looks the model up: ``job/window.py``)."""
        value = self.raw.get("context_window")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def compaction(self) -> CompactionSettings:
        """The typed compaction settings (read from ``raw`` as it is now)."""
        return CompactionSettings.read(self.raw)

    def prompt(self, prompt_file: str | Path | None = None) -> PromptSource:
        """The active prompt: the config's inline prompt, else ``prompt_file``
        (an explicit one, e.g. ``--prompt-file``), else the config's
        ``prompt_file`` (relative to the config file), else kimi-cli's or the
        bundled one. Every front end resolves it here."""
        return resolve_prompt(
            self.compaction.as_spec(), prompt_file=prompt_file, base_dir=self.base_dir
        )

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path else Path.cwd()


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


def default_config_path() -> Path | None:
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env).expanduser()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    candidate = base / "kimi-compact-tui" / "config.yaml"
    return candidate if candidate.is_file() else None


def load_config(path: str | Path | None = None, *, search: bool = True) -> AppConfig:
    """Load and validate a config file; with none given (and none found when
    ``search`` is true) return the defaults."""
    if path is None and search:
        path = default_config_path()
    if path is None:
        return AppConfig()
    p = Path(path).expanduser()
    if p.is_dir():
        raise ConfigError(f"{p}: config path is a folder")
    text = read_utf8(p, "config file", ConfigError)
    return parse_config(text, p)


def parse_config(text: str, path: Path) -> AppConfig:
    import yaml
    from pydantic import ValidationError

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ConfigError(f"{where}: invalid YAML ({problem})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        got = "text" if isinstance(data, str) else limits.shown(data)
        raise ConfigError(f"{path}: config must be a mapping of keys, got {got}")
    try:
        parsed: Any = _file_model().model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"] if x != "[key]") or "(top level)"
        raise ConfigError(f"{path}: {loc}: {_in_words(err)}{_did_you_mean(err)}") from None
    if parsed.compaction is not None:
        _check_compaction(parsed.compaction, path)
    window = parsed.context_window
    if window is not None and not 1 <= window <= MAX_CONTEXT_WINDOW:
        raise ConfigError(
            f"{path}: context_window: must be a number of tokens from 1 to "
            f"{MAX_CONTEXT_WINDOW:,}, got {window}"
        )
    if parsed.provider is not None:
        # The provider block is checked here too, so its errors name the file.
        try:
            validate_provider_block(parsed.provider)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    raw: dict[str, Any] = _deep_copy(data)
    if parsed.compaction is None:
        raw["compaction"] = _deep_copy(DEFAULT_CONFIG["compaction"])
    else:
        # max_preserved_messages 0 is valid: kimi-cli then never compacts (a no-op).
        raw["compaction"] = parsed.compaction.model_dump()
    return AppConfig(raw=raw, path=path)


#: pydantic's error types, said the way a YAML file is written.
_WORDS = {
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "string_type": "must be text",
    "dict_type": "must be a mapping",
    "extra_forbidden": "unknown setting",
    "missing": "required",
}


def _in_words(err: Any) -> str:
    words = _WORDS.get(err["type"])
    if words is None:
        return str(err["msg"])
    if err["type"] in ("extra_forbidden", "missing"):
        return words
    return f"{words}, got {limits.shown(err.get('input'))}"


def _did_you_mean(err: Any) -> str:
    """For an unknown setting, the known one it resembles: " (did you mean X?)"."""
    import difflib
    import typing

    if err["type"] != "extra_forbidden" or not err["loc"]:
        return ""
    *parents, name = (str(x) for x in err["loc"])
    model: Any = _file_model()
    for parent in parents:  # down to the block the setting is in
        field = model.model_fields.get(parent)
        if field is None:
            return ""
        nested = [a for a in typing.get_args(field.annotation) if hasattr(a, "model_fields")]
        if not nested:
            return ""
        model = nested[0]
    close = difflib.get_close_matches(name, list(model.model_fields), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


REQUIRED = {"enabled": "true", "type": "kimi"}


def _check_compaction(block: Any, path: Path) -> None:
    """The keys docs/configuration.md marks required, and the numbers in their ranges."""
    for name, example in REQUIRED.items():
        if getattr(block, name) is None:
            raise ConfigError(
                f"{path}: compaction.{name}: required when the compaction block is present "
                f"(e.g. {name}: {example})"
            )
    try:
        limits.MAX_PRESERVED_MESSAGES.check(block.max_preserved_messages)
    except ValueError as exc:
        raise ConfigError(f"{path}: compaction.max_preserved_messages: {exc}") from None
    problem = limits.check_request_fields(block.settings_overrides, "compaction.settings_overrides")
    if problem is not None:
        raise ConfigError(f"{path}: {problem}")


def _get_compaction_config(config: dict[str, Any] | None) -> dict[str, Any]:
    """The compaction settings read from the root-level ``compaction`` block of
    a flat config (the spec's helper): ``max_preserved_messages`` (default 2),
    ``compaction_model``, ``prompt``, ``prompt_file`` and ``settings_overrides``."""
    return CompactionSettings.read(config).as_spec()


def compaction_enablement(config: dict[str, Any] | None) -> tuple[bool, str | None]:
    """(enabled, reason when not). Active only with ``compaction.enabled: true``
    and ``compaction.type: "kimi"`` at the root of the flat config."""
    block = (config or {}).get("compaction")
    if not isinstance(block, dict):
        return False, "no 'compaction' block in the config"
    if block.get("enabled") is not True:
        return False, "compaction is disabled in the config (compaction.enabled is not true)"
    if block.get("type") is None:
        return False, "compaction.type is not set (it must be 'kimi')"
    if block.get("type") != "kimi":
        return False, f"compaction.type is {limits.shown(block.get('type'))}, not 'kimi'"
    return True, None


def effective_compaction_model(config: dict[str, Any] | None) -> str | None:
    """The request model override: the top-level per-session
    ``compaction_model`` wins over ``compaction.compaction_model``."""
    return CompactionSettings.read(config).compaction_model

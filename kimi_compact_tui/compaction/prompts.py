"""Resolving the compaction prompt, always with its provenance.

Order: ``compaction.prompt`` (inline) → a prompt file (``--prompt-file`` or
``compaction.prompt_file``) → kimi-cli's own ``compact.md`` when found on this
machine (``KIMI_CLI_COMPACT_MD``, an importable ``kimi_cli`` package, or a
kimi-cli installed as a uv or pipx tool) → the bundled prompt.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.fsutil import read_utf8

UPSTREAM_SHA256 = "24753a19a3c0dfabc5545a103666a559cc7dd8caa963715fdc6ca7dd787a0e0a"
KIMI_CLI_COMPACT_MD_ENV = "KIMI_CLI_COMPACT_MD"
BUNDLED_NAME = "kimi_compact.md"


@dataclass(frozen=True)
class PromptSource:
    source: str  # "inline" | "file" | "kimi-cli" | "bundled"
    path: str | None
    text: str
    sha256: str

    @property
    def empty(self) -> bool:
        """No prompt at all (an empty or blank file, or an emptied edit): a
        request with it is refused before it is made."""
        return not self.text.strip()

    @property
    def upstream_exact(self) -> bool:
        return self.sha256 == UPSTREAM_SHA256

    def describe(self) -> str:
        where = f" ({self.path})" if self.path else ""
        badge = " [exact kimi-cli prompt]" if self.upstream_exact else ""
        return f"{self.source}{where} sha256:{self.sha256[:12]}{badge}"

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "path": self.path,
            "sha256": self.sha256,
            "upstream_exact": self.upstream_exact,
        }


def edited_prompt(text: str) -> PromptSource:
    """A prompt edited during a review: a copy in memory (never written over the
    bundled file or kimi-cli's), reported with its own sha256."""
    return PromptSource("edited", None, text, _sha256(text))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read_prompt(path: Path, what: str) -> str:
    return read_utf8(path, what, ConfigError)


def bundled_prompt_path() -> Path:
    here = Path(__file__).resolve().parent.parent
    for candidate in (
        here / "_bundled" / "prompts" / BUNDLED_NAME,
        here.parent / "prompts" / BUNDLED_NAME,
    ):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"bundled prompt {BUNDLED_NAME} is missing from the installation")


def _tool_site_packages_globs() -> list[Path]:
    home = Path.home()
    roots = []
    uv_tool_dir = os.environ.get("UV_TOOL_DIR")
    if uv_tool_dir:
        roots.append(Path(uv_tool_dir) / "kimi-cli")
    xdg_data = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    roots.append(xdg_data / "uv" / "tools" / "kimi-cli")
    pipx_home = os.environ.get("PIPX_HOME")
    if pipx_home:
        roots.append(Path(pipx_home) / "venvs" / "kimi-cli")
    roots.append(home / ".local" / "pipx" / "venvs" / "kimi-cli")
    roots.append(xdg_data / "pipx" / "venvs" / "kimi-cli")
    return roots


def find_kimi_cli_compact_md() -> Path | None:
    """kimi-cli's ``prompts/compact.md`` on this machine, if any."""
    env = os.environ.get(KIMI_CLI_COMPACT_MD_ENV)
    if env:
        p = Path(env).expanduser()
        if not p.is_file():
            raise ConfigError(f"{p}: {KIMI_CLI_COMPACT_MD_ENV} names a file that does not exist")
        return p
    try:
        spec = importlib.util.find_spec("kimi_cli")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            p = Path(loc) / "prompts" / "compact.md"
            if p.is_file():
                return p
    for root in _tool_site_packages_globs():
        if not root.is_dir():
            continue
        for p in sorted(root.glob("lib/python3*/site-packages/kimi_cli/prompts/compact.md")):
            return p
        for p in sorted(root.glob("Lib/site-packages/kimi_cli/prompts/compact.md")):
            return p
    return None


def resolve_prompt(
    compaction_cfg: dict[str, Any],
    *,
    prompt_file: str | Path | None = None,
    base_dir: Path | None = None,
    use_kimi_cli: bool = True,
) -> PromptSource:
    """The active prompt and where it came from (see the module docstring)."""
    inline = compaction_cfg.get("prompt")
    if inline:
        return PromptSource("inline", None, inline, _sha256(inline))
    file_ = prompt_file or compaction_cfg.get("prompt_file")
    if file_:
        p = Path(file_).expanduser()
        if not p.is_absolute() and base_dir is not None and prompt_file is None:
            p = base_dir / p
        text = _read_prompt(p, "prompt file")
        return PromptSource("file", str(p), text, _sha256(text))
    if use_kimi_cli:
        found = find_kimi_cli_compact_md()
        if found is not None:
            text = _read_prompt(found, "kimi-cli compact.md")
            return PromptSource("kimi-cli", str(found), text, _sha256(text))
    p = bundled_prompt_path()
    text = _read_prompt(p, "bundled prompt")
    return PromptSource("bundled", str(p), text, _sha256(text))

"""Helpers for the core engine tests (reference data location, builders)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.model import Message
from tests.agents.harness import kimi_cli_compact_md, kimi_cli_installed, require_agent

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_sessions"
REFERENCE = REPO.parent / "shared" / "reference"
KIMI_REF = REFERENCE / "kimi-cli"
UPSTREAM_SHA = "24753a19a3c0dfabc5545a103666a559cc7dd8caa963715fdc6ca7dd787a0e0a"


def need_reference(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"reference data not available here ({path} is absent)")
    return path


def any_kimi_cli_compact_md() -> Path | None:
    """kimi-cli's own ``compact.md``: the installed kimi-cli's (``.ci/install-agents``), else
    the reference copy, else None."""
    found = kimi_cli_compact_md()
    if found is None and (KIMI_REF / "compact.md").is_file():
        found = KIMI_REF / "compact.md"
    return found


def kimi_cli_compact_md_file() -> Path:
    """``any_kimi_cli_compact_md()``, required: without it the test skips, or fails under
    CI=true (see require_agent)."""
    found = any_kimi_cli_compact_md()
    if found is not None:
        return found
    require_agent(kimi_cli_installed(), "kimi-cli")
    raise AssertionError("the installed kimi-cli has no prompts/compact.md")


def golden_cases() -> list[dict]:
    path = KIMI_REF / "golden" / "prepare_cases.json"
    if not path.exists():
        return []
    return json.loads(path.read_text(encoding="utf-8"))


def msgs(*pairs) -> list[Message]:
    """Build messages from (role, content) pairs or dicts."""
    out = []
    for p in pairs:
        out.append(Message(dict(p)) if isinstance(p, dict) else Message.make(p[0], p[1]))
    return out


def sample_paths() -> list[Path]:
    return sorted(p for p in SAMPLES.iterdir() if not p.name.startswith("."))

"""Helpers for the core engine tests (reference data location, builders)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.model import Message

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_sessions"
REFERENCE = REPO.parent / "shared" / "reference"
KIMI_REF = REFERENCE / "kimi-cli"
UPSTREAM_SHA = "24753a19a3c0dfabc5545a103666a559cc7dd8caa963715fdc6ca7dd787a0e0a"


def need_reference(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"reference data not available here ({path} is absent)")
    return path


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

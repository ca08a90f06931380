"""Pytest fixtures for provider tests (imported by conftest.py).

``loopback``: a started :class:`tests.loopback_server.LoopbackServer`, stopped
after the test. ``provider_config``: builds a fast-failing ProviderConfig for
the loopback server (short timeouts, tiny backoff).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.providers.base import ProviderConfig
from tests.loopback_server import LoopbackServer

REFERENCE_STREAMS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "streams"


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    with LoopbackServer(lifetime=900) as server:
        yield server


@pytest.fixture
def provider_config(loopback: LoopbackServer) -> Callable[..., ProviderConfig]:
    def make(kind: str = "openai", **overrides: Any) -> ProviderConfig:
        base = loopback.root_url if kind == "ollama" else loopback.base_url
        values: dict[str, Any] = {
            "kind": kind,
            "base_url": base,
            "model": "test-model",
            "api_key_env": "KCT_TEST_API_KEY",
            "connect_timeout": 5.0,
            "read_timeout": 5.0,
            "retry_base_delay": 0.01,
            "retry_cap": 0.05,
        }
        values.update(overrides)
        return ProviderConfig(**values)

    return make


@pytest.fixture
def reference_streams() -> Path:
    if not REFERENCE_STREAMS.is_dir():
        pytest.skip(f"reference stream samples not found at {REFERENCE_STREAMS}")
    return REFERENCE_STREAMS

"""Shared pytest fixtures. Each block below belongs to one area of the project."""

import pytest

# --- provider fixtures (loopback HTTP server, provider configs): tests/provider_fixtures.py
from tests.provider_fixtures import *  # noqa: E402,F401,F403

# --- end provider fixtures

# --- isolation from the machine running the tests ------------------------------------------


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch, tmp_path_factory):
    """No user config, no kimi-cli prompt found on this machine, no real keys:
    every test (and every subprocess it starts) sees the same world, so the
    prompt source and the snapshots do not depend on who runs them."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "UV_TOOL_DIR", "PIPX_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    for name in (
        "KIMI_COMPACT_TUI_CONFIG",
        "KIMI_CLI_COMPACT_MD",
        "KIMI_SHARE_DIR",
        "OPENAI_API_KEY",
        "MOONSHOT_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


# --- shared session factories and the in-process CLI (tests/factories.py) --------------------

from tests.cli_fixtures import CliResult, cli_main  # noqa: E402,F401
from tests.factories import FORMATS  # noqa: E402


@pytest.fixture(params=FORMATS)
def session_format(request) -> str:
    """Runs the test once per session format (kimi, openai-json, openai-jsonl)."""
    return request.param

"""Fixtures for the real-agent tests (marker ``agents``).

The agents come from ``.ci/install-agents``. Where they are not installed the tests
skip with a reason, except under CI=true, where CI installs them and a missing agent
fails the test.
"""

from __future__ import annotations

import os

import pytest

from tests.agents.fake_model import FakeModel
from tests.agents.harness import (
    KimiCli,
    KimiCode,
    kimi_cli_installed,
    kimi_code_installed,
    require_agent,
    shared_template,
)

_require = require_agent


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/agents/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.agents)


@pytest.fixture
def fake_model():
    with FakeModel(
        summary="FAKE SUMMARY: the user ran echo twice and asked two questions.", lifetime=1800
    ) as fm:
        yield fm


@pytest.fixture
def kimi_cli(tmp_path, fake_model):
    _require(kimi_cli_installed(), "kimi-cli")
    return KimiCli(tmp_path / "kimi-cli", fake_model)


@pytest.fixture
def kimi_code(tmp_path, fake_model):
    _require(kimi_code_installed(), "kimi-code")
    return KimiCode(tmp_path / "kimi-code", fake_model)


@pytest.fixture(scope="session")
def kimi_cli_session_template(tmp_path_factory):
    """One kimi-cli session written by kimi-cli itself (4 turns, 2 shell tool calls),
    made once per test run. Use ``runner.clone(root, fake)`` to work on a copy."""
    _require(kimi_cli_installed(), "kimi-cli")
    return shared_template(tmp_path_factory, "kimi-cli", KimiCli)


@pytest.fixture(scope="session")
def kimi_code_session_template(tmp_path_factory):
    """One kimi-code session written by kimi-code itself (4 turns, 2 shell tool calls),
    made once per test run. Use ``runner.clone(root, fake)`` to work on a copy."""
    _require(kimi_code_installed(), "kimi-code")
    return shared_template(tmp_path_factory, "kimi-code", KimiCode)

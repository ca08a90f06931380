"""Fixtures for the real-agent tests (marker ``agents``, given to every test in this
folder by tests/conftest.py).

The agents come from ``.ci/install-agents``. Where they are not installed the tests
skip with a reason, except under CI=true, where CI installs them and a missing agent
fails the test.
"""

from __future__ import annotations

import pytest

from tests.agents.compaction_cases import (
    ALL_CASES,
    OUTPUT_TOKENS,
    SUMMARY,
    SUMMARY_THINK,
    SYSTEM_PROMPT,
)
from tests.agents.fake_model import FakeModel
from tests.agents.harness import (
    KimiCli,
    KimiCode,
    kimi_cli_installed,
    kimi_code_installed,
    require_agent,
    shared_template,
)
from tests.agents.kimi_cli_upstream import shared_upstream_results

_require = require_agent


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


@pytest.fixture(scope="session")
def kimi_cli_upstream(tmp_path_factory):
    """kimi-cli's own ``SimpleCompaction`` run on every case of tests/agents/compaction_cases.py
    (one subprocess per test run): the run's facts and, under ``cases``, each case's result."""
    _require(kimi_cli_installed(), "kimi-cli")
    payload = {
        "summary": SUMMARY,
        "summary_think": SUMMARY_THINK,
        "output_tokens": OUTPUT_TOKENS,
        "system_prompt": SYSTEM_PROMPT,
        "cases": [{k: v for k, v in c.items() if k != "stored_upstream"} for c in ALL_CASES],
    }
    return shared_upstream_results(tmp_path_factory, payload)

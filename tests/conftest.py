"""Shared pytest fixtures. Each block below belongs to one area of the project."""

import os
import signal
from pathlib import Path

import pytest

# --- provider fixtures (loopback HTTP server, provider configs): tests/provider_fixtures.py
from tests.provider_fixtures import *  # noqa: E402,F401,F403

# --- end provider fixtures

# --- Ctrl+C as a person's shell gives it ----------------------------------------------------------


def pytest_configure(config):
    """A launcher may start the run with SIGINT ignored (an asynchronous command of a
    shell without job control does), and an ignored signal survives exec: every
    child the tests start would then ignore the Ctrl+C the cancel tests send it.
    Give the run the default a terminal gives, so children inherit the default."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# --- markers: the fast lane (CONTRIBUTING.md) -------------------------------------------------

TESTS = Path(__file__).resolve().parent

#: The tests marked ``slow``, relative to tests/: a whole file, or ``file::test`` (every
#: parameter of it). Real terminals, a real browser, a writer killed at many moments,
#: hypothesis, the 50 MB inputs, a 20,000-message diff, the app walked under every colour
#: filter, whole scripts run end to end. CI runs them all;
#: ``pytest -m "not agents and not slow"`` leaves them out. tests/project/test_fast_lane.py
#: checks that each still names a test.
SLOW = (
    "tui/test_tmux_walkthrough.py",
    "tui/test_tmux_revise.py",
    "tui/test_opencode_tui.py",
    "cli/test_serve_browser.py",
    "store/test_apply_crash.py",
    "robustness/test_properties.py",
    "tui/test_tui_flow.py::test_diff_large_session",
    "tui/test_tui_nocolor.py::test_session_renders_under_filter",
    "tui/test_tui_nocolor.py::test_no_color_with_ansi_theme_and_dim",
    "tui/test_tui_nocolor.py::test_no_color_env_session",
    "robustness/test_bad_inputs.py::test_console_entry_50mb_message",
    "robustness/test_bad_inputs.py::test_tui_opens_the_50mb_message",
    "robustness/test_bad_inputs.py::test_50mb_message_loads_and_round_trips",
    "project/test_screenshots_script.py",
    "project/test_install_agents.py",
)


def pytest_collection_modifyitems(items):
    """``agents`` on every test under tests/agents/ (by folder: a new file there has it
    without saying so), ``slow`` on the tests SLOW names."""
    agents, slow = pytest.mark.agents, pytest.mark.slow
    for item in items:
        try:
            where = Path(str(item.fspath)).resolve().relative_to(TESTS).as_posix()
        except ValueError:  # a test outside tests/ (a pytester run)
            continue
        if where.startswith("agents/"):
            item.add_marker(agents)
        test = getattr(item, "originalname", item.name)
        if where in SLOW or f"{where}::{test}" in SLOW:
            item.add_marker(slow)


# --- xdist workers at the end of a run --------------------------------------------------------


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    """An xdist worker has reported every result by now. When the master then ends it,
    execnet interrupts a worker still tearing down 5 s later with a SIGINT to itself
    (seen on a loaded machine: a KeyboardInterrupt in whatever code runs then, such
    as hypothesis' gc callback); it ends the worker 10 s later anyway, so the
    interrupt only adds a traceback to the log. Ignore it from here on."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


# --- isolation from the machine running the tests ------------------------------------------


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch, tmp_path_factory):
    """No user config, no kimi-cli prompt found on this machine, no agent's sessions
    (every agent's home is under a fresh, empty HOME), no real keys: every test (and
    every subprocess it starts) sees the same world, so the prompt source, the picker
    and the snapshots do not depend on who runs them. The app's state folder is
    ``$XDG_STATE_HOME`` (under that HOME)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in (
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "UV_TOOL_DIR",
        "PIPX_HOME",
    ):
        monkeypatch.setenv(name, str(home / name.lower()))
    for name in (
        "KIMI_COMPACT_TUI_CONFIG",
        "KIMI_CLI_COMPACT_MD",
        "KIMI_SHARE_DIR",
        "KIMI_CODE_HOME",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "OPENCODE_DB",
        "OPENAI_API_KEY",
        "MOONSHOT_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


# --- shared session factories (tests/factories/) and the in-process CLI ----------------------

from tests.cli_fixtures import CliResult, cli_main  # noqa: E402,F401
from tests.factories import FORMATS  # noqa: E402


@pytest.fixture(params=FORMATS)
def session_format(request) -> str:
    """Runs the test once per session format (kimi, openai-json, openai-jsonl)."""
    return request.param


# --- the review app (tests/tui_support.py: the Pilot harness) ---------------------------------


@pytest.fixture
def review_app():
    """``review_app(path, provider=None, config=None)``: the real app on a session file,
    with the offline summarizer and the default config unless given (not started:
    ``async with app.run_test(size=SIZE) as pilot``). Run a compaction in it with
    ``tests.tui_support.compact(pilot)``."""
    from tests.tui_support import review_app as build

    return build

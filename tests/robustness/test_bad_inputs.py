"""Bad inputs: each gives one error line and exit code 2, never a traceback or
a hang, and leaves every file untouched (sha256 before and after).

The corpus is built in a temporary folder by :mod:`tests.bad_inputs` (the 50 MB
message included). Most cases call ``cli.main`` in-process; the ones where a
crash or a hang would take the test run down (FIFO, deep nesting, 50 MB) also
run the real console entry in a subprocess with a timeout.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kimi_compact_tui import cli
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats import dump_session, load_session
from tests import factories
from tests.bad_inputs import (
    CONFIG_ERRORS,
    GOOD_LINES,
    SESSION_ERRORS,
    SESSION_NO_CRASH,
    SESSION_OK,
    SESSION_SKIPPED,
    Case,
    build_corpus,
    snapshot,
)
from tests.tui_support import wait_until

ROOT = Path(__file__).resolve().parents[2]
PATH_ERRORS = [
    "folder_without_session",
    "missing_path",
    "unreachable_under_a_file",
    "fifo",
    "fifo_folder",
    "dev_null",
]
GOOD_LINES_BYTES = {line.encode() for line in GOOD_LINES}
ERROR_CASES = [*SESSION_ERRORS, *PATH_ERRORS, *(f"config_{n}" for n in CONFIG_ERRORS)]
ERROR_CASES.append("config_is_a_folder")
IN_PROCESS = [n for n in ERROR_CASES if not n.startswith("fifo")]
PREFIX = "kimi-compact-tui: error: "
SUBPROCESS_TIMEOUT = 60


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    root = tmp_path_factory.mktemp("bad_inputs")
    cases = {c.name: c for c in build_corpus(root)}
    cases["__root__"] = Case("__root__", root)
    return cases


@pytest.fixture(autouse=True)
def isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user config can leak into these runs."""
    monkeypatch.delenv("KIMI_COMPACT_TUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def watched(case: Case, root: Path) -> list[Path]:
    paths = [case.session.parent if root in case.session.parents else case.session]
    if case.config is not None:
        paths.append(case.config.parent)
    return paths


def argv_for(case: Case, command: str) -> list[str]:
    argv = [command, str(case.session)]
    if case.config is not None:
        argv += ["--config", str(case.config)]
    return argv


def assert_one_error_line(rc: int, out: str, err: str) -> str:
    assert "Traceback" not in out and "Traceback" not in err, err
    assert rc == 2, (rc, err)
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith(PREFIX), err
    assert len(lines[0]) > len(PREFIX) + 5, err
    return lines[0]


def test_corpus_has_at_least_30_bad_inputs(corpus: dict[str, Case]) -> None:
    bad = [c for c in corpus.values() if c.expect == "error"]
    assert len(bad) >= 30
    assert {"fifo", "big_50mb_message", "deep_nesting_kimi", "empty_file"} <= set(corpus)
    assert corpus["big_50mb_message"].session.stat().st_size >= 50 * 1024 * 1024


# ----------------------------------------------------------------------------- CLI, in-process


@pytest.mark.parametrize("command", ["plan", "preview"])
@pytest.mark.parametrize("name", IN_PROCESS)
def test_cli_bad_input_one_line_exit_2(
    name: str, command: str, corpus: dict[str, Case], capsys: pytest.CaptureFixture[str]
) -> None:
    case = corpus[name]
    watch = watched(case, corpus["__root__"].session)
    before = snapshot(watch)
    rc = cli.main(argv_for(case, command))
    captured = capsys.readouterr()
    line = assert_one_error_line(rc, captured.out, captured.err)
    assert captured.out == ""
    if case.config is not None:
        # Names the config file (or the file it points to), or the provider field.
        assert str(case.config.parent) in line or "provider" in line, line
    assert snapshot(watch) == before


@pytest.mark.parametrize("name", list(SESSION_SKIPPED))
def test_kimi_cli_skipped_line_loads_with_a_warning(
    name: str, corpus: dict[str, Case], capsys: pytest.CaptureFixture[str]
) -> None:
    """kimi-cli resumes these files, skipping the bad line with a warning:
    so do we, naming the line, and the bytes survive a round trip."""
    case = corpus[name]
    data = case.session.read_bytes()
    session = load_session(case.session)
    assert len(session.warnings) == 1, session.warnings
    warning = session.warnings[0]
    bad_line = next(
        i for i, line in enumerate(data.split(b"\n"), 1) if line not in GOOD_LINES_BYTES
    )
    assert warning.startswith(f"{case.session}:{bad_line}: "), warning
    assert "\n" not in warning
    skipped = name != "invalid_utf8"  # that line is read with U+FFFD, as kimi-cli does
    assert ("skipped" in warning) == skipped
    texts = [m.text() for m in session.messages]
    assert texts[-5 if not skipped else -4 :][:4] == [
        "Fix the parser.",
        "Done, the parser is fixed.",
        "Now the tests.",
        "All tests pass.",
    ]
    assert dump_session(session) == data
    before = snapshot([case.session])
    assert cli.main(["plan", str(case.session)]) == 0
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and f":{bad_line}: " in err, err
    assert snapshot([case.session]) == before


def test_a_kimi_cli_event_log_is_named_as_one(corpus: dict[str, Case]) -> None:
    """Not "not supported yet": it is no history at all (see
    tests/formats/test_kimi_cli_wire_wording.py)."""
    with pytest.raises(UserError) as info:
        load_session(corpus["kimi_cli_wire_log"].session)
    assert "kimi-cli's wire.jsonl, its UI event log" in str(info.value)


@pytest.mark.parametrize("name", list(SESSION_ERRORS))
def test_load_session_raises_a_clean_error(name: str, corpus: dict[str, Case]) -> None:
    case = corpus[name]
    with pytest.raises(UserError) as info:
        load_session(case.session)
    message = str(info.value)
    assert "\n" not in message
    assert case.session.name in message  # names the file


# ----------------------------------------------------------------------------- valid but odd


@pytest.mark.parametrize("name", list(SESSION_OK))
def test_unknown_roles_and_parts_are_valid_and_kept(
    name: str, corpus: dict[str, Case], capsys: pytest.CaptureFixture[str]
) -> None:
    case = corpus[name]
    data = case.session.read_bytes()
    session = load_session(case.session)
    roles = {m.role for m in session.messages}
    assert roles - {"system", "user", "assistant", "tool"}  # unknown roles are kept
    if session.format.name == "kimi":
        assert dump_session(session) == data
    else:
        import json

        assert json.loads(dump_session(session)) == json.loads(data)
    for command in ("plan", "preview"):
        rc = cli.main([command, str(case.session)])
        captured = capsys.readouterr()
        assert rc == 0, captured.err
        assert "Traceback" not in captured.err
    assert case.session.read_bytes() == data


@pytest.mark.parametrize(
    "name",
    list(SESSION_NO_CRASH),
)
def test_odd_field_types_load_or_fail_cleanly(
    name: str, corpus: dict[str, Case], capsys: pytest.CaptureFixture[str]
) -> None:
    case = corpus[name]
    data = case.session.read_bytes()
    for command in ("plan", "preview"):
        rc = cli.main([command, str(case.session)])
        captured = capsys.readouterr()
        if rc == 2:
            assert_one_error_line(rc, captured.out, captured.err)
        else:
            assert rc == 0, captured.err
            assert "Traceback" not in captured.err
            # Accepted: kept as it is.
            assert dump_session(load_session(case.session)) == data
    assert case.session.read_bytes() == data


def test_50mb_message_loads_and_round_trips(corpus: dict[str, Case]) -> None:
    case = corpus["big_50mb_message"]
    data = case.session.read_bytes()
    session = load_session(case.session)
    assert len(session.messages) == 2
    assert len(session.messages[0].text()) > 30 * 1024 * 1024
    assert dump_session(session) == data


# ----------------------------------------------------------------------------- real subprocesses


def run_cli(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return factories.run_cli(*argv, timeout=SUBPROCESS_TIMEOUT)


@pytest.mark.parametrize(
    "name,command",
    [
        ("fifo", "plan"),
        ("fifo", "preview"),
        ("fifo_folder", "plan"),
        ("deep_nesting_json", "preview"),
        ("deep_nesting_object", "plan"),
        ("kimi_every_line_malformed", "preview"),
        ("binary_file", "plan"),
        ("config_yaml_syntax_error", "plan"),
        ("config_provider_unknown_kind", "preview"),
    ],
)
def test_console_entry_bad_input(name: str, command: str, corpus: dict[str, Case]) -> None:
    case = corpus[name]
    watch = watched(case, corpus["__root__"].session)
    before = snapshot(watch)
    proc = run_cli(argv_for(case, command))
    assert_one_error_line(proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert snapshot(watch) == before


def test_console_entry_50mb_message(corpus: dict[str, Case]) -> None:
    case = corpus["big_50mb_message"]
    before = snapshot([case.session])
    for command in ("plan", "preview"):
        proc = run_cli([command, str(case.session)])
        assert "Traceback" not in proc.stderr
        assert proc.returncode == 0, proc.stderr
        # The preview of the huge message is capped, not printed whole.
        assert len(proc.stdout) < 1024 * 1024
    assert snapshot([case.session]) == before


def test_every_corpus_file_is_untouched_at_the_end(corpus: dict[str, Case]) -> None:
    """Run last in this module (pytest keeps file order): nothing was written,
    renamed or left behind anywhere in the corpus."""
    root = corpus["__root__"].session
    expected = snapshot([root])
    # Rebuild the corpus elsewhere and compare the contents, name by name.
    fresh_root = root.parent / (root.name + "_fresh")
    build_corpus(fresh_root)
    fresh = snapshot([fresh_root])
    rel = {str(Path(k).relative_to(root)): v for k, v in expected.items() if k != str(root)}
    rel_fresh = {
        str(Path(k).relative_to(fresh_root)): v for k, v in fresh.items() if k != str(fresh_root)
    }
    assert rel == rel_fresh


# ----------------------------------------------------------------------------- the TUI


TUI_CASES = [
    "kimi_every_line_malformed",
    "nul_bytes",
    "binary_file",
    "empty_file",
    "json_top_level_string",
    "folder_without_session",
    "missing_path",
    "fifo",
    "unreachable_under_a_file",
]


def _tui_app_factory():
    from kimi_compact_tui.tui.app import create_app

    return create_app


def _dialog_message(app) -> str | None:
    """The message of the ErrorDialog on the app's screen stack, if any."""
    from kimi_compact_tui.tui.screens.error import ErrorDialog

    for screen in app.screen_stack:
        if isinstance(screen, ErrorDialog):
            return screen.message
    return None


def _error_shown(app) -> str | None:
    """The error the app shows: a dialog, or its error notification."""
    return _dialog_message(app) or getattr(app, "last_error", None)


async def _open_bad(app, pilot) -> str | None:
    # The load runs in a worker thread.
    message = await wait_until(pilot, lambda: _error_shown(app), "the error shown", timeout=60)
    await pilot.pause()
    return message


@pytest.mark.parametrize("name", TUI_CASES)
async def test_tui_shows_an_error_instead_of_crashing(name: str, corpus: dict[str, Case]) -> None:
    create_app = _tui_app_factory()
    case = corpus[name]
    watch = watched(case, corpus["__root__"].session)
    before = snapshot(watch)
    app = create_app(case.session)
    async with app.run_test(size=(100, 30)) as pilot:
        message = await _open_bad(app, pilot)
        assert message, "no error shown"
        assert "\n" not in message
        assert app.is_running  # still up: the error did not take the app down
        assert app.state.session is None
    assert app.return_code in (None, 0)
    assert snapshot(watch) == before


@pytest.mark.parametrize("name", ["kimi_every_line_malformed", "binary_file", "fifo"])
async def test_tui_load_error_is_a_dialog(name: str, corpus: dict[str, Case]) -> None:
    create_app = _tui_app_factory()
    app = create_app(corpus[name].session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _open_bad(app, pilot)
        assert _dialog_message(app), "the error is not shown in a dialog"


@pytest.mark.parametrize("name", ["config_yaml_syntax_error", "config_provider_unknown_kind"])
def test_tui_bad_config_is_a_clean_error(name: str, corpus: dict[str, Case]) -> None:
    create_app = _tui_app_factory()
    case = corpus[name]
    with pytest.raises(UserError) as info:
        create_app(case.session, config_path=case.config)
    assert "\n" not in str(info.value)


async def test_tui_opens_the_50mb_message(corpus: dict[str, Case]) -> None:
    create_app = _tui_app_factory()
    case = corpus["big_50mb_message"]
    before = snapshot([case.session])
    app = create_app(case.session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(
            pilot,
            lambda: app.state.session is not None or _error_shown(app),
            "the session loaded",
            timeout=120,
        )
        await pilot.pause()
        assert _error_shown(app) is None
        assert app.state.session is not None
        assert len(app.state.session.messages) == 2
        await pilot.press("down")
        await pilot.press("up")
        await pilot.pause()
        assert app.is_running
    assert snapshot([case.session]) == before

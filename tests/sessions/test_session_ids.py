"""Every id the picker shows names its session wherever a session is named: a full id,
the short id the picker shows, the unique start of an id; an id two sessions start
with is one line naming both."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.registry import SessionNameError, find_by_id, short_ids
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.tui.screens.picker import session_label
from tests.factories import claude_code
from tests.factories.kimi_cli import share_session, write_kimi_json
from tests.factories.writers import kimi_cli_messages

KIMI_A = "196820da-1111-4222-8333-444455556666"
KIMI_B = "196820da-9999-4aaa-8bbb-cccc0000dddd"  # shares its first 8 with KIMI_A
KIMI_C = "7c0ffee0-1234-4567-89ab-cdef01234567"
CLAUDE = "42aa17c3-0b1e-4c55-9d6e-7f8091a2b3c4"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's HOME, with no agent folder moved elsewhere."""
    for name in ("CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "KIMI_CODE_HOME"):
        monkeypatch.delenv(name, raising=False)
    return Path(os.environ["HOME"])


def kimi_sessions(home: Path, *ids: str) -> dict[str, Path]:
    share = home / ".kimi"
    write_kimi_json(share, "/work/project")
    return {sid: share_session(share, "/work/project", sid, kimi_cli_messages()) for sid in ids}


def claude_session(home: Path, sid: str = CLAUDE) -> Path:
    t = claude_code.Transcript(sid=sid)
    t.user("Hello from Claude Code")
    t.assistant([claude_code.text("Hi.")])
    return t.write(home / ".claude")


def test_a_kimi_cli_session_id_names_its_session(home, cli_main):
    """Failed on old main: "nor a session id any format knows"."""
    folder = kimi_sessions(home, KIMI_C)[KIMI_C]
    assert find_by_id(KIMI_C) == SessionRef(folder)
    result = cli_main("plan", KIMI_C)
    assert result.code == 0, result.stderr
    assert "nor a session id" not in result.stderr


def test_the_short_id_the_picker_shows_names_the_session(home, cli_main):
    """Failed on old main: a short id was not a session id anywhere."""
    folders = kimi_sessions(home, KIMI_C)
    transcript = claude_session(home)
    listed = registry.discover_all()
    short = short_ids(listed)
    assert short[KIMI_C] == KIMI_C[:8] and short[CLAUDE] == CLAUDE[:8]
    for info in listed:
        label = session_label(info, short_id=short[info.session_id]).plain
        assert short[info.session_id] in label  # the id the row shows ...
        assert find_by_id(short[info.session_id]) == info.ref  # ... names that row
    assert find_by_id(CLAUDE[:8]) == SessionRef(transcript)
    assert find_by_id(KIMI_C[:8]) == SessionRef(folders[KIMI_C])
    result = cli_main("plan", KIMI_C[:8], "--json")
    assert result.code == 0, result.stderr
    assert str(folders[KIMI_C]) in result.stdout
    # A capital letter or a longer start work too; "plna" is no id (and no search).
    assert find_by_id(CLAUDE[:13].upper()) == SessionRef(transcript)
    assert find_by_id("plna") is None


def test_two_sessions_sharing_the_short_id_show_longer_ones(home):
    """Failed on old main: both rows showed 196820da."""
    kimi_sessions(home, KIMI_A, KIMI_B, KIMI_C)
    short = short_ids(registry.discover_all())
    assert short[KIMI_A] != short[KIMI_B]
    assert short[KIMI_A].startswith("196820da-") and short[KIMI_B].startswith("196820da-")
    assert len(short[KIMI_C]) == 8
    for sid in (KIMI_A, KIMI_B):
        assert find_by_id(short[sid]).path.name == sid


def test_an_ambiguous_id_names_its_matches_in_one_line(home, cli_main):
    """Failed on old main: "nor a session id any format knows"."""
    kimi_sessions(home, KIMI_A, KIMI_B)
    with pytest.raises(SessionNameError) as caught:
        find_by_id("196820da")
    line = str(caught.value)
    assert "\n" not in line
    assert KIMI_A in line and KIMI_B in line and "kimi-cli" in line
    for argv in (["plan", "196820da"], ["196820da"], ["tui", "196820da"]):
        result = cli_main(*argv)
        assert result.code == 2, argv
        assert len(result.error_lines) == 1, result.stderr
        assert KIMI_A in result.stderr and KIMI_B in result.stderr, argv
        assert "Traceback" not in result.stderr


def test_the_bare_word_and_serve_take_a_short_id(home, cli_main):
    """The bare word is the TUI's SESSION, not an unknown command; serve hands
    the session's folder to the app it serves."""
    from kimi_compact_tui.cli import build_parser, normalise_argv
    from kimi_compact_tui.commands.serve import _served_session

    folder = kimi_sessions(home, KIMI_C)[KIMI_C]
    assert normalise_argv([KIMI_C[:8]], build_parser()) == ["tui", KIMI_C[:8]]
    assert _served_session(KIMI_C[:8]) == str(folder)


def test_a_path_wins_over_an_id(home, tmp_path, monkeypatch, cli_main):
    """A file in the current folder named like a short id is that file."""
    kimi_sessions(home, KIMI_C)
    monkeypatch.chdir(tmp_path)
    (tmp_path / KIMI_C[:8]).write_text("")
    result = cli_main("plan", KIMI_C[:8])
    assert result.code == 2
    assert "file is empty" in result.stderr


async def test_the_pickers_path_box_takes_a_short_id(home):
    """Failed on old main: "no such file or folder" for the id the row shows."""
    from textual.widgets import Input

    from kimi_compact_tui.tui.app import create_app
    from tests.tui_support import settle, wait_until

    transcript = claude_session(home)
    kimi_sessions(home, KIMI_A, KIMI_B)
    app = create_app(None, provider="offline")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        picker = app.screen
        await wait_until(pilot, lambda: not picker.scanning, "the picker's list")
        box = picker.query_one("#picker-path", Input)
        box.focus()
        box.value = "196820da"  # two sessions: the dialog names both
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.last_error is not None, "the error")
        assert KIMI_A in app.last_error and KIMI_B in app.last_error
        await pilot.press("escape")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "PickerScreen", "picker")
        box = app.screen.query_one("#picker-path", Input)
        box.focus()
        box.value = CLAUDE[:8]
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.state.session is not None, "the session")
        assert app.state.session_path == transcript


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "{id}"],
        ["preview", "{id}"],
        ["diff", "{id}", "{id}"],
        ["restore", "{id}", "--list"],
    ],
)
def test_every_command_takes_the_short_id(home, cli_main, argv):
    """Failed on old main: "nor a session id any format knows"."""
    transcript = claude_session(home)
    result = cli_main(*[word.format(id=CLAUDE[:8]) for word in argv])
    assert result.code == 0, result.stderr
    assert "nor a session id" not in result.stderr
    if argv[0] in ("plan", "diff"):
        assert str(transcript) in result.stdout

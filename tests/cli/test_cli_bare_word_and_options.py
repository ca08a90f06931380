"""The bare word and the options of the command line: the bare ``kimi-compact-tui
<session id>`` opens the TUI while a typo of a command is still named; ``restore``
says a session does not exist and names a missing point (with the ones there are)
before asking anything; the TUI refuses a session it cannot open before it starts;
an option given twice is an error, not a silent last-one-wins."""

from __future__ import annotations

import pytest

from kimi_compact_tui.tui.app import ReviewApp
from tests.factories import conversation, write_session
from tests.factories.kimi_code import conversation as kimi_code_conversation
from tests.formats.test_kimi_code_by_id import make_home
from tests.store.test_restore import apply, make_session


def assert_one_line(result, *needles: str) -> str:
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and "usage:" not in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr
    return result.stderr


@pytest.fixture
def started(monkeypatch) -> list[ReviewApp]:
    """The apps the CLI would run, recorded instead of taking over the terminal."""
    apps: list[ReviewApp] = []

    def record(self: ReviewApp, *args, **kwargs) -> None:
        apps.append(self)

    monkeypatch.setattr(ReviewApp, "run", record)
    return apps


# ------------------------------------------------------------------------------------ the bare word


async def test_the_bare_form_opens_a_kimi_code_session_by_id(
    cli_main, tmp_path, monkeypatch, started
):
    root, folder = make_home(tmp_path, kimi_code_conversation().bytes())
    monkeypatch.setenv("KIMI_CODE_HOME", str(root))
    result = cli_main("session_x1", "--provider", "offline")
    assert result.code == 0, result.stderr
    assert len(started) == 1 and started[0].session_arg == "session_x1"
    # The very app the CLI built opens that session (headless, through a Pilot).
    app = started[0]
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.session is not None and app.state.session.format.name == "kimi-code"
        assert app.state.session_path == folder / "agents" / "main" / "wire.jsonl"


@pytest.mark.parametrize(
    "word, needles",
    [
        ("plna", ["unknown command 'plna'", "did you mean 'plan'"]),
        ("sesion_x1", ["unknown command 'sesion_x1'", "commands:"]),
    ],
)
def test_a_word_that_resolves_to_nothing_is_still_an_unknown_command(
    cli_main, tmp_path, monkeypatch, started, word, needles
):
    root, _folder = make_home(tmp_path, kimi_code_conversation().bytes())
    monkeypatch.setenv("KIMI_CODE_HOME", str(root))
    assert_one_line(cli_main(word), *needles)
    assert started == []


@pytest.mark.parametrize("what", ["missing", "empty-folder", "not-a-session"])
def test_the_tui_refuses_a_session_it_cannot_open_before_starting(
    cli_main, tmp_path, started, what
):
    if what == "missing":
        session = tmp_path / "nonexist.json"
    elif what == "empty-folder":
        session = tmp_path / "folder"
        session.mkdir()
    else:  # no format recognises it from its first bytes
        session = tmp_path / "notes.txt"
        session.write_text("shopping: eggs, milk\n", encoding="utf-8")
    for argv in ([session], ["tui", session]):
        assert_one_line(cli_main(*argv), str(session))
    assert started == []


# --------------------------------------------------------------------- restore of what is not there


@pytest.mark.parametrize("extra", [["--list"], ["--list", "--json"], ["--yes"], []])
def test_restore_of_a_session_that_does_not_exist_is_an_error(cli_main, tmp_path, extra):
    missing = tmp_path / "nonexist"
    assert_one_line(cli_main("restore", missing, *extra), str(missing), "no such")
    assert sorted(tmp_path.iterdir()) == []


def test_restore_list_of_a_session_with_no_points_is_not_an_error(cli_main, tmp_path):
    path = make_session(tmp_path / "sess")
    result = cli_main("restore", path, "--list")
    assert result.code == 0, result.stderr
    assert "no restore points" in result.stdout


def test_restore_points_of_a_deleted_session_file_are_still_listed(cli_main, tmp_path):
    """The file may be gone (deleted by mistake): its restore points are what
    brings it back, so they are listed, not refused."""
    path = tmp_path / "chat.json"
    write_session(tmp_path, "openai-json", conversation(6, system=None), "chat")
    apply(path)
    path.unlink()
    result = cli_main("restore", path, "--list")
    assert result.code == 0, result.stderr
    assert "chat.json.bak-" in result.stdout


@pytest.mark.parametrize("yes", [False, True], ids=["asking", "yes"])
def test_restore_of_a_point_that_does_not_exist_names_it_and_the_ones_there_are(
    cli_main, tmp_path, yes
):
    path = make_session(tmp_path / "sess")
    apply(path)
    before = {p.name: p.read_bytes() for p in path.parent.iterdir()}
    extra = ["--yes"] if yes else []
    line = assert_one_line(
        cli_main("restore", path, "--point", "context_42.jsonl", *extra),
        "context_42.jsonl",
        "not a restore point",
        "context_1.jsonl",
    )
    assert "confirmation" not in line
    assert {p.name: p.read_bytes() for p in path.parent.iterdir()} == before


# ----------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    "argv, option",
    [
        (["plan", "{s}", "--up-to", "3", "--up-to", "4"], "--up-to"),
        (["compact", "{s}", "-o", "{d}/a.json", "--output", "{d}/b.json"], "--output"),
        (["--config", "{d}/c.yaml", "plan", "{s}", "--config", "{d}/c.yaml"], "--config"),
        (["preview", "{s}", "--instructions", "a", "--instructions", "b"], "--instructions"),
    ],
)
def test_an_option_given_twice_is_an_error(cli_main, tmp_path, argv, option):
    session = write_session(tmp_path, "openai-json", conversation(8))
    (tmp_path / "c.yaml").write_text("provider: {kind: offline}\n", encoding="utf-8")
    words = [a.replace("{s}", str(session)).replace("{d}", str(tmp_path)) for a in argv]
    before = sorted(p.name for p in tmp_path.iterdir())
    assert_one_line(cli_main(*words), option, "twice")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


class _Terminal:
    """A stdin that is a terminal answering ``answer``."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        return self.answer


def test_a_declined_restore_changes_nothing_and_exits_0(cli_main, tmp_path, monkeypatch):
    """Exit statuses are 0, 2, 3, 4 and 130 (README): saying no is not a failure,
    as with `compact --in-place`."""
    path = make_session(tmp_path / "sess")
    apply(path)
    before = {p.name: p.read_bytes() for p in path.parent.iterdir()}
    monkeypatch.setattr("sys.stdin", _Terminal("n\n"))
    result = cli_main("restore", path)
    assert result.code == 0, result.stderr
    assert "Not restored." in result.stderr
    assert {p.name: p.read_bytes() for p in path.parent.iterdir()} == before


@pytest.mark.parametrize(
    "argv, name",
    [
        (["plan", ""], "SESSION"),
        ([""], "SESSION"),
        (["compact", "{s}", "--output", ""], "--output"),
        (["plan", "{s}", "--config", ""], "--config"),
        (["preview", "{s}", "--prompt-file", ""], "--prompt-file"),
        (["retention", "{s}", "--summary", ""], "--summary"),
        (["diff", "{s}", ""], "B"),
        (["restore", "", "--list"], "SESSION"),
    ],
)
def test_an_empty_file_name_is_an_error_not_the_current_folder_or_nothing(
    cli_main, tmp_path, started, argv, name
):
    """``--output ""`` used to write nothing and say "no --output given",
    ``--prompt-file ""`` used the configured prompt, ``plan ""`` read the
    current folder."""
    session = write_session(tmp_path, "openai-json", conversation(8))
    before = sorted(p.name for p in tmp_path.iterdir())
    result = cli_main(*[a.replace("{s}", str(session)) for a in argv])
    assert_one_line(result, name, "empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == before and started == []


def test_ctrl_c_before_the_stream_starts_is_cancelled_cleanly(cli_main, tmp_path, monkeypatch):
    """A Ctrl+C in the instant between the announcement and the stream's start:
    exit 130, one line, nothing written, and no Python warning about a
    coroutine never awaited."""
    import asyncio
    import gc
    import warnings

    session = write_session(tmp_path, "openai-json", conversation(8))
    out = tmp_path / "out.json"

    def interrupted(main, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(asyncio, "run", interrupted)  # (compact.run loads asyncio when it runs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = cli_main("compact", session, "--output", out)
        gc.collect()
    assert result.code == 130, result.stderr
    assert result.error_lines == [] and "cancelled" in result.stderr
    assert not out.exists()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []

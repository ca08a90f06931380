"""A session the TUI cannot open is one line and exit 2 before the TUI starts
however it is named; a good one is loaded once, before
the TUI starts, and handed to the app."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from kimi_compact_tui import samples
from kimi_compact_tui.cli import build_parser, normalise_argv
from kimi_compact_tui.commands.tui import AppOptions, build_app, open_session_first
from tests.factories.cli import run_cli
from tests.factories.plain import write_openai_jsonl
from tests.tui_support import TMUX, Terminal, wait_until

REPO = Path(__file__).resolve().parents[2]
FIRST = b'{"role":"user","content":"hello"}\n'
BAD = {
    "bad line 2": (FIRST + b"{not json\n", ":2: invalid JSON"),
    "binary after line 1": (FIRST + b"\x00\x01\x02\xff binary\n", ":2: contains a NUL byte"),
}


def bad_file(tmp_path: Path, kind: str) -> tuple[Path, str]:
    data, says = BAD[kind]
    path = tmp_path / "chat.jsonl"
    path.write_bytes(data)
    return path, says


@pytest.mark.parametrize("kind", sorted(BAD))
@pytest.mark.parametrize("form", ["tui PATH", "PATH"])
def test_a_bad_session_is_one_line_before_the_tui(tmp_path, kind, form):
    """Failed on old main: the TUI started (a dialog over the picker); here the
    run then times out instead of exiting 2."""
    path, says = bad_file(tmp_path, kind)
    argv = [str(path)] if form == "PATH" else ["tui", str(path)]
    result = run_cli(*argv, timeout=30)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.split("\n") if line]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"kimi-compact-tui: error: {path}{says}")
    assert result.stdout == ""  # nothing drawn: the TUI never started


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install -y tmux)")
def test_a_bad_session_in_a_real_terminal(tmp_path):
    """As a person sees it: the error line and the shell again, no TUI."""
    path, says = bad_file(tmp_path, "bad line 2")
    term = Terminal(80, 24)
    cmd = shlex.join([sys.executable, "-m", "kimi_compact_tui", str(path)])
    term.start(f"cd {shlex.quote(str(REPO))} && {cmd}; echo EXIT=$?; sleep 60")
    try:
        screen = term.wait_for(lambda s: "EXIT=" in s, "the command to exit", timeout=30)
    finally:
        term.close()
    assert "EXIT=2" in screen
    assert says in screen.replace("\n", "")
    assert "Cannot open the session" not in screen


def app_for(*argv: str):
    args = build_parser().parse_args(normalise_argv(list(argv), build_parser()))
    app = build_app(AppOptions.from_args(args))
    open_session_first(app, args.session, args.up_to)
    return app


async def test_a_good_session_is_loaded_once_before_the_tui(tmp_path):
    """The app shows the session loaded before it started: the file is gone
    by then, so a second load would fail."""
    path = write_openai_jsonl(
        tmp_path / "chat.jsonl",
        [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}],
    )
    app = app_for("tui", str(path), "--provider", "offline")
    assert app.preloaded is not None
    path.unlink()
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: app.state.session is not None, "the session")
        assert app.preloaded is None
        assert app.last_error is None
        assert len(app.state.session.messages) == 2


async def test_a_sample_by_name_opens_a_copy(tmp_path):
    """``sample:NAME`` in the TUI is the sample's copy, said so; the sample
    itself is never what is loaded (a write there would change the sample)."""
    name = "kimi-debugging-session"
    app = app_for(f"sample:{name}", "--provider", "offline")
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: app.state.session is not None, "the session")
        loaded = app.state.session_path
        assert loaded is not None and not samples.is_sample(loaded)
        assert samples.copied_sample(loaded) == name

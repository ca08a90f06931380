"""``sample:NAME``, the picker's own name for a bundled sample, names it
wherever a session is named: the CLI's commands, the bare
word, the picker's path box; also from an installed (non-editable) copy of
the package, whose samples are its bundled ones."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from textual.widgets import Input

from kimi_compact_tui import samples
from kimi_compact_tui.cli import build_parser, normalise_argv
from kimi_compact_tui.formats.registry import SessionNameError, find_by_id
from kimi_compact_tui.tui.app import create_app
from tests.factories.cli import run_cli
from tests.tui_support import settle, wait_until

REPO = Path(__file__).resolve().parents[2]
NAMES = sorted(p.name for p in (REPO / "sample_sessions").iterdir())


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", NAMES)
def test_plan_takes_a_sample_by_name(cli_main, name):
    """Failed on old main: "sample:NAME: no such file or folder"."""
    result = cli_main("plan", f"sample:{name}", "--json")
    assert result.code == 0, result.stderr
    assert name in result.stdout
    stem = Path(name).stem  # the extension may be left out
    assert find_by_id(f"sample:{stem}") == find_by_id(f"sample:{name}")
    # Also with a space after the colon (as the picker's rows once wrote it).
    assert find_by_id(f"sample: {name}") == find_by_id(f"sample:{name}")


def test_an_unknown_sample_is_one_line_naming_the_samples(cli_main):
    for argv in (["plan", "sample:nope"], ["sample:nope"], ["compact", "sample:nope"]):
        result = cli_main(*argv)
        assert result.code == 2, argv
        assert len(result.error_lines) == 1, result.stderr
        line = result.error_lines[0]
        assert "sample:nope: no such sample" in line
        assert all(f"sample:{name}" in line for name in NAMES)
    with pytest.raises(SessionNameError):
        find_by_id("sample:")


def test_the_bare_word_is_the_tui_on_the_sample():
    """Failed on old main: "unknown command 'sample:…'"."""
    word = "sample:kimi-debugging-session"  # no dot: not taken for a path either
    assert normalise_argv([word], build_parser()) == ["tui", word]


async def test_the_pickers_path_box_opens_a_copy_of_a_named_sample():
    """Failed on old main: the path box said there is no such file."""
    sample = REPO / "sample_sessions" / "kimi-debugging-session"
    before = tree_bytes(sample)
    app = create_app(None, provider="offline")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        picker = app.screen
        await wait_until(pilot, lambda: not picker.scanning, "the picker's list")
        box = picker.query_one("#picker-path", Input)
        box.focus()
        box.value = "sample:kimi-debugging-session"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.state.session is not None, "the sample to load")
        live = app.state.session_path
        assert live is not None and not samples.is_sample(live)
        assert samples.copied_sample(live) == "kimi-debugging-session"
        assert app.last_error is None
    assert tree_bytes(sample) == before


async def test_the_pickers_path_box_says_which_samples_there_are():
    app = create_app(None, provider="offline")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        picker = app.screen
        await wait_until(pilot, lambda: not picker.scanning, "the picker's list")
        box = picker.query_one("#picker-path", Input)
        box.focus()
        box.value = "sample:nope"
        await pilot.press("enter")
        note = picker.query_one("#picker-note")
        await wait_until(pilot, lambda: "no such sample" in str(note.render()), "the note")
        assert app.screen is picker  # still picking


def test_an_installed_copy_names_its_bundled_samples(tmp_path):
    """The package laid out as a wheel installs it (the samples and prompts
    under ``_bundled``, no checkout beside it), run from another folder."""
    site = tmp_path / "site"
    package = site / "kimi_compact_tui"
    shutil.copytree(
        REPO / "kimi_compact_tui", package, ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(REPO / "sample_sessions", package / "_bundled" / "sample_sessions")
    shutil.copytree(REPO / "prompts", package / "_bundled" / "prompts")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PYTHONPATH": str(site), "PYTHONSAFEPATH": "1"}
    result = run_cli("plan", "sample:kimi-debugging-session", cwd=elsewhere, env=env)
    assert result.returncode == 0, result.stderr
    bundled = package / "_bundled" / "sample_sessions" / "kimi-debugging-session"
    assert str(bundled) in result.stdout  # this copy's sample, not the checkout's
    assert os.path.isdir(bundled)

"""What the screens say, through the real app: one run has one set of figures
everywhere, the editor says what it did with the missing items, cut text ends
in an ellipsis and ``?`` lists every key of every screen.

Helpers are local to this file except ``wait_until``, ``settle`` and
``press_and_settle`` (``tests/tui_support.py``);
screens are looked up by class name, so these tests also run,
and fail, on the code from before the fixes.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.screen import Screen

import kimi_compact_tui.tui.screens as screens_package
import kimi_compact_tui.tui.widgets as widgets_package
from kimi_compact_tui.tui.app import create_app
from tests.factories.messages import SUMMARY
from tests.factories.plain import write_kimi_session
from tests.loopback_server import openai_sse
from tests.tui_support import compact, press_and_settle, settle

SIZE = (120, 40)
REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_sessions" / "kimi-debugging-session"
REPORTED = 50  # the provider's completion_tokens: not what the text would be estimated at
TIME = re.compile(r"\b\d[\d,]*\.\d+ s\b")
RATE = re.compile(r"~?\d[\d,]* tokens/s")


def top(app) -> str:
    return type(app.screen).__name__


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


def sample_copy(tmp_path: Path) -> Path:
    target = tmp_path / "sample" / SAMPLE.name
    shutil.copytree(SAMPLE, target)
    return target


def candidate_rows(app) -> list[str]:
    listing = app.screen.query_one("#candidates-list")
    return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


# --- one run, one set of figures ----------------------------------------------------


async def test_a_run_with_reported_tokens_shows_that_figure_and_time_everywhere(tmp_path, loopback):
    chunks = [SUMMARY[i : i + 40] for i in range(0, len(SUMMARY), 40)]
    usage = {"prompt_tokens": 400, "completion_tokens": REPORTED, "total_tokens": 450}
    loopback.script([openai_sse(chunks, usage=usage)])
    path = write_kimi_session(tmp_path / "s")
    app = create_app(path, provider="openai", model="test-model", base_url=loopback.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        assert app.screen.result.status == "complete", app.screen.result.error
        status = text_of(app.screen, "#stream-status")
        outcome = text_of(app.screen, "#stream-outcome")
        assert f"{REPORTED} tokens" in status and f"~{REPORTED}" not in status, status
        assert f"{REPORTED} tokens" in outcome, outcome
        assert "~" not in status.split(f"{REPORTED} tokens")[0].split("·")[-1]
        times, rates = TIME.findall(status), RATE.findall(status)
        assert len(times) == 1 and len(rates) == 1, status
        await press_and_settle(pilot, "escape")
        await press_and_settle(pilot, "C")
        assert top(app) == "CandidatesScreen"
        (row,) = candidate_rows(app)
        assert f"{REPORTED} tokens" in row, row
        assert TIME.findall(row) == times, (row, status)  # the run's own time, shown alike
        assert RATE.findall(row) == rates, (row, status)


async def test_an_offline_run_shows_one_estimate_everywhere(tmp_path):
    app = create_app(write_kimi_session(tmp_path / "s"), provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        status = text_of(app.screen, "#stream-status")
        outcome = text_of(app.screen, "#stream-outcome")
        figures = re.findall(r"~\d[\d,]* tokens(?!/)", status)
        assert len(figures) == 1, status
        assert figures[0] in outcome, (status, outcome)
        await press_and_settle(pilot, "escape")
        await press_and_settle(pilot, "C")
        (row,) = candidate_rows(app)
        assert figures[0] in row, (row, status)


# --- the editor, opened with the missing items ---------------------------------------


async def test_missing_items_in_the_editor_are_not_called_control_characters(tmp_path):
    from tests.retention.test_compact_retention import figures_session

    # more figures than the offline summary lists: it has missing items
    app = create_app(figures_session(tmp_path), provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        summary = app.state.summary
        assert "\x1b" not in summary
        await press_and_settle(pilot, "e")  # the retention pane's missing items → the editor
        assert top(app) == "EditSummaryScreen"
        head = text_of(app.screen, "#edit-head")
        assert "control characters" not in head, head
        assert "missing" in head, head  # it says what was appended, and where
        text = app.screen.query_one("#summary-editor").text
        assert text.startswith(summary) and len(text) > len(summary)


async def test_the_editor_still_names_control_characters_it_shows_as_symbols(tmp_path, loopback):
    text = SUMMARY.replace("Python 3.11", "Python \x1b[31m3.11")
    loopback.script([openai_sse([text], usage={"completion_tokens": 90})])
    path = write_kimi_session(tmp_path / "s")
    app = create_app(path, provider="openai", model="test-model", base_url=loopback.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        await press_and_settle(pilot, "escape")
        await press_and_settle(pilot, "e")
        assert top(app) == "EditSummaryScreen"
        assert "control characters" in text_of(app.screen, "#edit-head")


# --- cut text ends in an ellipsis ------------------------------------------------------

INSTRUCTIONS = [
    "Keep the port numbers and the failing test ids 🚀",  # fits: shown whole, emoji too
    "Keep every port number, every failing test id and every command that was run, "
    "word for word, and say which file each one came from 🙂",  # too long: cut with …
]


@pytest.mark.parametrize("instructions", INSTRUCTIONS, ids=["fits", "too-long"])
async def test_candidate_instructions_are_whole_or_cut_with_an_ellipsis(tmp_path, instructions):
    app = create_app(write_kimi_session(tmp_path / "s"), provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.state.set_custom_instruction(instructions)
        app.refresh_view()
        await compact(pilot)
        await press_and_settle(pilot, "escape")
        await press_and_settle(pilot, "C")
        (row,) = candidate_rows(app)
        shown = row.split("“", 1)[1].rsplit("”", 1)[0]
        if cell_len(instructions) <= 60:
            assert shown == instructions, row
        else:
            assert shown.endswith("…") and instructions.startswith(shown[:-1]), row


ROW = re.compile(r"^\s*\d+ [-+ ] (\S+) +(.*?) *(\d[\d.]*k?)$")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_diff_previews_are_whole_or_end_in_an_ellipsis(tmp_path, size):
    from kimi_compact_tui.tui.widgets.diff_view import describe_message

    app = create_app(sample_copy(tmp_path), provider="offline")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await compact(pilot)
        await press_and_settle(pilot, "escape")
        await press_and_settle(pilot, "d")
        assert top(app) == "DiffScreen"
        checked = 0
        for view in app.screen.query("DiffView"):
            width = view.scrollable_content_region.width
            for index, row in enumerate(view.rows):
                line = str(view.row_text(index, width)).rstrip()
                m = ROW.match(line)
                assert m is not None, line
                shown, full = m.group(2), describe_message(row.message)
                assert shown == full or (shown.endswith("…") and len(shown) > 0), (line, full)
                checked += 1
        assert checked > 20


# --- ? lists every key of every screen -------------------------------------------


def our_classes(package, base) -> list[type]:
    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for _name, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, base) and cls.__module__ == module.__name__:
                found.append(cls)
    return found


#: Key names as a person reads them in the help (lower case).
SPOKEN = {
    "escape": "esc",
    "exclamation_mark": "!",
    "question_mark": "?",
    "slash": "/",
    "plus": "+",
    "minus": "-",
    "pageup": "pgup",
    "pagedown": "pgdn",
    "up": "↑",
    "down": "↓",
}


def spoken(key: str) -> str:
    """One spelling: names in lower case (``PgUp``, ``pgup``), letters as they are (``P``)."""
    return key if len(key) == 1 else key.lower()


def every_key() -> dict[str, set[str]]:
    """Each key of every screen and widget of ours (as the help names it), and who binds it."""
    from textual.widget import Widget

    keys: dict[str, set[str]] = {}
    classes = our_classes(screens_package, Screen) + our_classes(widgets_package, Widget)
    for cls in classes:
        if cls.__name__ == "HelpScreen":
            continue  # the help screen's own keys: escape closes it, as it says
        for klass in cls.__mro__:
            if not klass.__module__.startswith("kimi_compact_tui"):
                continue
            for binding in vars(klass).get("BINDINGS", ()):
                for key in binding.key.split(","):
                    key = key.strip()
                    keys.setdefault(spoken(SPOKEN.get(key, key)), set()).add(cls.__name__)
    return keys


async def test_help_lists_every_key_of_every_screen(tmp_path):
    app = create_app(write_kimi_session(tmp_path / "s"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "question_mark")
        assert top(app) == "HelpScreen"
        table = app.screen.query_one("DataTable")
        listed: set[str] = set()
        for i in range(table.row_count):
            listed.update(spoken(k) for k in str(table.get_row_at(i)[0]).split())
        wanted = every_key()
        assert "!" in wanted  # the write dialog's "write the split history anyway"
        missing = {key: sorted(who) for key, who in wanted.items() if key not in listed}
        assert not missing, f"keys not in the help screen: {missing}"

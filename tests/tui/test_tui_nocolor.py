"""The app under every line filter Textual applies.

Textual runs each rendered line through its filters: ``Monochrome`` under
``NO_COLOR`` (``NoColor`` with an ANSI theme), ``DimFilter`` under
``TEXTUAL_FILTERS=dim`` and ``ANSIToTruecolor`` always. ``Monochrome`` reads
``segment.style.color`` and crashed at start-up on the message list's
unstyled segments. Each test walks the main screen, the flow screens and
the picker with the filters on, and a strict filter records any segment
that carries no style at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rich.segment import Segment
from textual import constants
from textual.app import App
from textual.color import Color
from textual.filter import ANSIToTruecolor, DimFilter, LineFilter, Monochrome, NoColor
from textual.theme import BUILTIN_THEMES

from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.edit import EditSummaryScreen
from kimi_compact_tui.tui.screens.help import HelpScreen
from kimi_compact_tui.tui.screens.instructions import InstructionsScreen
from kimi_compact_tui.tui.screens.model import ModelScreen
from kimi_compact_tui.tui.screens.picker import PickerScreen
from kimi_compact_tui.tui.screens.preview import PreviewScreen
from kimi_compact_tui.tui.screens.search import SearchScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from tests.tui_support import press_and_settle, settle

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_sessions" / "kimi-debugging-session"
SIZE = (80, 24)


class StrictStyles(LineFilter):
    """Passes lines through unchanged and records every segment with no style."""

    def __init__(self) -> None:
        super().__init__()
        self.unstyled: list[str] = []

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        for segment in segments:
            if segment.style is None and not segment.control and segment.text:
                self.unstyled.append(segment.text)
        return segments


def _ansi_theme():
    from rich.terminal_theme import MONOKAI

    return MONOKAI


FILTER_CASES = {
    "monochrome": lambda: [Monochrome()],
    "no-color": lambda: [NoColor()],
    "dim": lambda: [DimFilter()],
    "truecolor": lambda: [ANSIToTruecolor(_ansi_theme())],
    "all": lambda: [ANSIToTruecolor(_ansi_theme()), Monochrome(), DimFilter(), NoColor()],
}


def use_filters(app: App, filters: list[LineFilter]) -> StrictStyles:
    """Render ``app`` through ``filters`` (and the strict check) instead of its own."""
    strict = StrictStyles()
    chain = [strict, *filters]
    app.get_line_filters = lambda: chain  # type: ignore[method-assign]
    return strict


def copy_sample(tmp_path: Path) -> Path:
    assert SAMPLE.is_dir(), f"the bundled sample is missing: {SAMPLE}"
    target = tmp_path / "session"
    shutil.copytree(SAMPLE, target)
    return target


async def walk_session(pilot) -> list[str]:
    """Every screen a first session can open; returns the screens seen, by name.
    Each dialog is left with escape (nothing is written)."""
    app = pilot.app
    seen = []
    await settle(pilot)
    assert app.message_list.message_count > 0
    seen.append(type(app.screen).__name__)
    await pilot.press("j", "j", "end", "home", "b")
    await pilot.pause()
    await press_and_settle(pilot, "c")
    assert isinstance(app.screen, StreamScreen)
    seen.append(type(app.screen).__name__)
    await press_and_settle(pilot, "escape")
    await press_and_settle(pilot, "d")
    assert isinstance(app.screen, DiffScreen)
    seen.append(type(app.screen).__name__)
    await pilot.press("escape")
    await pilot.pause()
    screens = [("question_mark", HelpScreen), ("p", PreviewScreen), ("o", PickerScreen)]
    screens += [("e", EditSummaryScreen), ("i", InstructionsScreen), ("m", ModelScreen)]
    screens += [("slash", SearchScreen), ("w", ConfirmWriteScreen)]
    for key, kind in screens:
        await press_and_settle(pilot, key)
        assert isinstance(app.screen, kind), (key, app.screen)
        seen.append(kind.__name__)
        await press_and_settle(pilot, "escape")
    return seen


@pytest.mark.parametrize("case", sorted(FILTER_CASES))
async def test_session_renders_under_filter(tmp_path, case):
    session = copy_sample(tmp_path)
    app = create_app(session, provider="offline")
    strict = use_filters(app, FILTER_CASES[case]())
    async with app.run_test(size=SIZE) as pilot:
        seen = await walk_session(pilot)
    assert seen[:3] == ["MainScreen", "StreamScreen", "DiffScreen"]
    assert "ConfirmWriteScreen" in seen
    assert strict.unstyled == []
    assert (session / "context.jsonl").read_bytes() == (SAMPLE / "context.jsonl").read_bytes()


async def test_no_color_env_session(tmp_path, monkeypatch):
    """The README's first command with NO_COLOR set: the real filter chain."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = create_app(copy_sample(tmp_path), provider="offline")
    assert app.no_color and any(isinstance(f, Monochrome) for f in app.get_line_filters())
    async with app.run_test(size=SIZE) as pilot:
        await walk_session(pilot)
        assert app.return_code is None  # no crash so far


async def test_no_color_with_ansi_theme_and_dim(tmp_path, monkeypatch):
    """NO_COLOR plus TEXTUAL_FILTERS=dim (Monochrome and DimFilter), then the
    ANSI theme (native ANSI colours, truecolor filter off)."""
    assert "ansi-dark" in BUILTIN_THEMES
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(constants, "FILTERS", "dim")
    app = create_app(copy_sample(tmp_path), provider="offline")
    assert any(isinstance(f, DimFilter) for f in app.get_line_filters())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.theme = "ansi-dark"
        await settle(pilot)
        await walk_session(pilot)


def kimi_share(tmp_path: Path) -> Path:
    """A kimi-cli share folder holding one session of the sample."""
    import hashlib
    import json

    share = tmp_path / "share"
    work = "/home/someone/ledger-service"
    folder = share / "sessions" / hashlib.md5(work.encode()).hexdigest() / "0f0e-uuid"
    folder.mkdir(parents=True)
    for name in ("context.jsonl", "wire.jsonl"):
        shutil.copy(SAMPLE / name, folder / name)
    (share / "kimi.json").write_text(json.dumps({"work_dirs": [{"path": work}]}))
    return share


@pytest.mark.parametrize("case", ["monochrome", "dim", "all"])
async def test_picker_renders_under_filter(tmp_path, monkeypatch, case):
    copy_sample(tmp_path)
    monkeypatch.setenv("KIMI_SHARE_DIR", str(kimi_share(tmp_path)))
    app = create_app(None, provider="offline")
    strict = use_filters(app, FILTER_CASES[case]())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        await pilot.press("down", "up")
        await press_and_settle(pilot, "enter")
        assert not isinstance(app.screen, PickerScreen)
        assert app.message_list.message_count > 0
    assert strict.unstyled == []


async def test_picker_no_color_env(tmp_path, monkeypatch):
    copy_sample(tmp_path)
    monkeypatch.setenv("KIMI_SHARE_DIR", str(kimi_share(tmp_path)))
    monkeypatch.setenv("NO_COLOR", "1")
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        await press_and_settle(pilot, "enter")
        assert app.message_list.message_count > 0


async def test_no_color_regions_differ_on_screen(tmp_path, monkeypatch):
    """Under NO_COLOR each row's first cell shows its region by
    shape (compactable and preserved tail rows differ), and the legend shows the
    same mark before each region's name. Read from the screen's cells."""
    from kimi_compact_tui.compaction.plan import REGION_COMPACT, REGION_TAIL
    from kimi_compact_tui.tui.widgets.legend import LEGEND_LABELS
    from tests.tui_support import screen_cells

    monkeypatch.setenv("NO_COLOR", "1")
    app = create_app(copy_sample(tmp_path), provider="offline")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        ml = app.message_list
        cells = screen_cells(app)
        first = {}  # region -> the first cells of its rows on screen
        for y in range(min(ml.region.height, ml.message_count)):
            row = cells[ml.region.y + y]
            first.setdefault(ml.region_at(y), set()).add(row[ml.region.x])
        assert {REGION_COMPACT, REGION_TAIL} <= set(first), first
        marks = {region: seen.pop() for region, seen in first.items() if len(seen) == 1}
        assert set(marks) == set(first), f"one mark per region: {first}"
        assert len(set(marks.values())) == len(marks), f"regions share a mark: {marks}"
        legend = app.screen.query_one("#legend")
        line = "".join(cells[legend.region.y + legend.region.height - 1])
        for region, mark in marks.items():
            assert f"{mark} {LEGEND_LABELS[region]}" in line, (region, mark, line)

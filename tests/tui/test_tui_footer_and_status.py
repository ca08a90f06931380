"""The layout at 80x24 and 120x40 through the real app: the
footer shows whole keys only (never ``d Di`` or a bare ``/``), the status area
(legend and status line) stays within three lines with the list keeping the
rest, a split warning keeps the model/prompt/provider line, and the retention
pane keeps each figure on its line.

What is checked is what the terminal shows (the composed screen, line by
line). Helpers are local except ``wait_until``, ``settle`` and ``press_and_settle``
(``tests/tui_support.py``).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from textual.widgets._footer import FooterKey

from kimi_compact_tui.tui.app import create_app
from tests.tui_support import compact, press_and_settle, settle

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_sessions" / "kimi-debugging-session"
SIZES = [(80, 24), (120, 40)]


def sample_copy(tmp_path: Path) -> Path:
    target = tmp_path / "copy" / SAMPLE.name
    shutil.copytree(SAMPLE, target)
    return target


def screen_lines(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def assert_whole_keys(app) -> None:
    """The footer line is made of whole ``key description`` labels, nothing cut."""
    line = screen_lines(app)[-1]
    rest = line
    shown = 0
    for key in app.screen.query(FooterKey):
        label = f"{key.key_display} {key.description}".strip()
        if key.region.width == 0:
            continue  # not on screen (left out; ``?`` lists it)
        assert label in rest, f"{label!r} is cut in the footer: {line!r}"
        rest = rest.replace(label, "", 1)
        shown += 1
    assert shown >= 3, line
    assert rest.replace("▏", "").strip() == "", f"a cut key in the footer: {line!r}"


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
async def test_footers_show_whole_keys_before_and_after_a_summary(tmp_path, size):
    app = create_app(sample_copy(tmp_path), provider="offline")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert_whole_keys(app)
        await compact(pilot)
        assert type(app.screen).__name__ == "StreamScreen"
        assert_whole_keys(app)
        await press_and_settle(pilot, "escape")
        assert type(app.screen).__name__ == "MainScreen"
        assert_whole_keys(app)
        await press_and_settle(pilot, "d")
        assert type(app.screen).__name__ == "DiffScreen"
        assert_whole_keys(app)


def status_area(app) -> list[str]:
    """The lines between the message list's bottom edge and the footer."""
    lines = screen_lines(app)
    listing = app.screen.query_one("#main")
    bottom = listing.region.bottom
    return [line for line in lines[bottom:-1] if line.strip() and not set(line) <= {"▔", " "}]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
async def test_the_status_area_keeps_to_three_lines(tmp_path, size):
    app = create_app(sample_copy(tmp_path), provider="offline")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        area = status_area(app)
        assert 2 <= len(area) <= 3, area
        assert any("→" in line and "tokens" in line for line in area), area
        assert any(line.lstrip().startswith("model ") for line in area), area
        assert app.screen.query_one("#main").region.height >= size[1] - 7


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
async def test_a_split_warning_keeps_the_model_line(tmp_path, size):
    app = create_app(sample_copy(tmp_path), provider="offline")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "j", "b")  # up to message 2: its tool call's result is kept
        assert app.state.known_splits
        area = status_area(app)
        assert len(area) <= 3, area
        assert any("split tool exchange" in line for line in area), area
        assert any(line.lstrip().startswith("model ") for line in area), area


async def open_diff_after_a_run(pilot) -> None:
    """An offline run to its end, back to the list, then the diff screen."""
    await settle(pilot)
    await compact(pilot)
    await press_and_settle(pilot, "escape")
    await press_and_settle(pilot, "d")
    assert type(pilot.app.screen).__name__ == "DiffScreen"


FIGURE = re.compile(r"\d+/\d+\s+(\d+%|-)\s")


async def test_the_diffs_retention_pane_keeps_each_figure_on_its_line(tmp_path):
    app = create_app(sample_copy(tmp_path), provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_diff_after_a_run(pilot)
        figures = app.screen.query_one("#retention-figures")
        region = figures.region
        assert region.height > 1
        lines = screen_lines(app)[region.y + 1 : region.bottom]
        rows = [line[region.x : region.right] for line in lines if "/" in line]
        assert rows, region
        for row in rows:
            assert FIGURE.search(row + " "), f"a figure cut from its row: {row!r} in {rows}"


async def test_the_diffs_header_and_column_titles_do_not_wrap_at_80x24(tmp_path):
    """The figures line and each column title stay one line each, cut with an
    ellipsis when they do not fit (they wrapped: "(~588 / saved, 38%)",
    "after the write — 3 / messages")."""
    app = create_app(sample_copy(tmp_path), provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_diff_after_a_run(pilot)
        head = app.screen.query_one("#diff-head")
        assert head.region.height == 2, screen_lines(app)[: head.region.bottom]
        first = screen_lines(app)[head.region.y]
        assert first.lstrip().startswith("before ") and "after " in first, first
        for title in ("#before-title", "#after-title"):
            widget = app.screen.query_one(title)
            assert widget.region.height == 1, (title, screen_lines(app)[: widget.region.bottom])
            assert (
                "messages" in screen_lines(app)[widget.region.y]
                or "…" in screen_lines(app)[widget.region.y]
            )

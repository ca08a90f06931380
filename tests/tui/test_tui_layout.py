"""Layout at real terminal sizes: what reaches the screen.

The screen is read cell by cell (a wide character fills two cells), so a
row cut by the scrollbar or pushed out by CJK text shows as a missing or
cut token figure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.geometry import Region
from textual.widgets import DataTable

from kimi_compact_tui.model import Message
from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.keys import SCREEN_TABLES
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.help import BASIC_FLOW, HelpScreen
from kimi_compact_tui.tui.widgets.diff_view import DiffRow, DiffView, format_tokens
from tests.factories import write_openai_jsonl
from tests.tui_support import compact, press_and_settle, screen_cells, settle

WIDE_TEXTS = [
    "帮我写一个基于 sqlite 的订单存储模块，要求：建表、插入订单、按客户汇总金额。" * 3,
    "🙂🚀🎉 emoji 🙂🚀🎉 everywhere 🙂🚀🎉 in this message 🙂🚀🎉 and more 🙂🚀🎉" * 2,
    "ｆｕｌｌｗｉｄｔｈ　ｌａｔｉｎ　ｌｅｔｔｅｒｓ　ａｎｄ　日本語のテキストも混ざっています。"
    * 2,
    "plain ascii " * 30,
]


def region_lines(app, region: Region) -> list[str]:
    cells = screen_cells(app)
    return ["".join(cells[y][region.x : region.right]) for y in range(region.y, region.bottom)]


def long_session(path: Path, n: int = 60) -> Path:
    """``n`` messages with token counts in the thousands (a list that scrolls)."""
    messages = [{"role": "system", "content": "You are terse."}]
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"message {i} " + "word " * (900 + 37 * i)})
    return write_openai_jsonl(path, messages)


def wide_session(path: Path) -> Path:
    messages = [{"role": "system", "content": "你是一名资深的 Python 工程师。"}]
    for i, text in enumerate(WIDE_TEXTS * 3):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return write_openai_jsonl(path, messages)


def assert_rows_end_with_tokens(app, first: int, lines: list[str]) -> None:
    tokens = app.state.message_tokens
    assert lines, "no rows on screen"
    for offset, line in enumerate(lines):
        index = first + offset
        if index >= len(tokens):
            break
        assert line.rstrip().endswith(f" {tokens[index]:,}"), (index, line)


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (120, 40)])
async def test_token_column_is_beside_the_scrollbar(tmp_path, size):
    app = create_app(long_session(tmp_path / "long.jsonl"), provider="offline")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        ml = app.message_list
        assert ml.max_scroll_y > 0  # the list scrolls: a vertical scrollbar is shown
        rows = ml.scrollable_content_region
        assert rows.width < ml.region.width
        assert_rows_end_with_tokens(app, 0, region_lines(app, rows))
        await pilot.press("end")
        await pilot.pause()
        first = int(ml.scroll_offset.y)
        assert first > 0
        assert_rows_end_with_tokens(app, first, region_lines(app, rows))


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_cjk_and_emoji_rows_keep_their_token_figure(tmp_path, size):
    app = create_app(wide_session(tmp_path / "wide.jsonl"), provider="offline")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        ml = app.message_list
        lines = region_lines(app, ml.scrollable_content_region)
        assert any(cell_len(line) != len(line) for line in lines)  # wide text is on screen
        assert_rows_end_with_tokens(app, int(ml.scroll_offset.y), lines)
        for index in range(ml.message_count):
            assert cell_len(ml.row_plain(index, 57)) == 57


def test_diff_rows_are_exactly_their_width_in_cells():
    view = DiffView()
    rows = [
        DiffRow("removed", i + 1, Message.make("user", text), 12_345 + i)
        for i, text in enumerate(WIDE_TEXTS)
    ]
    view.set_rows(rows)
    for width in (30, 47, 80):
        for index, row in enumerate(rows):
            text = view.row_text(index, width)
            assert text.cell_len == width, (width, index, text.plain)
            assert text.plain.endswith(" " + format_tokens(row.tokens))


async def test_diff_screen_keeps_token_figures_for_wide_rows(tmp_path):
    app = create_app(wide_session(tmp_path / "wide.jsonl"), provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        await press_and_settle(pilot, "d")
        assert isinstance(app.screen, DiffScreen)
        view = app.screen.query_one("#before", DiffView)
        lines = region_lines(app, view.scrollable_content_region)
        first = int(view.scroll_offset.y)
        shown = list(view.rows[first : first + len(lines)])
        assert shown
        for row, line in zip(shown, lines[: len(shown)], strict=True):
            assert line.rstrip().endswith(" " + format_tokens(row.tokens)), line


async def test_highlighted_row_is_marked_without_colour(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = create_app(long_session(tmp_path / "long.jsonl", 10), provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        ml = app.message_list
        await pilot.press("j", "j", "j")
        await pilot.pause()
        lines = region_lines(app, ml.scrollable_content_region)
        marked = [i for i, line in enumerate(lines) if "▶" in line[:3]]
        assert marked == [3]
        strip = ml.render_line(3)
        assert all(seg.style is not None and seg.style.reverse for seg in strip if seg.text)
        assert not any(seg.style.reverse for seg in ml.render_line(2) if seg.style)


@pytest.mark.parametrize("width", [80, 60])
async def test_footer_keeps_help_and_quit_visible(tmp_path, width):
    app = create_app(long_session(tmp_path / "long.jsonl", 10), provider="offline")
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        footer = "".join(screen_cells(app)[-1])
        assert "? Help" in footer and "q Quit" in footer, footer
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


def help_words(app) -> set[str]:
    return {word for line in screen_cells(app) for word in "".join(line).split()}


@pytest.mark.parametrize("width", [60, 80, 100])
async def test_help_wraps_descriptions_and_starts_with_the_flow(tmp_path, width):
    app = create_app(long_session(tmp_path / "long.jsonl", 10), provider="offline")
    async with app.run_test(size=(width, 60)) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        words = set()
        table = app.screen.query_one(DataTable)
        assert app.focused is table  # the keys scroll the table, which is taller than the screen
        while True:  # every row, page by page, as a person reads it
            words |= help_words(app)
            if table.scroll_y >= table.max_scroll_y:
                break
            await press_and_settle(pilot, "pagedown")
        for description in [k.help for _title, table in SCREEN_TABLES for k in table]:
            missing = [w for w in description.split() if w not in words]
            assert not missing, (description, missing)
        text = "\n".join("".join(line) for line in screen_cells(app))
        # the basic flow comes first, before the key table
        assert text.index(BASIC_FLOW[0][:20]) < text.index("Questions")  # the last table
        assert len(BASIC_FLOW) == 3
        flow = " ".join(BASIC_FLOW)
        for key in ("b ", "c ", "d ", "w ", "u "):
            assert key in flow


async def test_help_flow_fits_three_lines_at_80_columns(tmp_path):
    app = create_app(long_session(tmp_path / "long.jsonl", 10), provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "question_mark")
        lines = ["".join(line) for line in screen_cells(app)]
        for step in BASIC_FLOW:
            assert sum(step in line for line in lines) == 1, step

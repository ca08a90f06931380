"""The session picker through the real app: a session that
cannot be opened (an empty ``context.jsonl``, random bytes) is flagged ``✗``
with the load's reason and no message count; every sample has its count; with
no session loaded the footer shows the picker's keys, not the main screen's.

Helpers are local except ``settle`` (``tests/tui_support.py``);
screens are found by class name so the tests also run, and fail, on the code
from before the fixes.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from kimi_compact_tui.tui.app import create_app
from tests.factories.plain import write_kimi_session
from tests.tui_support import settle

SIZE = (120, 40)
REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_sessions"


def screen_lines(app) -> list[str]:
    """What the terminal shows, line by line (the modal and what is behind it)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def rows(app) -> list[str]:
    listing = app.screen.query_one("#picker-list")
    return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


def row_of(app, title: str) -> str:
    found = [r for r in rows(app) if r.split("\n", 1)[0].endswith(title)]
    assert len(found) == 1, (title, rows(app))
    return found[0]


def messages_in(sample: Path) -> int:
    """The sample's messages, counted from its JSON here (not by the code under test)."""
    if sample.is_dir():
        records = [json.loads(line) for line in (sample / "context.jsonl").read_text().splitlines()]
        return sum(1 for r in records if not r["role"].startswith("_"))
    if sample.suffix == ".jsonl":
        return sum(1 for line in sample.read_text().splitlines() if line.strip())
    value = json.loads(sample.read_text())
    return len(value if isinstance(value, list) else value["messages"])


def kimi_session(share: Path, name: str) -> Path:
    folder = share / "sessions" / "0123abcd" / name
    folder.mkdir(parents=True)
    return folder / "context.jsonl"


async def open_picker(app, pilot) -> None:
    await settle(pilot)
    assert type(app.screen).__name__ == "PickerScreen"
    assert not app.screen.scanning


async def test_sessions_that_cannot_be_opened_are_flagged_with_no_count(tmp_path, monkeypatch):
    share = tmp_path / "share"
    monkeypatch.setenv("KIMI_SHARE_DIR", str(share))
    kimi_session(share, "empty-session").write_bytes(b"")
    noise = bytes(range(256)) * 4 + b"\n" + os.urandom(512) + b"\n"
    kimi_session(share, "noise-session").write_bytes(noise)
    good = kimi_session(share, "good-session")
    write_kimi_session(good.parent)
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await open_picker(app, pilot)
        for name in ("empty-session", "noise-session"):
            row = row_of(app, name)
            assert row.startswith("✗"), row
            assert "cannot open" in row, row
            assert not re.search(r"\d messages?\b", row), row  # no count for what cannot load
        assert "empty" in row_of(app, "empty-session")
        good_rows = [r for r in rows(app) if "good-ses" in r]  # its id, shown after the count
        assert good_rows and all("✗" not in r for r in good_rows), rows(app)


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.iterdir()))
async def test_every_sample_has_its_message_count(sample):
    expected = messages_in(SAMPLES / sample)
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await open_picker(app, pilot)
        (row,) = [r for r in rows(app) if f"sample:{sample}" in r]  # the name the CLI takes
        assert f"{expected:,} message" in row, row
        assert "✗" not in row, row


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_with_no_session_loaded_the_footer_shows_the_pickers_keys(size):
    app = create_app(None, provider="offline")
    async with app.run_test(size=size) as pilot:
        await open_picker(app, pilot)
        footer = screen_lines(app)[-1]
        assert "Cancel" in footer, footer
        for main_key in ("Up to here", "Safe boundary", "Write", "Preview"):
            assert main_key not in footer, footer

"""Leaving a session, through the real app: ``o`` starts the next session clean
and asks before dropping work, every way of quitting asks too, the bundled
samples are never modified, the palette's screenshot lands in a folder that
exists, and kimi-code's undo dialog says what happens.

Every test drives the app with keys (or the command palette) and checks what a
person sees and what is on disk. The helpers are local to this file, except
``wait_until``, ``settle`` and ``press_and_settle`` (``tests/tui_support.py``). The tests look
screens up by class name, so they also run (and fail) on the code from before
the fixes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kimi_compact_tui.tui.app import create_app
from tests.factories.kimi_code import conversation
from tests.factories.plain import write_kimi_session, write_openai_session
from tests.tui_support import compact, press_and_settle, settle, wait_until

SIZE = (120, 40)
REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_sessions" / "kimi-debugging-session"


def top(app) -> str:
    return type(app.screen).__name__


def record_notes(app) -> list[str]:
    notes: list[str] = []
    real = app.notify

    def notify(message, *args, **kwargs):
        notes.append(str(message))
        return real(message, *args, **kwargs)

    app.notify = notify  # type: ignore[method-assign]
    return notes


async def open_other(pilot, path: Path) -> None:
    """o, then type ``path`` into the picker and press enter."""
    await press_and_settle(pilot, "o")
    assert top(pilot.app) == "PickerScreen"
    pilot.app.screen.query_one("#picker-path").value = str(path)
    pilot.app.screen.query_one("#picker-path").focus()
    await press_and_settle(pilot, "enter")


# --- o resets every per-session choice and asks before dropping work ----------------


async def test_o_asks_before_dropping_an_unwritten_summary_and_no_keeps_it(tmp_path):
    first = write_kimi_session(tmp_path / "a")
    other = write_openai_session(tmp_path / "b.json", 8)
    app = create_app(first)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        summary = app.state.summary
        await open_other(pilot, other)
        assert top(app) == "AskScreen", "o dropped an unwritten summary without asking"
        await press_and_settle(pilot, "n")
        assert app.state.session_path == first and app.state.summary == summary
        await open_other(pilot, other)
        assert top(app) == "AskScreen"
        await press_and_settle(pilot, "y")
        assert app.state.session_path == other and app.state.summary is None


async def test_o_asks_before_dropping_an_edited_summary(tmp_path):
    first = write_kimi_session(tmp_path / "a")
    other = write_openai_session(tmp_path / "b.json", 8)
    app = create_app(first)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        await press_and_settle(pilot, "e")
        await press_and_settle(pilot, "end", "x", "ctrl+s")  # an edit, saved but not written
        assert app.state.summary_edited
        await open_other(pilot, other)
        assert top(app) == "AskScreen"
        assert "edit" in str(app.screen.query_one("#ask-body").render())


async def test_o_starts_the_next_session_with_none_of_the_last_ones_choices(tmp_path):
    first = write_kimi_session(tmp_path / "a")
    other = write_openai_session(tmp_path / "b.json", 8)
    app = create_app(first)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        state = app.state
        state.set_custom_instruction("Keep every port number.")
        state.set_compaction_model("kimi-k2-override")
        state.set_prompt_text("An edited prompt for this review only.")
        state.set_boundary(3)
        app.refresh_view()
        await compact(pilot, back=True)  # a candidate of the first session
        await open_other(pilot, other)
        if top(app) == "AskScreen":  # the unwritten summary: yes, drop it
            await press_and_settle(pilot, "y")
        assert state.session_path == other
        assert state.custom_instruction == ""
        assert state.compaction_model is None
        assert state.prompt.source != "edited"
        assert state.up_to is None
        assert state.summary is None and state.stream_result is None
        notes = record_notes(app)
        await press_and_settle(
            pilot, "C"
        )  # no candidate: the last session's runs are not this one's
        assert top(app) == "MainScreen", "C listed the previous session's candidates"
        assert any("no candidates" in n for n in notes)


# --- every way of quitting asks before dropping a summary ---------------------------


@pytest.mark.parametrize("keys", [("q",), ("ctrl+q",)], ids=["q", "ctrl+q"])
async def test_quitting_with_an_unwritten_summary_asks(tmp_path, keys):
    app = create_app(write_kimi_session(tmp_path / "a"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        await press_and_settle(pilot, *keys)
        assert top(app) == "AskScreen", f"{keys} quit with an unwritten summary"
        assert "not written" in str(app.screen.query_one("#ask-body").render())
        await press_and_settle(pilot, "n")
        assert top(app) == "MainScreen" and app.state.summary is not None
        await press_and_settle(pilot, *keys)
        await press_and_settle(pilot, "y")
    assert app.return_code == 0


async def test_the_palettes_quit_asks_too(tmp_path):
    app = create_app(write_kimi_session(tmp_path / "a"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        await press_and_settle(pilot, "ctrl+p")
        await pilot.press(*"quit")
        hits = app.screen.query_one("CommandList")
        await wait_until(pilot, lambda: hits.option_count > 0, "the palette's hits")
        first = str(hits.get_option_at_index(0).prompt)
        assert first.startswith("Quit (asks first"), first  # the one Quit: the review's own
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: top(app) != "CommandPalette" or app.return_code is not None,
            "the palette to close",
        )
        await settle(pilot)
        assert app.return_code is None, "the palette's Quit quit with an unwritten summary"
        assert top(app) == "AskScreen"


async def test_quitting_with_nothing_unwritten_does_not_ask(tmp_path):
    app = create_app(write_kimi_session(tmp_path / "a"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "q")
    assert app.return_code == 0


# --- a bundled sample is opened as a copy --------------------------------------------


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def sample_guard():
    """The repository's sample as it is; put back whatever a failing run changed."""
    before = tree_bytes(SAMPLE)
    yield before
    for name in set(tree_bytes(SAMPLE)) - set(before):
        (SAMPLE / name).unlink()
    for name, data in before.items():
        if (SAMPLE / name).read_bytes() != data:
            (SAMPLE / name).write_bytes(data)


async def test_a_bundled_sample_opens_as_a_copy_and_a_write_never_touches_it(
    tmp_path, sample_guard
):
    app = create_app(SAMPLE, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        live = app.state.session_path
        assert (
            live is not None and SAMPLE not in live.parents
        ), f"the sample opened in place: {live}"
        assert Path(os.environ["XDG_STATE_HOME"]) in live.parents  # the scratch folder
        assert "copy" in app.sub_title and "sample" in app.sub_title
        await compact(pilot, back=True)
        await press_and_settle(pilot, "w")
        assert top(app) == "ConfirmWriteScreen"
        await press_and_settle(pilot, "y")
        assert live.with_name("context_1.jsonl").exists()  # the copy was rotated
    assert tree_bytes(SAMPLE) == sample_guard  # the sample: same files, same bytes


async def test_the_pickers_sample_entries_open_as_copies(tmp_path, sample_guard):
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert top(app) == "PickerScreen"
        picker = app.screen
        await wait_until(pilot, lambda: not picker.scanning, "the picker's list")
        names = [info.path.name for info in picker.entries]
        index = names.index(SAMPLE.name)
        listing = picker.query_one("#picker-list")
        listing.highlighted = index
        listing.focus()
        await press_and_settle(pilot, "enter")
        await wait_until(pilot, lambda: app.state.session is not None, "the sample to load")
        live = app.state.session_path
        assert SAMPLE not in live.parents, f"the picker's sample opened in place: {live}"
        assert "copy" in app.sub_title
    assert tree_bytes(SAMPLE) == sample_guard


# --- the palette's screenshot is saved where it says -------------------------------


async def test_the_palettes_screenshot_is_saved_and_says_where(tmp_path):
    assert not (Path.home() / "Downloads").exists()  # as on a fresh machine
    app = create_app(write_kimi_session(tmp_path / "a"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notes = record_notes(app)
        await press_and_settle(pilot, "ctrl+p")
        await press_and_settle(pilot, *"screenshot")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("creenshot" in n for n in notes), "the notification")
        said = " ".join(n for n in notes if "creenshot" in n)
        assert "Failed" not in said, said
        saved = [p for p in Path(os.environ["XDG_STATE_HOME"]).rglob("*.svg")]
        assert len(saved) == 1, said
        assert str(saved[0].parent) in said  # the notification names the folder
        assert saved[0].read_text(encoding="utf-8").startswith("<svg")


# --- kimi-code's undo dialog ------------------------------------------------------


async def test_kimi_code_undo_dialog_says_the_compaction_is_cut_off(tmp_path):
    wire = tmp_path / "kc" / "agents" / "main" / "wire.jsonl"
    wire.parent.mkdir(parents=True)
    wire.write_bytes(conversation().bytes())
    original = wire.read_bytes()
    app = create_app(wire, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        await press_and_settle(pilot, "w")
        await press_and_settle(pilot, "y")
        assert len(wire.read_bytes()) > len(original)
        await press_and_settle(pilot, "u")
        assert top(app) == "RestoreConfirmScreen"
        body = str(app.screen.query_one("#restore-body").render())
        assert "kept as" not in body, body  # nothing is kept: the records are cut off
        assert "cut off" in body and f"{len(original):,} bytes" in body
        await press_and_settle(pilot, "y")
    assert wire.read_bytes() == original

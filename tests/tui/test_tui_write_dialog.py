"""The write dialog's warnings and the way back after a refused write: a
compaction that makes the session larger, a file changed on disk since it was
loaded, the reload key ``R`` and the reload a refusal offers.
Also: every screen's keys come from the key tables."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

from textual.dom import DOMNode
from textual.widgets import Button, Static

import kimi_compact_tui.tui as tui_package
from kimi_compact_tui.providers import StreamResult
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.confirm import AskScreen, ConfirmWriteScreen
from kimi_compact_tui.tui.screens.error import ErrorDialog
from tests.factories import regions_messages, write_kimi, write_openai_json
from tests.tui_support import FlowHost, compact, make_state, settle, wait_until

SIZE = (120, 40)


def dialog_text(screen: ConfirmWriteScreen) -> str:
    body = str(screen.query_one("#confirm-body", Static).render())
    return body + "\n" + str(screen.query_one("#confirm-disk", Static).render())


async def confirm_text(state) -> str:
    screen = ConfirmWriteScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: screen.disk_warning is not None, "the disk check")
        return dialog_text(screen)


# ----------------------------------------------------------------------------- a session that grows


async def test_the_write_dialog_warns_with_both_figures_when_the_session_grows(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    state = make_state(path)
    long = "A summary far longer than what it replaces. " * 400
    state.set_result(StreamResult(status="complete", summary=long))
    draft = state.draft()
    assert draft is not None and draft.grows
    text = await confirm_text(state)
    before, after = draft.preparation.tokens_before, draft.tokens_after
    assert "larger after compaction" in text
    assert f"~{before:,} → ~{after:,} tokens" in text


async def test_no_growth_warning_when_the_session_shrinks(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    state = make_state(path)
    state.set_result(StreamResult(status="complete", summary="short"))
    assert not state.draft().grows
    assert "larger after compaction" not in await confirm_text(state)


# --------------------------------------------------------------- a file changed on disk, the reload


def append_turn(path: Path) -> None:
    with path.open("a", encoding="utf-8") as fh:  # the agent wrote a turn meanwhile
        fh.write('{"role":"user","content":"one more"}\n')


async def test_the_write_dialog_says_the_file_changed_on_disk_before_y(tmp_path):
    path = write_kimi(tmp_path / "sess", regions_messages()[2:], system_prompt="S", usage=50)
    app = create_app(path, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await compact(pilot, back=True)
        await pilot.press("w")
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, ConfirmWriteScreen) and app.screen, "the dialog"
        )
        await wait_until(pilot, lambda: screen.disk_warning is not None, "the disk check")
        assert screen.disk_warning == ""
        assert "unchanged since it was loaded" in dialog_text(screen)
        await pilot.press("n")
        await settle(pilot)
        append_turn(path)
        await pilot.press("w")
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, ConfirmWriteScreen) and app.screen, "the dialog"
        )
        await wait_until(pilot, lambda: screen.disk_warning is not None, "the disk check")
        text = dialog_text(screen)
        assert "changed on disk since it was loaded" in text
        assert "R to reload" in text
        await pilot.press("n")
        await settle(pilot)


def rewrite_and_append(path: Path, messages: list[dict]) -> None:
    """Another program rewrote an earlier message and added one: not only an
    append, so the summary made on the loaded messages no longer holds (a
    change that only appends is offered on the grown session instead:
    tests/tui/test_tui_write_grown.py)."""
    changed = [dict(m) for m in messages]
    changed[0]["content"] = "An earlier request, rewritten."
    changed.append({"role": "user", "content": "one more"})
    write_kimi(path.parent, changed, system_prompt="S", usage=50)


async def test_a_refused_write_offers_the_reload_and_r_reloads(tmp_path):
    messages = regions_messages()[2:]
    path = write_kimi(tmp_path / "sess", messages, system_prompt="S", usage=50)
    app = create_app(path, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await compact(pilot, back=True)
        count = app.message_list.message_count
        rewrite_and_append(path, messages)
        await pilot.press("w")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, ErrorDialog)
        assert app.screen.query("#error-reload"), "the refusal offers the reload"
        assert "changed on disk" in app.last_error
        await pilot.press("R")
        await settle(pilot)
        # The unwritten summary is not dropped without asking.
        assert isinstance(app.screen, AskScreen)
        await pilot.press("y")
        await settle(pilot)
        assert app.message_list.message_count == count + 1  # the agent's turn is read
        assert app.state.summary is None
        await compact(pilot, back=True)  # and now the write goes through
        await pilot.press("w")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert not isinstance(app.screen, ErrorDialog), app.last_error
        assert path.with_name("context_1.jsonl").exists()


async def test_an_error_unrelated_to_the_file_offers_no_reload(tmp_path):
    app = FlowHost(ErrorDialog("something else"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not app.screen.query("#error-reload")
        await pilot.press("R")
        await pilot.pause()
        assert isinstance(app.screen, ErrorDialog)  # R does nothing here
        assert [b.id for b in app.screen.query(Button)] == ["error-ok"]


async def test_r_reloads_the_session_keeping_the_choices(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "down", "b")
        await settle(pilot)
        assert app.state.up_to == 4
        app.state.set_custom_instruction("keep the file names")
        generation = app.state.generation
        await pilot.press("R")  # nothing unwritten: no question
        await settle(pilot)
        assert not isinstance(app.screen, AskScreen)
        assert app.state.generation == generation + 1
        assert app.state.up_to == 4
        assert app.state.custom_instruction == "keep the file names"
        await compact(pilot, back=True)
        await pilot.press("R")
        await settle(pilot)
        assert isinstance(app.screen, AskScreen)
        await pilot.press("n")  # keep the summary
        await settle(pilot)
        assert app.state.summary is not None
        assert app.state.generation == generation + 1


# ----------------------------------------------------------------------------------- the key tables


def test_every_binding_in_the_tui_comes_from_a_key_table():
    tables = [getattr(keys, name) for name in dir(keys) if name.endswith("_KEYS")]
    declared = {(k.key, k.action) for table in tables for k in table if k.action}
    found = []
    for module_info in pkgutil.walk_packages(tui_package.__path__, tui_package.__name__ + "."):
        module = importlib.import_module(module_info.name)
        for _name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not issubclass(cls, DOMNode):
                continue
            for binding in cls.__dict__.get("BINDINGS", []):
                found.append(cls.__name__)
                key, action = binding.key, binding.action
                assert (key, action) in declared, f"{cls.__name__}: {key} → {action} not in keys.py"
    assert {"MainScreen", "ModelScreen", "SearchScreen", "HelpScreen", "ErrorDialog"} <= set(found)
    assert "MessageList" in found
    # The retention pane's keys are its host screens' (they act without its focus).
    assert "RetentionPane" not in found and {"StreamScreen", "DiffScreen"} <= set(found)

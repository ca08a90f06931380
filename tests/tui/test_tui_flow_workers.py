"""The slow parts of a compaction run off the UI's event loop,
workers hand their results to the UI thread, and the app's default screen is
the main screen."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from kimi_compact_tui.compaction import request as request_module
from kimi_compact_tui.providers import StreamResult
from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.stream import StreamScreen
from tests.factories import SUMMARY, write_kimi_session
from tests.tui_support import WAIT, FlowHost, make_state, wait_until

SIZE = (120, 40)


async def test_a_blocking_summary_does_not_block_the_event_loop(tmp_path: Path) -> None:
    """The offline summary is synchronous CPU work inside the provider
    coroutine: the screen must stay live while it runs."""
    gate = threading.Event()

    async def blocking(cfg, body, on_event, cancel):
        # Blocks whatever loop runs it, like offline_summary(); the deadline only
        # ends a hang (a blocked UI loop never sets the gate).
        opened = gate.wait(WAIT)
        text = SUMMARY if opened else "the UI loop was blocked"
        return StreamResult(status="complete", summary=text)

    state = make_state(write_kimi_session(tmp_path / "s"))
    screen = StreamScreen(state, stream_fn=blocking)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: screen.running, "the run to start")
        gate.set()  # reached only if the UI's loop is free while the summary "runs"
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.result is not None and screen.result.summary == SUMMARY
        assert state.summary == SUMMARY


async def test_the_request_is_built_off_the_ui_thread(tmp_path: Path) -> None:
    state = make_state(write_kimi_session(tmp_path / "s"))
    prep = state.preparation
    build = prep.build_request
    threads: list[str] = []

    def recording_build():
        threads.append(threading.current_thread().name)
        return build()

    prep.build_request = recording_build
    main = threading.current_thread().name
    app = FlowHost(StreamScreen(state))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert threads and main not in threads
    assert state.summary


async def test_cancelling_the_worker_is_a_cancelled_run_not_a_crash(tmp_path: Path) -> None:
    """The provider's task is cancelled (second escape): CancelledError goes up
    through the worker, and the UI thread records a cancelled run."""

    called = threading.Event()

    async def deaf(cfg, body, on_event, cancel):
        called.set()
        await asyncio.sleep(30)  # ignores the cancel event
        return StreamResult(status="complete", summary=SUMMARY)

    state = make_state(write_kimi_session(tmp_path / "s"))
    screen = StreamScreen(state, stream_fn=deaf)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, called.is_set, "the provider called")
        await pilot.press("escape")
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.result is not None and screen.result.status == "cancelled"
        assert state.summary is None and not screen.running


async def test_the_default_screen_is_the_main_screen(tmp_path: Path) -> None:
    from kimi_compact_tui.tui.screens.main import MainScreen

    app = create_app(write_kimi_session(tmp_path / "s"))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and app.screen_stack[0] is app.screen
        assert app.screen.state is app.state
        assert app.message_list.message_count == len(app.state.session.messages)


async def test_p_builds_the_request_off_the_ui_thread(tmp_path: Path) -> None:
    from kimi_compact_tui.tui.screens.preview import PreviewScreen

    app = create_app(write_kimi_session(tmp_path / "s"))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        prep = app.state.preparation
        build = prep.build_request
        threads: list[str] = []

        def recording_build():
            threads.append(threading.current_thread().name)
            return build()

        prep.build_request = recording_build
        # the request is built when first read: its messages (the masking)
        # must be built in the worker too, never when the screen reads them
        made_in: list[str] = []
        real = request_module._session_messages

        def recording_messages(sent):  # type: ignore[no-untyped-def]
            made_in.append(threading.current_thread().name)
            return real(sent)

        request_module._session_messages = recording_messages
        try:
            await pilot.press("p")
            await app.workers.wait_for_complete()
            await pilot.pause()
        finally:
            request_module._session_messages = real
        assert isinstance(app.screen, PreviewScreen)
        assert threads and threading.current_thread().name not in threads
        assert made_in and threading.current_thread().name not in made_in
        assert app.screen.request is not None
        assert "request ~" in str(app.screen.query_one("#tokens").render())

"""The TUI goes through the compaction job, and its runs are tied to what they
summarised (bugs this fixed: "the TUI stream bypasses the job", "candidates keyed by
``id(state.session)``", "four definitions of writable").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import Static

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.providers import StreamResult
from kimi_compact_tui.tui.runs import RunKey
from kimi_compact_tui.tui.screens.stream import StreamScreen
from tests.factories import write_openai_session
from tests.tui_support import FlowHost, make_state

ENABLED = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})


def text_of(widget: Static) -> str:
    rendered = widget.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


async def test_the_stream_refuses_what_the_job_refuses_before_any_request(
    tmp_path: Path, loopback, provider_config
) -> None:
    """A remote provider with no model: the CLI's exit-2 refusal, here on the
    stream screen, and nothing reaches the server."""
    path = write_openai_session(tmp_path / "chat.json", 8)
    state = make_state(path, provider=provider_config("openai", model=None), config=ENABLED)
    screen = StreamScreen(state, show_timing=False)
    app = FlowHost(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = text_of(screen.query_one("#stream-status", Static))
        assert status.startswith("not started") and "provider.model" in status
        assert not screen.running and state.stream_result is None
    assert loopback.requests == []


def test_a_run_is_tied_to_the_load_and_the_boundary(tmp_path: Path) -> None:
    """A candidate can be chosen only on the very load and boundary it summarised,
    whatever Python's object ids do."""
    path = write_openai_session(tmp_path / "chat.json", 8)
    state = make_state(path, config=ENABLED)
    key = state.run_key()
    assert key == RunKey(state.generation, "tail", state.preparation.plan.boundary)
    result = StreamResult(status="complete", summary="S1")
    number = state.finish_run(result, key)
    assert number == 1 and state.summary == "S1"
    state.clear_result()
    state.choose_candidate(1)  # same load, same boundary: allowed
    assert state.summary == "S1"
    state.set_boundary(2)  # another range
    with pytest.raises(UserError, match="another range"):
        state.choose_candidate(1)
    state.set_boundary(None)
    state.load(path)  # the same file loaded again is a new generation
    assert state.run_key() != key and len(state.runs) == 1  # kept: same file
    with pytest.raises(UserError, match="another range"):
        state.choose_candidate(1)
    other = write_openai_session(tmp_path / "other.json", 8)
    state.load(other)  # another file: every per-session choice and candidate goes
    assert len(state.runs) == 0


def test_one_writable_rule_everywhere(tmp_path: Path) -> None:
    """The state, the job's draft and the keys agree on what can be written."""
    from kimi_compact_tui.tui import keys

    state = make_state(write_openai_session(tmp_path / "chat.json", 8), config=ENABLED)
    for result, writable in [
        (StreamResult(status="complete", summary="S"), True),
        (StreamResult(status="complete", summary="  "), False),
        (StreamResult(status="truncated", summary="S"), False),
        (StreamResult(status="failed", summary="S", error="boom"), False),
    ]:
        state.set_result(result)
        assert state.writable is writable, result
        assert (state.draft() is not None) is writable
        assert (keys.check(keys.MAIN_KEYS, "write", state) is True) is writable
        assert (result.write_refusal() is None) is writable

"""Snapshots of the flow screens at 120x40: preview, a finished stream with
reasoning, the diff, the confirm dialog and the help screen.

Deterministic: relative session paths (the test runs in a temporary folder),
an inline prompt (no machine-dependent prompt file), timing hidden
(``show_timing=False``), and a provider config with a fixed URL shown on
screen while the real loopback server answers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kimi_compact_tui.config import DEFAULT_CONFIG, AppConfig
from kimi_compact_tui.providers import ProviderConfig, StreamResult, stream_summary
from kimi_compact_tui.tui.keys import Key
from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.help import HelpScreen
from kimi_compact_tui.tui.screens.preview import PreviewScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from tests.factories import SUMMARY, write_kimi_session
from tests.loopback_server import openai_sse
from tests.tui_support import FlowHost, make_state, settle, wait_until

SIZE = (120, 40)
PROMPT = (
    "Compact the conversation above into the six sections current_focus, environment, "
    "completed_tasks, active_issues, code_state and important_context."
)
SHOWN_PROVIDER = ProviderConfig(
    kind="moonshot", model="kimi-k2-thinking", base_url="http://127.0.0.1:8000/v1"
)
HELP_ROWS = [
    ("↑ ↓ j k", "move"),
    ("enter", "detail of the highlighted message"),
    ("b", "compact up to here (explicit boundary)"),
    ("escape", "back to the default preserved tail"),
    ("p", "preview the request"),
    ("i", "custom instructions"),
    ("m", "compaction model"),
    ("c", "compact (stream the summary)"),
    ("d", "diff"),
    ("e", "edit the summary"),
    ("w", "write (asks to confirm)"),
    ("u", "undo the last write"),
    ("/", "search messages"),
    ("[q]", "quit [not markup]"),
]


@pytest.fixture
def state_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_kimi_session(tmp_path / "session")
    return Path("session") / "context.jsonl"


def inline_config() -> AppConfig:
    raw = {"compaction": dict(DEFAULT_CONFIG["compaction"], prompt=PROMPT)}
    return AppConfig(raw=raw)


def snapshot_state(path: Path, provider: ProviderConfig | None = None):
    return make_state(path, provider=provider, config=inline_config())


async def wait_workers(pilot) -> None:
    """Until a stream screen has shown its run's end and the app is at rest (its
    workers done, also ones the run's end started, and the footer in sync)."""

    def ended() -> bool:
        screen = pilot.app.screen
        return not isinstance(screen, StreamScreen) or screen.result is not None

    await wait_until(pilot, ended, "the stream's end")
    await settle(pilot)


def test_snapshot_preview(snap_compare, state_path: Path) -> None:
    state = snapshot_state(state_path)
    state.set_custom_instruction("Keep every error message word for word.")
    assert snap_compare(FlowHost(PreviewScreen(state)), terminal_size=SIZE)


def test_snapshot_stream_with_reasoning(snap_compare, state_path, loopback, provider_config):
    loopback.script(
        [
            openai_sse(
                [SUMMARY[i : i + 25] for i in range(0, len(SUMMARY), 25)],
                reasoning=["The user fixed db.py; ", "the screenshot test is still flaky."],
                usage={"prompt_tokens": 420, "completion_tokens": 96, "total_tokens": 516},
            )
        ]
    )
    real = provider_config("moonshot")
    state = snapshot_state(state_path, provider=SHOWN_PROVIDER)

    async def through_loopback(_cfg, body, on_event, cancel) -> StreamResult:
        return await stream_summary(real, body, on_event, cancel)

    screen = StreamScreen(state, stream_fn=through_loopback, show_timing=False)
    assert snap_compare(FlowHost(screen), terminal_size=SIZE, run_before=wait_workers)
    assert state.summary == SUMMARY


def test_snapshot_diff(snap_compare, state_path: Path) -> None:
    state = snapshot_state(state_path)
    state.set_result(StreamResult(status="complete", summary=SUMMARY))
    assert snap_compare(FlowHost(DiffScreen(state)), terminal_size=SIZE, run_before=wait_workers)


def test_snapshot_confirm(snap_compare, state_path: Path) -> None:
    state = snapshot_state(state_path)
    state.set_result(StreamResult(status="complete", summary=SUMMARY))
    screen = ConfirmWriteScreen(state)  # its disk check answered: a stable picture
    assert snap_compare(FlowHost(screen), terminal_size=SIZE, run_before=wait_workers)


def test_snapshot_help(snap_compare) -> None:
    table = tuple(Key(key, "", "", what, display=key) for key, what in HELP_ROWS)
    assert snap_compare(FlowHost(HelpScreen((("Main screen", table),))), terminal_size=SIZE)


def test_snapshot_stream_offline(snap_compare, state_path: Path) -> None:
    state = snapshot_state(state_path, provider=ProviderConfig(kind="offline"))
    screen = StreamScreen(state, show_timing=False)
    assert snap_compare(FlowHost(screen), terminal_size=SIZE, run_before=wait_workers)
    assert state.stream_result.offline

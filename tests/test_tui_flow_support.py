"""Shared helpers for the flow-screen tests (no tests here).

A tiny host :class:`FlowHost` app pushes one screen and records what it
dismissed with; :func:`make_state` builds a ReviewState from a session file
written into a temporary folder.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.tui.state import ReviewState

SUMMARY = (
    "<current_focus>\nFinish the parser fix in db.py; next run the tests.\n</current_focus>\n\n"
    "<environment>\n- Python 3.11, pytest\n</environment>\n\n"
    "<completed_tasks>\n- Fixed f(): it returns 2\n</completed_tasks>\n\n"
    "<active_issues>\n- The screenshot test is flaky\n</active_issues>\n\n"
    "<code_state>\n<file>\ndb.py\n\n**Summary:**\nThe database helpers\n</file>\n</code_state>\n\n"
    "<important_context>\n- The user wants **no new dependencies**\n</important_context>\n"
)

KIMI_LINES: list[dict[str, Any]] = [
    {"role": "_system_prompt", "content": "You are Kimi Code CLI."},
    {"role": "_checkpoint", "id": 0},
    {"role": "user", "content": "Fix the failing test in db.py"},
    {"role": "_usage", "token_count": 9000},
    {
        "role": "assistant",
        "content": [
            {"type": "think", "think": "Let me look", "encrypted": None},
            {"type": "text", "text": "I'll read the file."},
        ],
        "tool_calls": [
            {
                "type": "function",
                "id": "ReadFile:0",
                "function": {"name": "ReadFile", "arguments": '{"path": "db.py"}'},
            }
        ],
    },
    {
        "role": "tool",
        "content": [{"type": "text", "text": "def f():\n    return 1\n"}],
        "tool_call_id": "ReadFile:0",
    },
    {"role": "assistant", "content": "Fixed: f() now returns 2. [bold]not markup[/] \x1b[31mred"},
    {"role": "_checkpoint", "id": 3},
    {"role": "user", "content": "Now look at the screenshot"},
    {"role": "assistant", "content": "The screenshot shows a green test run."},
    {"role": "user", "content": "Great, write the changelog."},
    {"role": "assistant", "content": "Done: CHANGELOG.md updated."},
    {"role": "_usage", "token_count": 9500},
]


def write_kimi_session(folder: Path, lines: list[dict[str, Any]] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "context.jsonl"
    body = "".join(json.dumps(line) + "\n" for line in (lines or KIMI_LINES))
    path.write_text(body, encoding="utf-8")
    return path


def write_openai_session(path: Path, n: int) -> Path:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful."}]
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"message {i} about topic {i % 7}"})
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def make_state(
    path: Path,
    provider: ProviderConfig | None = None,
    config: AppConfig | None = None,
) -> ReviewState:
    state = ReviewState(config=config or AppConfig(), provider=provider or ProviderConfig())
    state.load(path)
    return state


class FlowHost(App[None]):
    """Pushes ``screen`` on mount and records its dismiss value."""

    CSS = "Screen { background: $surface; }"

    def __init__(self, screen: Screen | None = None) -> None:
        super().__init__()
        self.flow_screen = screen
        self.results: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        if self.flow_screen is not None:
            self.push_screen(self.flow_screen, self.results.append)


def screen_text(screen: Screen) -> str:
    """All the text of the Static widgets on ``screen`` (as rendered content)."""
    out = []
    for widget in screen.query(Static):
        out.append(str(widget.render()))
    return "\n".join(out)


def first_text_gate(fn: Any = None) -> tuple[Any, threading.Event]:
    """A stream function (``fn`` or the real ``stream_summary``) that sets the
    returned event when the first summary text arrives, so a test can wait for
    it (``await asyncio.to_thread(event.wait, 10)``) instead of polling."""
    from kimi_compact_tui.providers import stream_summary

    first = threading.Event()
    inner = fn or stream_summary

    async def stream(cfg, body, on_event, cancel):
        def seen(event):
            if event.kind == "text":
                first.set()
            if on_event is not None:
                on_event(event)

        return await inner(cfg, body, seen, cancel)

    return stream, first

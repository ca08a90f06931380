"""Kept for the tests that import from here (tests/test_tui_*_trust.py); the
helpers live in tests/tui_support.py (the TUI) and tests/factories (sessions)."""

from tests.factories.messages import SUMMARY
from tests.factories.plain import KIMI_LINES, write_kimi_session, write_openai_session
from tests.tui_support import FlowHost, first_text_gate, make_state, static_text

__all__ = [
    "KIMI_LINES",
    "SUMMARY",
    "FlowHost",
    "first_text_gate",
    "make_state",
    "static_text",
    "write_kimi_session",
    "write_openai_session",
]

"""The one place tests write sessions.

- :data:`FORMAT_WRITERS` (``writers.py``): a realistic session of every registered
  format, laid out as its agent lays it out (``tests/formats/test_every_format.py`` runs
  the common tests over all of them);
- the per-format builders, for the cases a test needs record by record:
  ``kimi_code`` (``Journal``), ``claude_code`` (``Transcript``), ``codex``
  (``Rollout``), ``gemini_cli`` (records and ``session_file``);
- ``write_session(folder, fmt, messages)`` and ``write_kimi`` /
  ``write_openai_json`` / ``write_openai_jsonl``: sessions from OpenAI-style
  message dicts (``messages.py`` builds them); the ``session_format`` fixture in
  ``conftest.py`` runs a test once per format of :data:`FORMATS`;
- ``run_cli``: the console entry in a subprocess.
"""

from tests.factories.cli import ROOT, run_cli
from tests.factories.messages import (
    ESCAPE_TEXT,
    MARKUP_TEXT,
    SUMMARY,
    conversation,
    hostile_messages,
    regions_messages,
    tool_call,
    tool_result,
    tool_session,
)
from tests.factories.plain import (
    FORMATS,
    KIMI_LINES,
    big_session,
    write_kimi,
    write_kimi_session,
    write_openai_json,
    write_openai_jsonl,
    write_openai_session,
    write_session,
)
from tests.factories.writers import FORMAT_WRITERS, Writer

__all__ = [
    "ESCAPE_TEXT",
    "FORMATS",
    "FORMAT_WRITERS",
    "KIMI_LINES",
    "MARKUP_TEXT",
    "ROOT",
    "SUMMARY",
    "Writer",
    "big_session",
    "conversation",
    "hostile_messages",
    "regions_messages",
    "run_cli",
    "tool_call",
    "tool_result",
    "tool_session",
    "write_kimi",
    "write_openai_json",
    "write_kimi_session",
    "write_openai_jsonl",
    "write_openai_session",
    "write_session",
]

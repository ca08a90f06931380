"""Start-up (issue 30, item 6): a command imports only what it uses. Sniffing a
session asks the registered formats in turn and loads each only when reached;
a format's writer loads when it writes. Timings are the start-up benchmark's
(``benchmarks/startup_bench.py``); this checks what is imported."""

from __future__ import annotations

import json
import sys

from kimi_compact_tui.formats import registry
from tests import procs
from tests.factories.plain import write_kimi
from tests.factories.writers import kimi_cli_messages

#: Modules a kimi-cli session's plan never needs: the formats after kimi-cli in
#: the registry, and every format's writer.
NOT_FOR_A_KIMI_CLI_PLAN = (
    "kimi_compact_tui.formats.gemini_cli.plugin",
    "kimi_compact_tui.formats.opencode.plugin",
    "kimi_compact_tui.formats.database",
    "kimi_compact_tui.formats.openai",
    "kimi_compact_tui.formats.claude_code.append",
    "kimi_compact_tui.formats.codex.projection",
    "kimi_compact_tui.formats.codex.records",
    "kimi_compact_tui.formats.kimi_code.records",
    "sqlite3",
)


def test_every_registry_line_names_its_formats_label():
    """The help lists the labels without loading a format: they must be the formats'."""
    assert registry.labels() == [fmt.label for fmt in registry.FORMATS]


def test_planning_a_kimi_cli_session_loads_no_other_formats_writer_or_later_format(tmp_path):
    session = write_kimi(tmp_path / "context.jsonl", kimi_cli_messages())
    code = (
        "import json, sys\n"
        "from kimi_compact_tui.cli import main\n"
        f"main(['plan', {str(session)!r}])\n"
        f"print(json.dumps([m for m in {list(NOT_FOR_A_KIMI_CLI_PLAN)!r} if m in sys.modules]))\n"
    )
    done = procs.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().split("\n")[-1])
    assert loaded == []

"""The engine (model, formats, compaction, config) is usable without Textual."""

from __future__ import annotations

import subprocess
import sys


def test_engine_does_not_import_textual():
    code = (
        "import sys\n"
        "import kimi_compact_tui.model, kimi_compact_tui.formats, kimi_compact_tui.config\n"
        "import kimi_compact_tui.compaction, kimi_compact_tui.compaction.feature\n"
        "import kimi_compact_tui.commands.plan, kimi_compact_tui.commands.preview\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

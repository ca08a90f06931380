"""Nothing outside ``tui/`` imports ``tui/`` or Textual: every other module of
the package is imported in a fresh interpreter and the loaded modules checked."""

from __future__ import annotations

import pkgutil
import sys
from pathlib import Path

import kimi_compact_tui
from tests import procs

PACKAGE = Path(kimi_compact_tui.__file__).parent


def engine_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="kimi_compact_tui."):
        if info.name.endswith(".__main__") or info.name == "kimi_compact_tui.tui":
            continue
        if info.name.startswith("kimi_compact_tui.tui."):
            continue
        names.append(info.name)
    return sorted(names)


def test_the_engine_list_covers_the_package():
    names = engine_modules()
    for expected in (
        "kimi_compact_tui.store.write",
        "kimi_compact_tui.formats.registry",
        "kimi_compact_tui.job",
        "kimi_compact_tui.compaction.contract",
        "kimi_compact_tui.sanitize",
        "kimi_compact_tui.retention.report",
        "kimi_compact_tui.providers.offline.render",
        "kimi_compact_tui.commands.compact",
        "kimi_compact_tui.cli",
    ):
        assert expected in names
    assert len(names) > 50


def test_no_module_outside_tui_imports_textual_or_tui():
    code = (
        "import importlib, sys\n"
        f"for name in {engine_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.')\n"
        "             or m == 'kimi_compact_tui.tui' or m.startswith('kimi_compact_tui.tui.'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = procs.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

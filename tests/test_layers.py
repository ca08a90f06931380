"""The layers run one way, and no module imports itself back (issue 16).

Every import in the package is read from the source (module level, inside
functions and under ``TYPE_CHECKING`` alike), so a cycle hidden behind a
function-local import is still a cycle here. Two rules:

1. each area imports only the areas below it (:data:`ALLOWED`): the plain
   engine steps under the formats, the providers and the store; the
   compaction job above them; the front ends on top;
2. the module graph has no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kimi_compact_tui

PACKAGE = Path(kimi_compact_tui.__file__).parent
ROOT = "kimi_compact_tui"

# The areas, bottom to top, and what each may import (besides itself).
BASE = {"__init__", "errors", "fsutil", "sanitize", "model", "limits", "previews", "samples"}
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "compaction": {"base"},
    "retention": {"base", "compaction"},
    "providers": {"base", "compaction", "retention"},  # offline: the retention items asked for
    "config": {"base", "compaction", "retention", "providers"},  # it checks the provider block
    "formats": {"base", "compaction"},
    "diff": {"base", "compaction", "formats"},
    "store": {"base", "compaction", "formats"},
    "job": {"base", "compaction", "providers", "config", "formats", "store", "retention"},
    "tui": {"base", "compaction", "providers", "config", "formats", "retention", "diff",
            "store", "job"},
    "commands": {"base", "compaction", "providers", "config", "formats", "retention", "diff",
                 "store", "job", "tui"},
    "cli": {"base", "commands", "formats"},  # a bare word may be a session id
}  # fmt: skip


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts) if parts != ["__init__"] else "__init__"


def area(module: str) -> str:
    head = module.split(".")[0]
    if head == "__main__":  # ``python -m kimi_compact_tui`` is the command line
        return "cli"
    return "base" if head in BASE else head


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports(path: Path, known: set[str]) -> set[str]:
    """The package modules ``path`` imports, wherever the import statement is."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names]
            names = [n if n[len(ROOT) + 1 :] in known else node.module for n in names]
        else:
            continue
        for name in names:
            if name == ROOT:
                out.add("__init__")
            elif name.startswith(ROOT + "."):
                target = name[len(ROOT) + 1 :]
                while target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known:
                    out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports(path, known) - {name} for name, path in mods.items()}


def test_every_area_is_known():
    unknown = sorted({area(m) for m in modules()} - set(ALLOWED))
    assert not unknown, f"place these areas in ALLOWED: {unknown}"


def test_imports_point_down():
    wrong = []
    for module, targets in graph().items():
        here = area(module)
        for target in targets:
            there = area(target)
            if there != here and there not in ALLOWED[here]:
                wrong.append(f"{module} -> {target} ({here} may not import {there})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycle():
    g = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_the_checker_sees_function_local_imports(tmp_path):
    """The scan would catch a cycle hidden in a function."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f():\n    from kimi_compact_tui.job import CompactionJob\n    return CompactionJob\n"
    )
    assert imports(probe, set(modules())) == {"job"}

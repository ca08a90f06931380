"""docs/ARCHITECTURE.md is the house as built: every module, folder and class it
names exists, and its table of layers is the one tests/project/test_layers.py
enforces (issue 30: the document described the house as designed)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.project.test_layers import ALLOWED

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "kimi_compact_tui"
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")

PATH_RE = re.compile(r"`([A-Za-z0-9_./-]+(?:\.py|\.md|/))`")
#: The worked example's own new file (the recipe tells you to write it).
EXAMPLES = {"formats/myagent.py"}
NAME_RE = re.compile(r"`([A-Z][a-z]+(?:[A-Z][a-z0-9]*)+)`")
#: Names the document quotes that are not ours: the agents' own hook events.
NOT_OURS = {"PreCompact", "PreCompress", "SessionStart"}


def _defined() -> set[str]:
    names: set[str] = set()
    for source in [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return names


def _exists(named: str) -> bool:
    """A path as the document writes it: from the repository, the package or
    ``docs/``, or (inside a sentence about one folder) from any folder of the
    package; a bare file name anywhere in the package, the tests or benchmarks."""
    named = named.rstrip("/")
    bases = [PACKAGE, ROOT, ROOT / "docs", *(d for d in PACKAGE.rglob("*") if d.is_dir())]
    if any((base / named).exists() for base in bases):
        return True
    if "/" not in named:
        return any(
            next(folder.rglob(named), None) is not None
            for folder in (PACKAGE, ROOT / "tests", ROOT / "benchmarks", ROOT / ".ci")
        )
    return False


def test_every_path_the_document_names_exists():
    missing = sorted(
        {p for p in PATH_RE.findall(DOC) if "<" not in p and p not in EXAMPLES and not _exists(p)}
    )
    assert missing == []


def test_every_class_the_document_names_exists():
    defined = _defined()
    missing = sorted({n for n in NAME_RE.findall(DOC) if n not in defined} - NOT_OURS)
    assert missing == []


def test_the_layers_table_is_the_one_the_layer_test_enforces():
    section = DOC.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.split("\n") if line.startswith("| `")]
    table = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        imports = set(re.findall(r"`([a-z_]+)`", cells[1]))
        table[cells[0].strip("`")] = imports
    assert table == ALLOWED


def test_the_modules_the_redesign_shrank_stay_small():
    """Issue 30: the retention pane only renders (it was 689 lines, running the
    provider and four workers); compact's run reads as its steps."""
    pane = PACKAGE / "tui" / "widgets" / "retention_pane.py"
    assert len(pane.read_text(encoding="utf-8").split("\n")) < 300
    tree = ast.parse((PACKAGE / "commands" / "compact" / "__init__.py").read_text("utf-8"))
    run = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run")
    assert (run.end_lineno or 0) - run.lineno + 1 < 50

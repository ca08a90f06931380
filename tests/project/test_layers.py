"""The layers run one way, and no module imports itself back.

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
import re
from pathlib import Path

import kimi_compact_tui

PACKAGE = Path(kimi_compact_tui.__file__).parent
ROOT = "kimi_compact_tui"

# The areas, bottom to top, and what each may import (besides itself).
BASE = {
    "__init__",
    "agenthook",
    "errors",
    "fsutil",
    "sanitize",
    "secrets",
    "model",
    "limits",
    "previews",
    "samples",
    "wording",
}
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "compaction": {"base"},
    "hooks": {"base"},  # the gate: the hook runs before every compaction of an agent
    "specifics": {"base", "compaction"},
    "retention": {"base", "compaction", "specifics"},
    "providers": {"base", "compaction", "retention", "specifics"},  # offline: the specifics
    "config": {"base", "compaction", "retention", "providers"},  # it checks the provider block
    "formats": {"base", "compaction", "specifics"},  # their tool roles
    "diff": {"base", "compaction", "formats"},
    "store": {"base", "compaction", "formats", "hooks"},  # a write clears a pending review
    "job": {"base", "compaction", "providers", "config", "formats", "store", "retention",
            "specifics"},
    "tui": {"base", "compaction", "providers", "config", "formats", "retention", "diff",
            "store", "job", "specifics"},
    "commands": {"base", "compaction", "providers", "config", "formats", "retention", "diff",
                 "store", "job", "tui", "specifics", "hooks"},
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


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
    ]


def test_no_format_is_read_with_getattr():
    """Every hook is declared on SessionFormat: nothing reads a format (or a
    plan) with getattr."""
    found = []
    for module, path in modules().items():
        for call in _calls(ast.parse(path.read_text(encoding="utf-8")), "getattr"):
            subject = ast.unparse(call.args[0]) if call.args else ""
            if any(w in subject.lower() for w in ("fmt", "format", "plugin", "plan")):
                found.append(f"{module}: getattr({subject}, ...)")
    assert not found, "\n".join(found)


def _strings(tree: ast.AST) -> list[ast.Constant]:
    """The string constants of a module that are not docstrings (prose may name a
    file or an agent by way of example)."""
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings
    ]  # fmt: skip


def test_no_format_file_name_outside_formats():
    """Only the formats know their files' names."""
    names = ("context.jsonl", "wire.jsonl", "context_", ".chat", "rollout-", "session-")
    found = []
    for module, path in modules().items():
        if area(module) == "formats":
            continue
        for node in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            # ``context_window`` is a config setting, not kimi-cli's ``context_N``.
            text = node.value.replace("context_window", "")
            if any(n in text for n in names):
                found.append(f"{module}: {node.value[:60]!r}")
    assert not found, "\n".join(found)


#: The agents' names (the word on our command line, the format's name, its
#: package's name) and their labels for people. (kimi-cli's format is named
#: ``kimi``, which is also the compaction type and a provider kind: not listed.)
AGENT_NAMES = ("claude-code", "codex", "gemini-cli", "kimi-cli", "kimi-code", "opencode",
               "claude_code", "gemini_cli", "kimi_cli", "kimi_code",
               "Claude Code", "Codex", "Gemini CLI", "Kimi Code")  # fmt: skip
_AGENT_WORD = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, AGENT_NAMES)) + r")(?![\w-])")
#: (module, name) left naming an agent, each for a reason:
NAMED_OUTSIDE_FORMATS = {
    # kimi-cli's own compaction prompt (its installed package's prompts/compact.md)
    # is the default prompt, and the planner follows kimi-cli's rule: that is the
    # compaction (below the formats; the config resolves the prompt), not a
    # session format. Moving the prompt's finder into formats/kimi_cli/ would
    # move the config above the formats: a change of layers of its own.
    ("compaction.prompts", "kimi-cli"),
    ("compaction.prompts", "kimi_cli"),
    ("compaction.plan", "kimi-cli"),  # "kimi-cli does not compact with this setting"
    ("tui.screens.preview", "kimi-cli"),  # the badge "exact kimi-cli prompt"
    ("tui.widgets.status", "kimi-cli"),  # the same badge
    # a help text's example of a name a person types
    ("commands.diff", "kimi-cli"),  # "(file or kimi-cli folder)"
    ("commands.listing", "claude-code"),  # "a format name such as claude-code"
}


def test_no_agent_name_outside_formats():
    """Nothing outside formats/ knows an agent's name: no string (a constant, a
    comparison's, a table's key) names one, except prose in docstrings and the
    few left above with their reasons. What an agent is (its hook, its files)
    is its format's to declare."""
    found = []
    for module, path in modules().items():
        if area(module) == "formats":
            continue
        for node in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            for name in set(_AGENT_WORD.findall(node.value)):
                if (module, name) not in NAMED_OUTSIDE_FORMATS:
                    found.append(f"{module}:{node.lineno}: {name!r} in {node.value[:60]!r}")
    assert not found, "\n".join(sorted(found))


def test_the_agent_names_cover_every_agent():
    """A new agent's name joins the list the test above looks for."""
    from kimi_compact_tui.formats import gate, registry

    agents = {fmt.agent for fmt in registry.specific()} | set(gate.HOOKS) | set(gate.NO_HOOK)
    labels = {h.label for h in gate.hooks()}
    assert agents | labels <= set(AGENT_NAMES)


def test_thread_workers_read_only_their_arguments():
    """A TUI thread worker is given what it needs (taken on the UI thread) and
    touches no state, widget or process-wide setting."""
    forbidden = ("self.state", "self.query", "self._view", "self.app", "gc.freeze",
                 "setswitchinterval", "self.notify")  # fmt: skip
    found = []
    for module, path in modules().items():
        if area(module) != "tui":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if not any(d.startswith("work(") and "thread=True" in d for d in decorators):
                continue
            body = "\n".join(ast.unparse(stmt) for stmt in node.body)
            for word in forbidden:
                if word in body:
                    found.append(f"{module}.{node.name}: {word}")
    assert not found, "\n".join(found)


def test_a_counted_noun_is_singular_or_plural_never_both():
    """A message that counts something says "1 item" or "2 items" (wording.count),
    never "2 item(s)": found in every f-string of the package that counts."""
    found = []
    for module, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.JoinedStr):
                continue
            for before, part in zip(node.values, node.values[1:], strict=False):
                if not (isinstance(before, ast.FormattedValue) and isinstance(part, ast.Constant)):
                    continue
                words = str(part.value).split(",")[0].split(";")[0]
                if re.match(r"\s+[\w ]*\w\(s\)", words) and "http(s)" not in words:
                    found.append(f"{module}: {ast.unparse(node)[:70]}")
    assert not found, "\n".join(found)

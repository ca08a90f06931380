"""The documentation says what the code does: the README's
two commands as CI runs them, its key table as ``tui/keys.py`` defines it,
every command's options in the CLI reference, and no dead link between the
README, CONTRIBUTING.md and ``docs/``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kimi_compact_tui.cli import _subparsers, build_parser
from kimi_compact_tui.tui.keys import MAIN_KEYS

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted([README, ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")])

#: The two commands a new user copies (CI and scripts/ci-soak run the second).
RUN_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && "
    ".venv/bin/kimi-compact-tui sample_sessions/kimi-debugging-session --provider offline"
)
TEST_COMMAND = (
    'python3 -m venv .venv && .venv/bin/pip install -q -e ".[dev]" && '
    "bash .ci/install-agents && .venv/bin/python -m pytest -q -n 2"
)

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings."""
    found = set()
    in_code = False
    for line in text(path).split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        heading = line.lstrip("#").strip().lower()
        found.add(re.sub(r"[^\w\- ]", "", heading).replace(" ", "-"))
    return found


def test_the_readme_gives_the_two_commands_byte_for_byte():
    lines = text(README).split("\n")
    assert "    " + RUN_COMMAND in lines
    assert "    " + TEST_COMMAND in lines
    assert lines.index("    " + RUN_COMMAND) < lines.index("    " + TEST_COMMAND)


def test_the_readme_is_short():
    assert text(README).count("\n") <= 300


def key_rows(markdown: str) -> list[str]:
    """The rows of the README's key table (under its ``## Keys`` heading)."""
    section = markdown.split("\n## Keys\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.split("\n") if line.startswith("| `")]


def test_the_readme_key_table_is_the_main_screens_keys():
    """Row for row: a key added to ``MAIN_KEYS`` needs its row here (the message
    gives it), and a row for a key that is gone fails too."""
    expected = [f"| `{k.help_keys}` | {k.help} |" for k in MAIN_KEYS]
    assert key_rows(text(README)) == expected


@pytest.mark.parametrize("command", sorted(_subparsers(build_parser())))
def test_the_cli_reference_names_every_option(command):
    reference = text(ROOT / "docs" / "cli.md")
    parser = _subparsers(build_parser())[command]
    options = [
        max(action.option_strings, key=len)
        for action in parser._actions
        if action.option_strings and "--help" not in action.option_strings
    ]
    assert re.search(rf"kimi-compact-tui {command}\b", reference), command
    missing = [o for o in options if not re.search(rf"{re.escape(o)}\b", reference)]
    assert missing == [], f"{command}: not in docs/cli.md: {missing}"
    assert re.search(rf"kimi-compact-tui {command}\b", text(README)), command


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    dead = []
    for target in LINK.findall(text(page)):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists():
            dead.append(target)
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            dead.append(target)
    assert dead == []


def test_the_readme_names_every_agent_its_page_and_its_variables():
    """Issue 32 item 3: the README left opencode out of the agents proven to
    resume, the agents' documentation links and the environment variables. Each
    agent row of the README's table needs its name in the resume paragraph and its
    page among the documentation links; every variable a finder reads is named."""
    readme = text(README)
    rows = [
        line.split("|")[1].strip()
        for line in readme.split("\n")
        if line.startswith("| ") and "docs/agents/" in line
    ]
    agents = [name for name in rows if name != "any"]
    assert "opencode" in agents
    proven = readme.split("The real agents resume what it writes", 1)[1].split("\n\n", 1)[0]
    proven = " ".join(proven.split())
    for name in agents:
        assert name in proven, f"{name} is not among the agents proven to resume"
    links = readme.split("\n## Documentation\n", 1)[1].split("\n## ", 1)[0]
    for page in sorted((ROOT / "docs" / "agents").glob("*.md")):
        assert f"(docs/agents/{page.name})" in links, f"{page.name} is not linked"
    read = set()
    for source in (ROOT / "kimi_compact_tui" / "formats").rglob("*.py"):
        read.update(re.findall(r'env(?:iron)?\.get\("([A-Z_]+)"', text(source)))
    read.discard("HOME")  # everyone's, not an agent's
    assert read
    for variable in sorted(read):
        assert f"`${variable}`" in readme, f"${variable} is not named in the README"

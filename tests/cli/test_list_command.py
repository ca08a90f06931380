"""``kimi-compact-tui list [--json] [--agent NAME]``: the picker's sessions
as text, for scripts, from real sessions written where each agent keeps them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kimi_compact_tui.commands.jsonout import JSON_SCHEMA
from kimi_compact_tui.formats import registry
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories.writers import write_claude_code, write_kimi_cli


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's HOME holding a kimi-cli and a Claude Code session."""
    for name in ("CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "KIMI_CODE_HOME"):
        monkeypatch.delenv(name, raising=False)
    home = Path(os.environ["HOME"])
    write_kimi_cli(home)
    write_claude_code(home)
    return home


def test_list_shows_each_session_with_its_short_id_agent_time_messages_and_title(
    home, cli_main  # noqa: F811
):
    found = registry.discover_all()
    short = registry.short_ids(found)
    assert len(found) == 2
    done = cli_main("list")
    assert done.code == 0, done.stderr
    lines = done.stdout.rstrip("\n").split("\n")
    assert len(lines) == 2
    for info in found:
        (line,) = [x for x in lines if x.startswith(short[info.session_id or ""] + "  ")]
        fmt = registry.get(info.format)
        assert str(fmt.agent) in line and f"  {info.message_count:,}  " in line
        assert info.title is not None and info.title[:30] in line
    # Every short id it prints opens that session.
    for line in lines:
        ident = line.split("  ")[0]
        assert cli_main("plan", ident, "--json").code == 0


def test_list_json_has_every_field_and_the_full_reference(home, cli_main):  # noqa: F811
    done = cli_main("list", "--json")
    assert done.code == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["schema"] == JSON_SCHEMA and len(data["sessions"]) == 2
    for row in data["sessions"]:
        assert set(row) >= {"ref", "short_id", "agent", "updated", "messages", "title"}
        assert Path(row["ref"]).exists() and row["messages"] > 0
    times = [row["updated"] for row in data["sessions"]]
    assert times == sorted(times, reverse=True)  # newest first


@pytest.mark.parametrize("name", ["claude-code", "Claude Code", "CLAUDE"])
def test_list_agent_keeps_only_that_agents_sessions(home, cli_main, name):  # noqa: F811
    done = cli_main("list", "--agent", name, "--json")
    assert done.code == 0, done.stderr
    rows = json.loads(done.stdout)["sessions"]
    assert [row["format"] for row in rows] == ["claude-code"]


def test_an_unknown_agent_is_one_line_naming_the_accepted_ones(home, cli_main):  # noqa: F811
    done = cli_main("list", "--agent", "emacs")
    assert done.code == 2 and done.stderr.count("\n") == 1
    assert "--agent emacs" in done.stderr and "claude-code" in done.stderr


def test_no_sessions_is_said_on_stderr_with_nothing_on_stdout(cli_main):  # noqa: F811
    done = cli_main("list", "--agent", "codex")
    assert done.code == 0 and done.stdout == ""
    assert "no codex sessions found" in done.stderr

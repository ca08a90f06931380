"""A folder that holds sessions but is not one session's folder names the
sessions it holds, with their ids, and how to name one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.registry import LISTED
from tests.factories import claude_code, codex
from tests.factories.kimi_cli import share_session, write_kimi_json
from tests.factories.writers import kimi_cli_messages

CLAUDE_IDS = ("3c1a0d2e-0000-4000-8000-000000000001", "8d2b1e3f-0000-4000-8000-000000000002")


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "KIMI_CODE_HOME"):
        monkeypatch.delenv(name, raising=False)
    return Path(os.environ["HOME"])


def claude_project(home: Path) -> Path:
    for i, sid in enumerate(CLAUDE_IDS):
        t = claude_code.Transcript(sid=sid)
        t.user(f"prompt number {i}")
        t.assistant([claude_code.text("done")])
        path = t.write(home / ".claude")
        (path.parent / sid / "subagents").mkdir(parents=True)  # a session's own folder
    return path.parent


def one_error(result) -> str:
    assert result.code == 2, result.stdout + result.stderr
    assert len(result.error_lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return result.error_lines[0]


def test_a_claude_code_project_folder_names_its_transcripts(home, cli_main):
    """Failed on old main: "folder holds no session"."""
    project = claude_project(home)
    line = one_error(cli_main("plan", project))
    assert "holds no session" not in line
    assert "2 sessions" in line
    for sid in CLAUDE_IDS:
        assert sid[:8] in line
    assert "Claude Code" in line and "'prompt number 0'" in line
    assert "name one by its id or path" in line
    # The way it names works.
    name = CLAUDE_IDS[1][:8]
    assert cli_main("plan", name).code == 0


def test_a_codex_day_folder_names_its_rollouts(home, cli_main):
    """Failed on old main: "folder holds no session"."""
    path = codex.conversation().write(home / ".codex")
    line = one_error(cli_main("plan", path.parent))
    assert codex.SID[:8] in line and "Codex" in line
    assert "holds no session" not in line


def test_a_kimi_cli_work_folder_names_its_sessions(home, cli_main):
    """Failed on old main: "folder holds no session"."""
    share = home / ".kimi"
    write_kimi_json(share, "/work/project")
    ids = [f"{n:08x}-0000-4000-8000-00000000000{n}" for n in range(1, LISTED + 3)]
    for n, sid in enumerate(ids):
        folder = share_session(share, "/work/project", sid, kimi_cli_messages(), mtime=1e9 + n)
    line = one_error(cli_main("preview", folder.parent))
    assert f"{len(ids)} sessions" in line
    assert "and 2 more" in line  # the list is capped
    assert ids[-1][:8] in line  # newest first
    assert ids[0][:8] not in line
    assert "kimi-cli" in line


def test_a_folder_outside_the_agents_homes_names_files_by_path(tmp_path, home, cli_main):
    """Copied transcripts elsewhere: the picker does not list them, so they are
    named by path (an id would not find them)."""
    away = tmp_path / "copied"
    for sid in CLAUDE_IDS:
        t = claude_code.Transcript(sid=sid)
        t.user("hello")
        t.assistant([claude_code.text("hi")])
        path = t.write(away)
    line = one_error(cli_main("plan", path.parent))
    for sid in CLAUDE_IDS:
        assert str(path.parent / f"{sid}.jsonl") in line


def test_a_folder_of_nothing_still_says_so(tmp_path, home, cli_main):
    (tmp_path / "empty").mkdir()
    line = one_error(cli_main("plan", tmp_path / "empty"))
    assert "folder holds no session" in line


def test_the_tui_refuses_a_folder_of_sessions_before_it_starts(home, cli_main):
    project = claude_project(home)
    for argv in (["tui", project], [project]):
        line = one_error(cli_main(*argv))
        assert CLAUDE_IDS[0][:8] in line


def test_the_folder_message_is_the_registrys(home):
    project = claude_project(home)
    with pytest.raises(registry.SessionFormatError) as caught:
        registry.resolve(project)
    assert "\n" not in str(caught.value)


def test_a_kimi_cli_session_folder_without_its_file_says_so(home, cli_main):
    """By id or by path: what is missing, not "a folder of one session"."""
    share = home / ".kimi"
    write_kimi_json(share, "/work/project")
    folder = share_session(share, "/work/project", "5e55e55e-0000-4000-8000-000000000000")
    (folder / "context.jsonl").unlink()
    for name in (folder, folder.name[:8]):
        line = one_error(cli_main("plan", name))
        assert "no context.jsonl in the session folder" in line

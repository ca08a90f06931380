"""A kimi-code session opens by its id everywhere; one that cannot be written
is refused before any request; the picker lists it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests import procs
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories.kimi_code import conversation, write_home

ROOT = Path(__file__).resolve().parents[2]


def make_home(tmp_path: Path, journal: bytes) -> tuple[Path, Path]:
    root = tmp_path / "kch"
    return root, write_home(root, journal)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root.parent), "KIMI_CODE_HOME": str(root)}
    return procs.run(
        [sys.executable, "-m", "kimi_compact_tui", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_plan_takes_a_kimi_code_session_id(tmp_path):
    root, folder = make_home(tmp_path, conversation().bytes())
    res = cli(root, "plan", "session_x1", "--json")
    assert res.returncode == 0, res.stderr
    plan = json.loads(res.stdout)
    assert plan["format"] == "kimi-code" and plan["messages"] == 7
    assert plan["session"] == str(folder / "agents" / "main" / "wire.jsonl")
    missing = cli(root, "plan", "session_nope")
    assert missing.returncode == 2 and "nor a session id" in missing.stderr


def test_a_journal_ending_mid_turn_is_refused_before_any_request(tmp_path):
    j = conversation()
    step = j.begin()
    j.call(step, "c9", "sleep 9")
    root, folder = make_home(tmp_path, j.bytes())
    before = sorted(p.name for p in (folder / "agents" / "main").iterdir())
    # Against a provider nobody listens on: refused before it is ever asked.
    res = cli(
        root, "compact", "session_x1", "--in-place", "--yes", "--up-to", "3",
        "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
    )  # fmt: skip
    assert res.returncode == 2, res.stderr
    assert "mid-turn" in res.stderr and "compacting" not in res.stderr
    assert sorted(p.name for p in (folder / "agents" / "main").iterdir()) == before


async def test_the_tui_opens_a_kimi_code_session_by_id(tmp_path, monkeypatch):
    from kimi_compact_tui.tui.app import create_app

    root, folder = make_home(tmp_path, conversation().bytes())
    monkeypatch.setenv("KIMI_CODE_HOME", str(root))
    app = create_app("session_x1", provider="offline")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.session is not None
        assert app.state.session.format.name == "kimi-code"
        assert app.state.session_path == folder / "agents" / "main" / "wire.jsonl"


async def test_the_picker_lists_kimi_code_sessions_beside_kimi_clis(tmp_path, monkeypatch):
    from kimi_compact_tui.tui.app import create_app
    from tests.tui_support import cells_text, settle

    root, _folder = make_home(tmp_path, conversation().bytes())
    monkeypatch.setenv("KIMI_CODE_HOME", str(root))
    monkeypatch.setenv("KIMI_SHARE_DIR", str(tmp_path / "no-kimi-cli"))
    app = create_app(None, provider="offline")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        text = cells_text(app)
        assert "first prompt" in text and "/w" in text and "7 messages" in text
        note = str(app.screen.query_one("#picker-note").render())
        assert note.startswith(f"1 kimi-code session under {root / 'sessions'}"), note
        assert "no kimi-cli sessions found under" in note.lower(), note


def test_a_record_kimi_code_skips_is_warned_about_by_plan(tmp_path, cli_main):  # noqa: F811
    """kimi-code's skip warnings lived in ``extra["warnings"]`` and
    reached nobody; they are the session's warnings now, as for kimi-cli."""
    from kimi_compact_tui.formats import load

    lines = conversation().bytes().split(b"\n")
    assert lines[-1] == b""
    bad = b'{"type":"context.append_message","agentId":"main"}'
    data = b"\n".join(lines[:-2] + [bad, lines[-2], b""])
    wire = tmp_path / "s" / "agents" / "main" / "wire.jsonl"
    wire.parent.mkdir(parents=True)
    wire.write_bytes(data)
    line = len(lines) - 1  # the bad record's line number
    session = load(wire).session
    assert len(session.warnings) == 1 and f"{wire}:{line}" in session.warnings[0]
    result = cli_main("plan", wire)
    assert result.code == 0
    warned = [x for x in result.stderr.splitlines() if "warning:" in x]
    assert len(warned) == 1 and f"{wire}:{line}" in warned[0]

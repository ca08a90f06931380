"""Codex CLI 0.171.0's UI projection and writer lock, with the real Codex.

- A forced restore would leave Codex's UI projection (``thread_history_1.sqlite``)
  holding the turn the restore removed and missing Codex's next turn; our restore
  forgets the session's rows (the format's ``after_restore`` hook,
  ``formats/codex/projection.after_restore``), and so does deleting the database:
  Codex then rebuilds it from the rollout.
- While Codex runs a session it holds the session's writer lock: we see it as running,
  and no longer once it has exited.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.formats.codex import FORMAT, write_refusal
from kimi_compact_tui.formats.codex.projection import codex_is_running
from tests.agents.codex_runner import Codex, codex_installed, shared_codex_template
from tests.agents.fake_model import FakeModel, text_turn, tool_turn
from tests.agents.fake_responses import FakeResponses
from tests.agents.harness import require_agent, run_ours

pytestmark = pytest.mark.agents

ROOT = Path(__file__).resolve().parents[2]
TURN_A = "Turn A, after our compaction"
TURN_B = "Turn B, after the forced restore"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    require_agent(codex_installed(), "Codex")
    return shared_codex_template(tmp_path_factory)


@pytest.fixture(scope="module")
def fakes():
    with (
        FakeResponses(summary="FAKE-CODEX-SUMMARY", lifetime=600) as responses,
        FakeModel(summary="FAKE SUMMARY", lifetime=600) as chat,
    ):
        yield responses, chat


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def projected(codex: Codex) -> tuple[int, str]:
    """Codex's UI projection: (the rollout offset it has read to, the text of its user
    messages)."""
    con = sqlite3.connect(codex.state / "thread_history_1.sqlite")
    try:
        ((offset,),) = con.execute(
            "select next_rollout_byte_offset from thread_history_projection_state"
        ).fetchall()
        items = con.execute(
            "select item_json from thread_items where item_type = 'userMessage' "
            "order by rollout_ordinal"
        ).fetchall()
    finally:
        con.close()
    return offset, "\n".join(s for (j,) in items for s in _strings(json.loads(j)))


def _restored_after_turn_a(template, responses, chat) -> tuple[Codex, str, Path, bytes]:
    """A copy where we compacted, Codex ran turn A, and a forced restore put the
    original rollout back; returns the copy, the session, the rollout and what the
    restore replaced."""
    runner, sid = template
    codex = runner.clone(responses)
    rollout = codex.rollout_file(sid)
    original = rollout.read_bytes()
    status, _, err = run_ours(
        ["compact", str(rollout), "--in-place", "--yes", "--provider", "openai"]
        + ["--base-url", chat.base_url, "--model", chat.model],
        codex.root,
    )
    assert status == 0, err[-2000:]
    codex.resume(sid, TURN_A)
    assert TURN_A in projected(codex)[1]
    replaced = rollout.read_bytes()
    status, _, err = run_ours(["restore", str(rollout), "--yes", "--force"], codex.root)
    assert status == 0, err[-2000:]
    assert rollout.read_bytes() == original
    return codex, sid, rollout, replaced


def test_after_a_forced_restore_codex_rebuilds_its_ui_history(template, fakes):
    """Our restore resets Codex's UI projection of the session (the format's
    ``after_restore`` hook): Codex's next run rebuilds it from the restored rollout,
    so its UI shows the turns the rollout holds, not the ones the restore removed."""
    responses, chat = fakes
    codex, sid, rollout, _ = _restored_after_turn_a(template, responses, chat)
    codex.resume(sid, TURN_B)
    offset, users = projected(codex)
    assert offset == rollout.stat().st_size
    assert TURN_B in users and TURN_A not in users
    assert "Please run echo hello" in users  # the turns before are there again


def test_deleting_the_database_also_makes_codex_rebuild_it(template, fakes):
    """docs/agents/codex.md's way for a projection left stale by another tool."""
    responses, chat = fakes
    codex, sid, rollout, _ = _restored_after_turn_a(template, responses, chat)
    for p in codex.state.glob("thread_history_1.sqlite*"):
        p.unlink()
    codex.resume(sid, TURN_B)
    offset, users = projected(codex)
    assert offset == rollout.stat().st_size and TURN_B in users and TURN_A not in users


def test_codex_holds_the_writer_lock_while_it_runs_a_session(template, fakes):
    responses, _ = fakes
    runner, sid = template
    codex = runner.clone(responses)
    rollout = codex.rollout_file(sid)
    probe = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
        "from kimi_compact_tui.formats.codex.projection import codex_is_running; "
        "print('codex-running=%s' % codex_is_running(Path(sys.argv[2])))"
    )
    command = shlex.join([sys.executable, "-c", probe, str(ROOT), str(rollout)])
    responses.script(tool_turn(command), text_turn("Checked."))
    codex.run("Is the session locked?", sid).check()
    outputs = [
        json.loads(line)["payload"].get("output", "")
        for line in rollout.read_text(encoding="utf-8").splitlines()
        if '"function_call_output"' in line
    ]
    assert "codex-running=True" in outputs[-1]
    # Codex has exited: the session is free, and a compaction is not refused for it
    assert not codex_is_running(rollout)
    assert write_refusal(FORMAT.parse(rollout.read_bytes(), rollout)) is None

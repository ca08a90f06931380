"""The ledger and repair with the real Claude Code 2.1.197 (issue 33 items 3 and 4).

Claude Code compacts the session itself (``/compact``, answered by the fake model with a
one-line summary that names none of the user's requests). ``history`` lists that
compaction and names what its summary lost; ``compact --repair`` puts the anchor block of
those items into that summary record, in place; Claude Code, resumed, sends the
repaired summary with the block; ``restore`` gives the transcript's bytes back.
"""

from __future__ import annotations

import json

import pytest

from tests.agents.claude_code import claude_code_installed, claude_template
from tests.agents.fake_anthropic import FakeAnthropic
from tests.agents.harness import require_agent, run_ours

pytestmark = pytest.mark.agents

BLOCK_START = "<!-- retention:"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    require_agent(claude_code_installed(), "Claude Code")
    return claude_template(tmp_path_factory)


@pytest.fixture(scope="module")
def anthropic():
    with FakeAnthropic(summary="FAKE-CLAUDE-SUMMARY of the session", lifetime=900) as fa:
        yield fa


def test_history_names_what_claudes_summary_lost_and_repair_is_resumed_and_undone(
    template, tmp_path, anthropic
):
    runner, sid = template
    claude = runner.clone(tmp_path / "claude", anthropic)
    claude.compact(sid)
    path = claude.transcript(sid)
    code, out, err = run_ours(["history", str(path), "--json"], claude.root)
    assert code == 0, err
    (entry,) = json.loads(out)["compactions"]
    assert entry["by"] == "Claude Code" and entry["trigger"] == "manual"
    assert entry["latest_agent_compaction"] is True and entry["messages_replaced"] > 0
    lost = {m["item"] for m in entry["retention"]["missing"]}
    assert "Please run echo hello" in lost and "Now run echo world" in lost

    before = path.read_bytes()
    code, out, err = run_ours(["compact", str(path), "--repair", "--yes"], claude.root)
    assert code == 0, err
    assert BLOCK_START in out and "Please run echo hello" in out  # shown before it is written
    repaired = path.read_bytes()
    old, new = before.split(b"\n"), repaired.split(b"\n")
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert len(changed) == 1 and json.loads(new[changed[0]])["isCompactSummary"] is True

    body = claude.resume(sid, "Where were we?")
    first = json.dumps(body["messages"][0]["content"], ensure_ascii=False)
    assert "FAKE-CLAUDE-SUMMARY" in first and BLOCK_START in first
    assert "Please run echo hello" in first

    # the resume appended turns: restore is refused without --force, then gives the bytes back
    code, _, err = run_ours(["restore", str(path), "--yes"], claude.root)
    assert code != 0 and "changed since" in err
    code, out, err = run_ours(["restore", str(path), "--yes", "--force"], claude.root)
    assert code == 0, err
    assert path.read_bytes() == before

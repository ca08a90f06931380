"""The ledger and repair with the real Codex 0.171.0 (issue 33 items 3 and 4).

Codex compacts automatically (its auto-compaction limit set very low, offline), with
the fake model's one-line summary, which loses some of the session's specifics.
``history`` lists the compaction and what its summary lost; ``compact --repair``
rewrites the ``compacted`` record with the anchor block (its ``message`` and the
summary item of its ``replacement_history``), every other byte unchanged; Codex,
resumed, sends the repaired summary; ``restore --force`` gives the rollout's bytes back.
"""

from __future__ import annotations

import json

import pytest

from tests.agents.codex_runner import Codex, codex_installed
from tests.agents.fake_model import text_turn, tool_turn
from tests.agents.fake_responses import FakeResponses
from tests.agents.harness import require_agent, run_ours

pytestmark = pytest.mark.agents

BLOCK_START = "<!-- retention:"
COMMAND = "cat /tmp/no-such-dir/build.log"


#: A session whose specifics are in the tool calls, not in the user's words (Codex
#: carries the user's messages over verbatim, so what a summary can lose is the rest).
CONVERSATION = [
    ("Check the build log please", [tool_turn(COMMAND),
                                    text_turn("The build log is missing.")]),
    ("Thanks, that is all.", [text_turn("You are welcome.")]),
]  # fmt: skip


def test_history_and_repair_of_codexs_own_compaction(tmp_path):
    require_agent(codex_installed(), "Codex")
    with FakeResponses(lifetime=600) as fake:
        codex = Codex(tmp_path / "codex", fake)
        sid = codex.create_session(CONVERSATION)
        codex.compact(sid, "Where were we?")
        path = codex.rollout_file(sid)
        code, out, err = run_ours(["history", str(path), "--json"], codex.root)
        assert code == 0, err
        (entry,) = json.loads(out)["compactions"]
        assert entry["by"] == "Codex" and entry["latest_agent_compaction"] is True
        lost = {m["item"] for m in entry["retention"]["missing"]}
        assert COMMAND in lost  # the summary ("FAKE SUMMARY") names no command

        before = path.read_bytes()
        code, out, err = run_ours(["compact", str(path), "--repair", "--yes"], codex.root)
        assert code == 0, err
        assert BLOCK_START in out and COMMAND in out  # shown before it is written
        old, new = before.split(b"\n"), path.read_bytes().split(b"\n")
        changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
        assert len(changed) == 1 and json.loads(new[changed[0]])["type"] == "compacted"

        body = codex.resume(sid, "And now?")
        sent = json.dumps(body["input"], ensure_ascii=False)
        assert BLOCK_START in sent and COMMAND in sent

        code, _, err = run_ours(["restore", str(path), "--yes", "--force"], codex.root)
        assert code == 0, err
        assert path.read_bytes() == before

"""Kimi Code 2.1.0's own compaction in the ledger, and its context meter against the
counts it recorded (issue 33 items 2 and 3).

The real kimi-code writes a session (four turns, two shell calls) against the fake
model, compacts it itself (``/compact``), and is resumed once more. ``history`` lists
that compaction as kimi-code's (its trigger, its token figures, the messages it
replaced and the user messages it carried over), judged against the history it had
before; the meter, read in full and from the journal's end, is kimi-code's last count
against its own rule on the configuration it ran with.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.formats import load_session
from kimi_compact_tui.formats.base import SessionInfo
from kimi_compact_tui.formats.meter import meter_of
from tests.agents.fake_model import FakeModel
from tests.agents.harness import KimiCode, kimi_code_installed, require_agent

pytestmark = pytest.mark.agents

SUMMARY = "FAKE SUMMARY: the user asked some questions."


def records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_bytes().split(b"\n") if x.strip()]


def test_kimi_codes_own_compaction_in_the_ledger_and_its_meter(cli_main, tmp_path):
    require_agent(kimi_code_installed(), "kimi-code")
    with FakeModel(summary=SUMMARY, lifetime=600) as fake:
        agent = KimiCode(tmp_path / "agent", fake)
        sid = agent.create_session()
        agent.compact(sid)
        wire = agent.wire_file(sid)
        compacted = wire.read_bytes()
        agent.resume(sid, "Where were we?")
    got = records(wire)
    (begin,) = [r for r in got if r["type"] == "full_compaction.begin"]
    (apply,) = [r for r in got if r["type"] == "context.apply_compaction"]

    # the ledger, on the file as kimi-code left it right after its compaction
    before = tmp_path / "before" / "agents" / "main" / "wire.jsonl"
    before.parent.mkdir(parents=True)
    before.write_bytes(compacted)
    for path in (wire, before):
        res = cli_main("history", path, "--json")
        assert res.code == 0, res.stderr
        (entry,) = json.loads(res.stdout)["compactions"]
        assert entry["by"] == "kimi-code" and entry["trigger"] == begin["source"] == "manual"
        assert (entry["tokens_before"], entry["tokens_after"]) == (
            apply["tokensBefore"], apply["tokensAfter"])  # fmt: skip
        assert entry["messages_replaced"] + entry["messages_kept"] == apply["compactedCount"]
        assert entry["messages_kept"] == apply["keptUserMessageCount"]
        assert entry["latest_agent_compaction"] is True
        ret = entry["retention"]
        assert ret is not None and ret["total"] >= ret["kept"]
        # whatever it lost is named, and is not in the summary kimi-code resumes
        for item in ret["missing"]:
            assert item["item"] not in apply["contextSummary"]
    text = cli_main("history", wire).stdout
    assert "kimi-code (manual)" in text and "[latest of the agent's own]" in text

    # the meter: kimi-code's last count, against its rule on the config it ran with
    counts = [r for r in got if r["type"].startswith("token_counting.")]
    session = load_session(wire)
    env = {"HOME": "/nonexistent-home"}
    full = session.format.context_usage(session, env)
    cheap, _ = meter_of(SessionInfo(ref=session.ref, format="kimi-code"), env)
    assert cheap == full
    assert (full.used_tokens, full.tokens_source) == (counts[-1]["tokens"], "recorded")
    assert (full.window, full.compacts_at) == (200_000, 150_000)  # max_context_size 200000
    assert str(agent.state / "config.toml") in full.window_source


class Configured(KimiCode):
    """kimi-code with the model's window (and ``[loop_control]``) set per run."""

    window = 200_000
    loop = ""

    def write_config(self) -> None:
        super().write_config()
        path = self.state / "config.toml"
        text = path.read_text().replace(
            "max_context_size = 200000", f"max_context_size = {self.window}"
        )
        path.write_text(text + self.loop)


def auto_compactions(wire: Path) -> int:
    return sum(
        1 for r in records(wire) if r["type"] == "full_compaction.begin" and r["source"] == "auto"
    )


def test_kimi_code_compacts_on_its_own_where_the_meter_says_it_will(tmp_path):
    """The session's recorded count stays; only kimi-code's window changes. Where the
    meter puts the threshold just under that count, kimi-code's next turn begins with
    its own automatic compaction; where it puts it 2,000 tokens over, it does not. Both
    of kimi-code's rules are tried: the window less reserved_context_size, and
    compaction_trigger_ratio of the window."""
    require_agent(kimi_code_installed(), "kimi-code")
    with FakeModel(summary=SUMMARY, lifetime=900) as fake:
        template = Configured(tmp_path / "template", fake)
        sid = template.create_session()
        used = [r for r in records(template.wire_file(sid))
                if r["type"].startswith("token_counting.")][-1]["tokens"]  # fmt: skip
        reserved = 50_000
        cases = [  # (window, [loop_control], kimi-code compacts)
            (used + reserved - 10, "", True),
            (used + reserved + 2_000, "", False),
            (int((used - 10) / 0.6), "[loop_control]\ncompaction_trigger_ratio = 0.6\n", True),
            (int((used + 2_000) / 0.6), "[loop_control]\ncompaction_trigger_ratio = 0.6\n", False),
        ]
        for n, (window, loop, compacts) in enumerate(cases):
            agent = template.clone(tmp_path / f"case-{n}", fake)
            assert isinstance(agent, Configured)
            agent.window, agent.loop = window, loop
            agent.write_config()
            wire = agent.wire_file(sid)
            session = load_session(wire)
            env = {"HOME": "/nonexistent-home"}
            meter = session.format.context_usage(session, env)
            assert (meter.used_tokens, meter.window) == (used, window)
            assert meter.compacts_at is not None
            assert (meter.used_tokens >= meter.compacts_at) is compacts, (window, meter.describe())
            assert auto_compactions(wire) == 0
            agent.resume(sid, "One more question.")
            # (in a small window it may compact again: its count after one is its estimate)
            assert (auto_compactions(wire) > 0) is compacts, (window, loop, meter.describe())

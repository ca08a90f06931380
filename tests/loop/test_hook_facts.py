"""Each agent's hook facts are its format's to declare (``formats/<agent>/hook.py``,
listed by ``formats/gate.py``); the gate (``hooks/``) is handed them and names
no agent. The hook, run before every compaction, loads its own agent's facts and
no format, and still lets the compaction through on any error."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from kimi_compact_tui.agenthook import AgentHook, NoHook
from kimi_compact_tui.commands.hook import description
from kimi_compact_tui.formats import gate, registry
from kimi_compact_tui.hooks.pending import GateState
from kimi_compact_tui.hooks.run import run_hook
from tests import procs

ROOT = Path(__file__).resolve().parents[2]


def _package(where: str) -> str:
    """``kimi_compact_tui.formats.codex`` of ``kimi_compact_tui.formats.codex.hook``."""
    return where.rsplit(".", 1)[0]


def test_every_agent_declares_its_hook_in_its_own_format_package():
    """Every specific format's agent is listed once, with a hook or with the
    reason it has none, declared in that format's own package."""
    packages = {
        _package(entry.where.split(":")[0]): fmt
        for entry, fmt in zip(registry.FORMATS.entries, registry.FORMATS, strict=True)
        if not fmt.fallback
    }
    listed = {**gate.HOOKS, **gate.NO_HOOK}
    assert len(listed) == len(gate.HOOKS) + len(gate.NO_HOOK)
    assert {_package(where) for where in listed.values()} == set(packages)
    for name, where in listed.items():
        fmt = packages[_package(where)]
        assert name in (fmt.name, fmt.agent)  # the agent's own word
        declared = __import__(where, fromlist=["HOOK"]).HOOK
        assert declared.name == name
        assert isinstance(declared, AgentHook if name in gate.HOOKS else NoHook)
    for name in gate.NO_HOOK:
        try:
            gate.agent_named(name)
        except ValueError as exc:
            assert str(exc).startswith(f"{name} has no compaction hook")
        else:
            raise AssertionError(f"{name} has a hook")


def test_the_help_says_which_agents_are_held_from_their_facts():
    text = description(gate.hooks())
    held = [h.label for h in gate.hooks() if h.blocking]
    blind = [h.label for h in gate.hooks() if not h.blocking]
    assert held and blind
    start = text.split(" that holds", 1)[0]
    assert all(label in start for label in held)
    assert not any(label in start for label in blind)
    assert all(label in text.split(" cannot be stopped", 1)[0] for label in blind)


def test_an_error_finding_the_agents_facts_lets_the_compaction_through(tmp_path):
    def broken(name: str) -> AgentHook | None:
        raise OSError(f"{name}: the facts cannot be read")

    state = GateState(tmp_path / "gate")
    stdin = json.dumps({"session_id": "s1", "trigger": "auto"}).encode()
    out = run_hook("claude-code", broken, stdin, state=state)
    assert (out.exit_code, out.stdout, out.stderr, out.held) == (0, "", "", False)
    log = (tmp_path / "gate" / "hook.log").read_text(encoding="utf-8")
    assert "hook run claude-code: OSError: claude-code: the facts cannot be read" in log
    assert "the compaction went through" in log
    assert state.pending() == []


def test_an_agent_without_a_hook_lets_the_compaction_through(tmp_path):
    state = GateState(tmp_path / "gate")
    stdin = json.dumps({"session_id": "s1"}).encode()
    for name in (*gate.NO_HOOK, "no-such-agent"):
        out = run_hook(name, gate.hook_of, stdin, state=state)
        assert (out.exit_code, out.held) == (0, False)
    log = (tmp_path / "gate" / "hook.log").read_text(encoding="utf-8")
    assert "unknown agent 'no-such-agent'" in log
    assert all(f"unknown agent {name!r}" in log for name in gate.NO_HOOK)


# Runs the command line as the agent does and prints, at exit, the package's
# format modules it loaded.
WRAPPER = """
import atexit, json, sys
def report():
    loaded = sorted(m for m in sys.modules if m.startswith("kimi_compact_tui.formats."))
    sys.stderr.write("\\nLOADED " + json.dumps(loaded) + "\\n")
atexit.register(report)
sys.argv = ["kimi-compact-tui", "hook", "run", sys.argv[1]]
from kimi_compact_tui.cli import main
raise SystemExit(main())
"""


def test_the_hook_loads_its_own_agents_facts_and_no_format(tmp_path):
    transcript = tmp_path / "t.jsonl"
    usage = {"input_tokens": 900, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    record = {"type": "assistant", "message": {"role": "assistant", "usage": usage}}
    transcript.write_text(json.dumps(record) + "\n", encoding="utf-8")
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"session_id": "s1", "transcript_path": str(transcript)}))
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"), HOME=str(tmp_path))
    with open(payload, "rb") as stdin:
        done = procs.run(
            [sys.executable, "-c", WRAPPER, "claude-code"],
            stdin=stdin,
            capture_output=True,
            text=True,
            cwd=str(ROOT),
            env=env,
            timeout=60,
        )
    assert done.returncode == 2, done.stderr  # held, Claude Code's way
    line = next(x for x in done.stderr.split("\n") if x.startswith("LOADED "))
    loaded = set(json.loads(line[len("LOADED ") :]))
    assert "kimi_compact_tui.formats.claude_code.hook" in loaded
    others = {where for name, where in gate.HOOKS.items() if name != "claude-code"}
    assert not others & loaded  # no other agent's facts
    assert not {m for m in loaded if m.endswith(".plugin")}  # no format
    pending = GateState(tmp_path / "state" / "kimi-compact-tui" / "gate").pending()
    assert [(p.agent, p.tokens) for p in pending] == [("claude-code", 900)]

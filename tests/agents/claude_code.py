"""The REAL Claude Code (2.1.197) offline against a FakeAnthropic on 127.0.0.1.

The runner owns a root folder with its own HOME and ``CLAUDE_CONFIG_DIR`` (its
state folder), and shares a work folder with its clones (the transcript's folder
name is made from the work folder), so one agent-written session can be copied
and changed several ways side by side::

    claude = ClaudeCode(tmp_path / "claude", fake)
    sid = claude.create_session()        # several turns, two real Bash tool calls
    body = claude.resume(sid, "next?")   # the /v1/messages body of that turn
    claude.compact(sid)                  # Claude Code's own /compact

Every subprocess runs through ``run_bounded`` (own session, killed by group,
timeout). ``--dangerously-skip-permissions`` is refused as root, so Bash is
allowed with ``--allowedTools=Bash``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.agents.fake_anthropic import FakeAnthropic
from tests.agents.harness import AGENTS_DIR, FAKE_KEY, AgentRun, _Runner

CLAUDE_CODE_VERSION = "2.1.197"
CLAUDE_EXE = AGENTS_DIR / f"claude-code-{CLAUDE_CODE_VERSION}" / "node_modules" / ".bin" / "claude"


def claude_code_installed() -> bool:
    return CLAUDE_EXE.exists() and os.access(CLAUDE_EXE, os.X_OK)


class ClaudeCode(_Runner):
    """Claude Code in ``-p`` mode; its state folder is ``CLAUDE_CONFIG_DIR``."""

    state_name = "claude-config"

    def env(self) -> dict[str, str]:
        env = super().env()
        env.update(
            CLAUDE_CONFIG_DIR=str(self.state),
            ANTHROPIC_BASE_URL=self.fake.base_url,
            ANTHROPIC_API_KEY=FAKE_KEY,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )
        return env

    def run(self, prompt: str, session_id: str | None = None, timeout: float = 90.0) -> AgentRun:
        args = [str(CLAUDE_EXE), "-p", "--output-format", "json", "--allowedTools=Bash"]
        if session_id:
            args += ["--resume", session_id]
        args.append(prompt)
        return self._run(args, self.env(), timeout)

    def session_id_of(self, run: AgentRun) -> str:
        try:
            return str(json.loads(run.stdout)["session_id"])
        except (ValueError, KeyError, TypeError):
            raise AssertionError(
                f"no session id in Claude Code's output: {run.stdout[-2000:]}"
            ) from None

    def transcript(self, session_id: str) -> Path:
        found = [p for p in self.state.glob(f"projects/*/{session_id}.jsonl") if p.is_file()]
        assert len(found) == 1, f"transcript {session_id} not found under {self.state}"
        return found[0]

    def compact(self, session_id: str, timeout: float = 90.0) -> AgentRun:
        """Claude Code's own /compact (the fake answers its summary request)."""
        return self.run("/compact", session_id, timeout).check()

    def turn_body(self, run: AgentRun, prompt: str) -> dict[str, Any]:
        """The body of the request that carried ``prompt`` as the new turn."""
        for req in run.requests:
            body = req.json
            if req.kind == "turn" and any(prompt in json.dumps(m) for m in body["messages"]):
                return body
        raise AssertionError(f"no turn request with {prompt!r}; stderr: {run.stderr[-2000:]}")

    def resume(self, session_id: str, prompt: str, reply: str = "Resumed.") -> dict[str, Any]:
        from tests.agents.fake_model import text_turn

        self.fake.script(text_turn(reply))
        run = self.run(prompt, session_id).check()
        return self.turn_body(run, prompt)


def claude_template(tmp_path_factory: Any, conversation: Any = None) -> tuple[ClaudeCode, str]:
    """A session Claude Code itself wrote, made ONCE per test run (xdist workers share
    it through a lock). Returns a runner with no fake model and the session id: work
    on ``runner.clone(root, fake)`` copies only."""
    base = Path(tmp_path_factory.getbasetemp())
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / "agent-template-claude-code"
    marker = root / "session-id"
    with open(base / "agent-template-claude-code.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.is_file():
            shutil.rmtree(root, ignore_errors=True)
            with FakeAnthropic(lifetime=180) as fake:
                runner = ClaudeCode(root / "runner", fake)
                sid = runner.create_session(conversation)
            marker.write_text(sid, encoding="utf-8")
    return ClaudeCode(root / "runner", None), marker.read_text(encoding="utf-8")  # type: ignore[arg-type]

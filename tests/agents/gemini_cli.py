"""The REAL Gemini CLI (0.61.0, on the machine's Node) offline against a FakeGemini on
127.0.0.1.

The runner owns a root folder with its own HOME and ``GEMINI_CLI_HOME`` (its state
folder: Gemini CLI keeps ``.gemini/`` there), and shares a work folder with its
clones (Gemini CLI names the project folder after the work folder), so one
agent-written session can be copied and changed several ways side by side::

    gemini = GeminiCli(tmp_path / "gemini", fake)
    sid = gemini.create_session()          # several turns, two real shell tool calls
    body = gemini.resume(sid, "next?")     # the streamGenerateContent body of that turn
    gemini.compress(sid, "go on")          # a turn with Gemini CLI's own compression

``settings.json`` is written before every run: API-key auth, no usage statistics,
telemetry or update checks, ``general.sessionRetention`` off unless a run asks for
it, and a compression threshold (``model.compressionThreshold``) only for
:meth:`compress`. Every subprocess runs through ``run_bounded`` (own session, killed
by group, timeout).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.agents.fake_gemini import FakeGemini
from tests.agents.fake_model import text_turn
from tests.agents.harness import AGENTS_DIR, FAKE_KEY, AgentRun, _Runner

GEMINI_CLI_VERSION = "0.61.0"
GEMINI_EXE = AGENTS_DIR / f"gemini-cli-{GEMINI_CLI_VERSION}" / "node_modules" / ".bin" / "gemini"
MODEL = "gemini-2.5-flash"  # a fixed model: no routing call before each turn
RUN_TIMEOUT = 120.0


def gemini_cli_installed() -> bool:
    return GEMINI_EXE.exists() and os.access(GEMINI_EXE, os.X_OK) and shutil.which("node")


class GeminiCli(_Runner):
    """Gemini CLI in ``-p`` mode with ``--yolo`` (its shell tool runs unasked)."""

    state_name = "gemini-home"

    @property
    def gemini_dir(self) -> Path:
        return self.state / ".gemini"

    def env(self) -> dict[str, str]:
        env = super().env()
        env.update(
            GEMINI_CLI_HOME=str(self.state),
            GEMINI_API_KEY=FAKE_KEY,
            GOOGLE_GEMINI_BASE_URL=self.fake.base_url,
            GEMINI_CLI_TRUST_WORKSPACE="true",
        )
        return env

    def write_settings(self, retention: bool = False, threshold: float | None = None) -> None:
        general: dict[str, Any] = {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
            "sessionRetention": {"enabled": retention},
        }
        if retention:
            general["sessionRetention"]["maxAge"] = "30d"
        settings: dict[str, Any] = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": general,
        }
        if threshold is not None:
            settings["model"] = {"compressionThreshold": threshold}
        self.gemini_dir.mkdir(parents=True, exist_ok=True)
        (self.gemini_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")

    def run(
        self,
        prompt: str,
        session_id: str | None = None,
        timeout: float = RUN_TIMEOUT,
        *,
        retention: bool = False,
        threshold: float | None = None,
    ) -> AgentRun:
        self.write_settings(retention, threshold)
        args = [str(GEMINI_EXE), "-p", prompt, "--yolo", "-o", "json", "-m", MODEL]
        if session_id:
            args += ["--resume", session_id]
        return self._run(args, self.env(), timeout)

    def session_id_of(self, run: AgentRun) -> str:
        try:
            return str(json.loads(run.stdout)["session_id"])
        except (ValueError, KeyError, TypeError):
            raise AssertionError(
                f"no session id in Gemini CLI's output: {run.stdout[-2000:]}"
            ) from None

    def chats(self) -> Path:
        found = [p for p in self.gemini_dir.glob("tmp/*/chats") if p.is_dir()]
        assert len(found) == 1, f"one chats folder expected under {self.gemini_dir}: {found}"
        return found[0]

    def session_file(self, session_id: str) -> Path:
        """The file of this session holding its conversation (a resume in another
        minute also leaves a file holding only a header and Gemini CLI's context)."""
        files = sorted(self.chats().glob(f"session-*-{session_id[:8]}.jsonl"))
        found = [p for p in files if b'"type":"gemini"' in p.read_bytes()]
        assert len(found) == 1, f"session {session_id}: {files}"
        return found[0]

    def turn_body(self, run: AgentRun, prompt: str) -> dict[str, Any]:
        """The body of the request that carried ``prompt`` as the new turn."""
        for req in run.requests:
            body = req.json
            if req.kind == "turn" and prompt in json.dumps(body["contents"][-1]):
                return body
        raise AssertionError(f"no turn request with {prompt!r}; stderr: {run.stderr[-2000:]}")

    def resume(self, session_id: str, prompt: str, reply: str = "Resumed.", **kw: Any) -> dict:
        self.fake.script(text_turn(reply))
        run = self.run(prompt, session_id, **kw).check()
        return self.turn_body(run, prompt)

    def compress(self, session_id: str, prompt: str, reply: str = "Compressed.") -> AgentRun:
        """A turn with a compression threshold so low that Gemini CLI compresses first."""
        self.fake.script(text_turn(reply))
        return self.run(prompt, session_id, threshold=1e-6).check()


def gemini_template(tmp_path_factory: Any, conversation: Any = None) -> tuple[GeminiCli, str]:
    """A session Gemini CLI itself wrote, made ONCE per test run (xdist workers share it
    through a lock). Returns a runner with no fake model and the session id: work on
    ``runner.clone(root, fake)`` copies only."""
    base = Path(tmp_path_factory.getbasetemp())
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / "agent-template-gemini-cli"
    marker = root / "session-id"
    with open(base / "agent-template-gemini-cli.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.is_file():
            shutil.rmtree(root, ignore_errors=True)
            with FakeGemini(lifetime=300) as fake:
                runner = GeminiCli(root / "runner", fake)  # type: ignore[arg-type]
                sid = runner.create_session(conversation)
            marker.write_text(sid, encoding="utf-8")
    return GeminiCli(root / "runner", None), marker.read_text(encoding="utf-8")  # type: ignore[arg-type]

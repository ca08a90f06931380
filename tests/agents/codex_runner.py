"""Run the REAL Codex CLI (0.171.0, ``@openai/codex``) offline against a fake Responses API.

``.ci/install-agents`` installs it under the agents cache folder. A runner owns a root
folder with its own HOME, ``CODEX_HOME`` (its state: config, rollouts, SQLite
projections) and work folder, and talks only to a :class:`FakeResponses` on 127.0.0.1.

    codex = Codex(tmp_path / "codex", fake)
    sid = codex.create_session()        # several turns, two real shell tool calls
    body = codex.resume(sid, "next?")   # the /v1/responses body Codex sent for that turn
    codex.compact(sid, "next?")         # a resume that makes Codex compact first

Every subprocess runs through ``run_bounded`` (own session, killed by group on timeout).
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agents.fake_model import FakeRequest, Turn, text_turn, tool_turn
from tests.agents.fake_responses import FakeResponses
from tests.agents.harness import AGENTS_DIR, RUN_TIMEOUT, copy_state, run_bounded

CODEX_VERSION = "0.171.0"
CODEX_EXE = AGENTS_DIR / f"codex-{CODEX_VERSION}" / "node_modules" / ".bin" / "codex"
FAKE_ENV_KEY = "FAKE_API_KEY"

# (prompt, scripted replies). Two turns run Codex's real shell tool.
CONVERSATION: list[tuple[str, list[Turn]]] = [
    ("Please run echo hello", [tool_turn("echo hello"), text_turn("It printed hello.")]),
    ("What is two plus two?", [text_turn("Two plus two is four.")]),
    ("Now run echo world", [tool_turn("echo world"), text_turn("It printed world.")]),
    (
        "Merci ! Quelle est la capitale de la France ? (首都)",
        [text_turn("Paris — 巴黎.")],
    ),
]


def codex_installed() -> bool:
    return CODEX_EXE.exists() and os.access(CODEX_EXE, os.X_OK)


@dataclass
class CodexRun:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    requests: list[FakeRequest]

    def check(self) -> CodexRun:
        if self.returncode != 0:
            raise AssertionError(
                f"codex exited {self.returncode}: {self.args[-4:]}\n"
                f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-3000:]}"
            )
        return self

    def turn_bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.kind == "turn"]

    def compaction_bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.kind == "compaction"]


class Codex:
    def __init__(self, root: Path, fake: FakeResponses | None, workdir: Path | None = None):
        self.root = Path(root)
        self.fake = fake
        self.home = self.root / "home"
        self.state = self.root / "codex-home"
        self.workdir = Path(workdir) if workdir else self.root / "work"
        for d in (self.home, self.state, self.workdir):
            d.mkdir(parents=True, exist_ok=True)

    def env(self) -> dict[str, str]:
        """A small fixed environment: nothing of the caller's keys or settings leaks in."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "CODEX_HOME": str(self.state),
            FAKE_ENV_KEY: "sk-fake-codex-key",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
        }

    def write_config(self) -> None:
        assert self.fake is not None, "this runner has no fake model (clone it with one)"
        (self.state / "config.toml").write_text(
            'model = "fake-model"\n'
            'model_provider = "fake"\n'
            "check_for_update_on_startup = false\n\n"
            "[model_providers.fake]\n"
            'name = "fake"\n'
            f'base_url = "{self.fake.base_url}"\n'
            'wire_api = "responses"\n'
            f'env_key = "{FAKE_ENV_KEY}"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n\n"
            "[analytics]\nenabled = false\n\n"
            "[feedback]\nenabled = false\n",
            encoding="utf-8",
        )

    def run(
        self,
        prompt: str,
        session_id: str | None = None,
        overrides: tuple[str, ...] = (),
        timeout: float = RUN_TIMEOUT,
        images: tuple[Path, ...] = (),
    ) -> CodexRun:
        assert self.fake is not None
        self.write_config()
        args = [str(CODEX_EXE), "exec", "--skip-git-repo-check"]
        args += ["--dangerously-bypass-approvals-and-sandbox"]
        for o in overrides:
            args += ["-c", o]
        if session_id:
            args += ["resume", session_id]
        for image in images:
            args += ["-i", str(image)]
        args += ["--", prompt]
        start = len(self.fake.requests)
        code, out, err = run_bounded(args, self.env(), self.workdir, timeout)
        return CodexRun(args, code, out, err, list(self.fake.requests[start:]))

    def create_session(self, conversation: list[tuple[str, list[Turn]]] | None = None) -> str:
        assert self.fake is not None
        sid: str | None = None
        for prompt, turns in conversation or CONVERSATION:
            self.fake.script(*turns)
            self.run(prompt, sid).check()
            sid = sid or self.latest_session_id()
        assert self.fake.pending() == 0, "codex did not use every scripted turn"
        assert sid is not None
        return sid

    def resume(self, session_id: str, prompt: str, reply: str = "Resumed.") -> dict[str, Any]:
        """Resume with a new prompt; return the body of the first request of that turn."""
        assert self.fake is not None
        self.fake.script(text_turn(reply))
        run = self.run(prompt, session_id).check()
        bodies = run.turn_bodies()
        assert bodies, f"no request on resume; stderr: {run.stderr[-2000:]}"
        return bodies[0]

    def compact(self, session_id: str, prompt: str, reply: str = "Resumed.") -> CodexRun:
        """A resume that makes Codex run its own compaction first (its auto-compaction
        limit set very low)."""
        assert self.fake is not None
        self.fake.script(text_turn(reply))
        run = self.run(prompt, session_id, ("model_auto_compact_token_limit=50",)).check()
        assert run.compaction_bodies(), f"codex did not compact: {run.stderr[-2000:]}"
        return run

    def rollouts(self) -> list[Path]:
        return sorted(self.state.glob("sessions/*/*/*/rollout-*.jsonl"))

    def latest_session_id(self) -> str:
        files = sorted(self.rollouts(), key=lambda p: p.stat().st_mtime_ns)
        assert files, f"codex wrote no rollout under {self.state}"
        return session_id_of(files[-1])

    def rollout_file(self, session_id: str) -> Path:
        found = [p for p in self.rollouts() if p.stem.endswith(session_id)]
        assert len(found) == 1, f"rollout of {session_id} not found under {self.state}"
        return found[0]

    def clone(self, fake: FakeResponses) -> Codex:
        """A runner on a copy of this one's state (same work folder), beside it. The copy's
        path has the same length as this one's, so the paths rewritten inside the rollout
        keep every byte offset Codex recorded in its SQLite projections (which name the
        rollout by absolute path: rewritten too)."""
        for _ in range(100):
            root = self.root.parent / f"c{secrets.token_hex(8)}"[: len(self.root.name)]
            if len(root.name) == len(self.root.name) and not root.exists():
                break
        else:  # pragma: no cover
            raise AssertionError(f"no free clone folder beside {self.root}")
        root.mkdir()
        other = Codex(root, fake, workdir=self.workdir)
        shutil.rmtree(other.state)
        copy_state(self.state, other.state)
        for db in other.state.glob("*.sqlite"):
            _rewrite_paths(db, str(self.state), str(other.state))
        return other


def session_id_of(rollout: Path) -> str:
    """``rollout-<YYYY-MM-DDTHH-MM-SS>-<id>.jsonl`` names its session."""
    return rollout.stem[len("rollout-") + 20 :]


def _rewrite_paths(db: Path, old: str, new: str) -> None:
    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute("select name from sqlite_master where type='table'")]
        for table in tables:
            cols = [r[1] for r in con.execute(f'pragma table_info("{table}")') if "TEXT" in r[2]]
            for col in cols:
                con.execute(
                    f'update "{table}" set "{col}" = replace("{col}", ?, ?) '
                    f'where instr("{col}", ?) > 0',
                    (old, new, old),
                )
        con.commit()
    finally:
        con.close()


def shared_codex_template(tmp_path_factory: Any, name: str = "codex") -> tuple[Codex, str]:
    """A Codex session made ONCE per test run (workers share it through a lock).
    Returns a runner with no fake model and the session id: work on clones only."""
    base = Path(tmp_path_factory.getbasetemp())
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / f"agent-template-{name}"
    marker = root / "session-id"  # clones are made beside the runner folder, in ``root``
    with open(base / f"agent-template-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.is_file():
            shutil.rmtree(root, ignore_errors=True)
            with FakeResponses(lifetime=180) as fm:
                sid = Codex(root / "runner", fm).create_session()
            marker.write_text(sid, encoding="utf-8")
    return Codex(root / "runner", None), marker.read_text(encoding="utf-8")

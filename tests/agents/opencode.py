"""The REAL opencode (npm ``opencode-ai`` 1.18.33) offline against a fake Chat Completions
model on 127.0.0.1.

``.ci/install-agents`` installs it under the agents cache folder, with a config folder
template (``config-template/``: ``package.json``, the ``package-lock.json`` npm made for
it, ``node_modules/``) so opencode does not install its plugin package when it starts.

The runner owns a root folder with its own ``HOME`` and XDG folders, and a work folder
that is ``PWD`` (opencode takes its project from ``$PWD``). Its config
(``$XDG_CONFIG_HOME/opencode/opencode.json``) has one provider, ``fake``, whose ``npm``
is ``@ai-sdk/openai-compatible`` and whose ``baseURL`` is the fake: opencode then
streams Chat Completions and runs its ``bash`` tool for real::

    with FakeOpencodeModel() as fake:
        oc = Opencode(tmp_path / "oc", fake)
        sid = oc.create_session()            # several turns, two real bash tool calls
        body = oc.resume(sid, "next?")       # the chat request body opencode sent
        oc.compact(sid)                      # opencode's own compaction (opencode serve)
        oc.db                                # $XDG_DATA_HOME/opencode/opencode.db

Every child process goes through ``tests/procs.py`` (own session, killed by group,
with a timeout).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests import procs
from tests.agents.fake_model import FakeModel, FakeRequest, Turn, text_turn, tool_turn
from tests.agents.harness import AGENTS_DIR

OPENCODE_VERSION = "1.18.33"
OPENCODE_DIR = AGENTS_DIR / f"opencode-{OPENCODE_VERSION}"
OPENCODE_EXE = OPENCODE_DIR / "node_modules" / ".bin" / "opencode"
CONFIG_TEMPLATE = OPENCODE_DIR / "config-template"
PROVIDER = "fake"
MODEL = "fake-model"
RUN_TIMEOUT = 180.0
FAKE_KEY = "sk-fake-opencode"

# opencode's switches for what it would fetch or install by itself (the offline recipe).
DISABLED = (
    "AUTOUPDATE",
    "MODELS_FETCH",
    "LSP_DOWNLOAD",
    "DEFAULT_PLUGINS",
    "SHARE",
    "CLAUDE_CODE",
    "EXTERNAL_SKILLS",
)

# The default conversation: (prompt, scripted replies). Two turns run the real bash tool.
DEFAULT_CONVERSATION: list[tuple[str, list[Turn]]] = [
    (
        "MARK-U1 please run echo",
        [tool_turn("echo MARK-T1", text="Running MARK-T1."), text_turn("MARK-A1 done")],
    ),
    ("MARK-U2 what is 2+2", [text_turn("MARK-A2 four", reasoning="MARK-R2 adding")]),
    (
        "MARK-U3 again",
        [tool_turn("echo MARK-T3", text="Running MARK-T3."), text_turn("MARK-A3 done")],
    ),
    ("MARK-U4 thanks", [text_turn("MARK-A4 you are welcome")]),
]


def opencode_installed() -> bool:
    return (
        OPENCODE_EXE.exists()
        and os.access(OPENCODE_EXE, os.X_OK)
        and (CONFIG_TEMPLATE / "package-lock.json").is_file()
    )


def _system_text(body: dict[str, Any]) -> str:
    return "\n".join(
        m["content"]
        for m in body.get("messages") or []
        if m.get("role") == "system" and isinstance(m.get("content"), str)
    )


class FakeOpencodeModel(FakeModel):
    """The Chat Completions fake (:class:`FakeModel`) with opencode's kinds of requests:

    - ``side``: the session title (no tools; its system prompt speaks of a title),
      answered with :attr:`title`, no scripted turn taken;
    - ``compaction``: opencode's compaction agent (no tools; its system prompt speaks of
      summarizing: :attr:`compaction_marker`), answered with the summary;
    - ``side`` too: any other request offering no tools;
    - ``turn``: a request offering tools takes the next scripted turn.
    """

    # Word stems of the two tool-less requests' system prompts (facts read from them).
    compaction_marker = "summar"
    title_marker = "title"

    def __init__(self, summary: str = "FAKE OPENCODE SUMMARY", **kw: Any) -> None:
        kw.setdefault("model", MODEL)
        kw.setdefault("lifetime", 900.0)
        super().__init__(summary, **kw)
        self.title = "Fake title"

    def _next_turn(self, body: dict[str, Any]) -> tuple[str, Turn]:
        if body.get("tools"):
            return "turn", self.next_turn()
        opening = _system_text(body).lower()[:200]
        if self.compaction_marker in opening and self.title_marker not in opening:
            return "compaction", Turn(text=self.summary)
        return "side", Turn(text=self.title)


@dataclass
class OpencodeRun:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    requests: list[FakeRequest]

    def check(self) -> OpencodeRun:
        if self.returncode != 0:
            raise AssertionError(
                f"opencode exited {self.returncode}: {self.args[-3:]}\n"
                f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"
            )
        return self

    def events(self) -> list[dict[str, Any]]:
        """The JSON events of ``--format json`` (one a line)."""
        out = []
        for line in self.stdout.split("\n"):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
        return out

    def session_id(self) -> str:
        for event in self.events():
            sid = event.get("sessionID")
            if isinstance(sid, str):
                return sid
        raise AssertionError(f"no session id in opencode's output: {self.stdout[-2000:]}")

    def turn_bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.kind == "turn"]


class Opencode:
    def __init__(
        self,
        root: Path,
        fake: FakeOpencodeModel,
        workdir: Path | None = None,
        tail_turns: int | None = 2,
    ) -> None:
        self.root = Path(root)
        self.fake = fake
        # opencode's own compaction keeps the last ``tail_turns`` turns (its
        # ``compaction.tail_turns``); None: its default, a token budget.
        self.tail_turns = tail_turns
        self.home = self.root / "home"
        self.workdir = Path(workdir) if workdir else self.root / "work"
        self.config_home = self.home / ".config"
        self.data_home = self.home / ".local" / "share"
        for d in (
            self.config_home,
            self.data_home,
            self.home / ".cache",
            self.home / ".local" / "state",
            self.workdir,
        ):
            d.mkdir(parents=True, exist_ok=True)
        self._prepare_config()

    # --- files ------------------------------------------------------------------------------
    @property
    def config_dir(self) -> Path:
        return self.config_home / "opencode"

    @property
    def db(self) -> Path:
        """The database of every session ($XDG_DATA_HOME/opencode/opencode.db)."""
        return self.data_home / "opencode" / "opencode.db"

    def _prepare_config(self) -> None:
        """The config folder with the installed plugin package's lock and modules (so
        opencode does not run an install when it starts) and the config."""
        self.config_dir.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            if (CONFIG_TEMPLATE / name).is_file():
                shutil.copyfile(CONFIG_TEMPLATE / name, self.config_dir / name)
        modules = self.config_dir / "node_modules"
        if not modules.exists() and not modules.is_symlink():
            if (CONFIG_TEMPLATE / "node_modules").is_dir():
                modules.symlink_to(CONFIG_TEMPLATE / "node_modules")
            else:
                modules.mkdir()

    def write_config(self) -> None:
        provider = {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": self.fake.base_url, "apiKey": FAKE_KEY},
            "models": {MODEL: {"name": "Fake model"}},
        }
        config: dict[str, Any] = {
            "model": f"{PROVIDER}/{MODEL}",
            "provider": {PROVIDER: provider},
            "autoupdate": False,
            "share": "disabled",
        }
        if self.tail_turns is not None:
            config["compaction"] = {"tail_turns": self.tail_turns}
        (self.config_dir / "opencode.json").write_text(json.dumps(config), encoding="utf-8")

    def env(self) -> dict[str, str]:
        """A small, fixed environment: nothing of the caller's keys or settings leaks in."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.config_home),
            "XDG_DATA_HOME": str(self.data_home),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "PWD": str(self.workdir),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
        }
        env.update({f"OPENCODE_DISABLE_{name}": "1" for name in DISABLED})
        return env

    # --- turns ------------------------------------------------------------------------------
    def run(
        self, prompt: str, session_id: str | None = None, timeout: float = RUN_TIMEOUT
    ) -> OpencodeRun:
        """One turn: ``opencode run --format json [--session ID] PROMPT``."""
        self.write_config()
        args = [str(OPENCODE_EXE), "run", "--format", "json"]
        if session_id:
            args += ["--session", session_id]
        args.append(prompt)
        start = len(self.fake.requests)
        done = procs.run(
            args, env=self.env(), cwd=self.workdir, capture_output=True, timeout=timeout
        )
        return OpencodeRun(
            args,
            done.returncode,
            done.stdout.decode("utf-8", "replace"),
            done.stderr.decode("utf-8", "replace"),
            list(self.fake.requests[start:]),
        )

    def create_session(self, conversation: list[tuple[str, list[Turn]]] | None = None) -> str:
        """A session of several turns (real bash tool calls included); returns its id."""
        sid: str | None = None
        for prompt, turns in conversation or DEFAULT_CONVERSATION:
            self.fake.script(*turns)
            run = self.run(prompt, sid).check()
            sid = sid or run.session_id()
        assert self.fake.pending() == 0, "opencode did not use every scripted turn"
        assert sid is not None
        return sid

    def resume(self, session_id: str, prompt: str, reply: str = "Resumed.") -> dict[str, Any]:
        """Resume with a new prompt; the body of the first chat request of that turn:
        exactly what opencode sends the model on resume."""
        self.fake.script(text_turn(reply))
        run = self.run(prompt, session_id).check()
        bodies = run.turn_bodies()
        assert bodies, f"no chat request on resume; stderr: {run.stderr[-2000:]}"
        return bodies[0]

    # --- opencode serve ---------------------------------------------------------------------
    @contextmanager
    def serve(self, timeout: float = 60.0) -> Iterator[str]:
        """``opencode serve`` on a free port of 127.0.0.1; yields its base URL once it
        answers, and stops it (its whole process group) on the way out."""
        self.write_config()
        port = _free_port()
        args = [str(OPENCODE_EXE), "serve", "--hostname", "127.0.0.1", "--port", str(port)]
        log = open(self.root / "serve.log", "wb")
        try:
            with procs.spawned(
                args, env=self.env(), cwd=self.workdir, stdout=log, stderr=log
            ) as proc:
                url = f"http://127.0.0.1:{port}"
                deadline = time.monotonic() + timeout
                while True:
                    if proc.poll() is not None:
                        raise AssertionError(f"opencode serve exited: {self._serve_log()}")
                    try:
                        httpx.get(f"{url}/session", timeout=2.0)
                        break
                    except httpx.HTTPError:
                        if time.monotonic() > deadline:
                            raise AssertionError(
                                f"opencode serve not up in {timeout:.0f} s: {self._serve_log()}"
                            ) from None
                        time.sleep(0.1)
                yield url
        finally:
            log.close()

    def clone(self, root: Path, fake: FakeOpencodeModel) -> Opencode:
        """A runner on a copy of this one's HOME (its database with its ``-wal`` and
        ``-shm``, copied while no opencode runs) and the same work folder (opencode keys
        its project by the folder), talking to ``fake``."""
        shutil.copytree(self.home, Path(root) / "home", symlinks=True)
        return Opencode(root, fake, workdir=self.workdir, tail_turns=self.tail_turns)

    def _serve_log(self) -> str:
        path = self.root / "serve.log"
        return path.read_text(errors="replace")[-2000:] if path.is_file() else ""

    def compact(self, session_id: str, timeout: float = RUN_TIMEOUT) -> FakeRequest:
        """opencode's own compaction: ``POST /session/<id>/summarize`` on ``opencode serve``
        (``opencode run`` has none). Returns the compaction request it sent the model."""
        start = len(self.fake.requests)
        with self.serve() as url:
            reply = httpx.post(
                f"{url}/session/{session_id}/summarize",
                json={"providerID": PROVIDER, "modelID": MODEL, "auto": False},
                timeout=timeout,
            )
            assert reply.status_code == 200, f"summarize: {reply.status_code} {reply.text[:500]}"
        asked = [r for r in self.fake.requests[start:] if r.kind == "compaction"]
        assert len(asked) == 1, [r.kind for r in self.fake.requests[start:]]
        return asked[0]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])

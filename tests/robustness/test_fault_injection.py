"""Provider fault injection against the full write path of ``compact``.

The real console entry runs in a subprocess against the loopback server; each
scripted fault (HTTP errors, a cut stream, a length-truncated summary, an
in-band error, bad JSON, a stall past the read timeout, a refused connection,
an empty summary, Ctrl-C mid-stream) must leave everything as it was: the
source bytes unchanged, no rotation/backup, no temporary file, no audit line,
no output file — checked on the whole session folder, the working folder and
HOME. Both ``--in-place --yes`` and ``--output FILE`` are exercised; a
complete stream is the control (it does write), so the checks can fail.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import generate_messages, write_kimi, write_openai_json
from kimi_compact_tui import cli
from tests import procs
from tests.bad_inputs import snapshot
from tests.loopback_server import LoopbackServer, Reply, ollama_ndjson, openai_sse

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60
SUMMARY = [
    "## Summary\n",
    "The user and the assistant fixed the parser ",
    "and added tests for empty input.\n",
]


def _compact_options() -> set[str]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if getattr(a, "choices", None))
    return set(sub.choices["compact"]._option_string_actions)


HAS_IN_PLACE = {"--in-place", "--yes"} <= _compact_options()
MODES = [
    pytest.param(
        "in-place",
        marks=pytest.mark.skipif(
            not HAS_IN_PLACE, reason="compact --in-place/--yes not available yet"
        ),
    ),
    "output",
]


# ----------------------------------------------------------------------------- fixtures


class World:
    """A session folder, a config, a working folder and HOME, all watched."""

    def __init__(self, tmp: Path, server: LoopbackServer, fmt: str) -> None:
        self.tmp = tmp
        self.server = server
        self.folder = tmp / "session"
        messages = generate_messages(60, seed=7)
        if fmt == "kimi":
            self.session = write_kimi(self.folder / "context.jsonl", messages)
        else:
            self.session = write_openai_json(self.folder / "chat.json", messages)
        self.outdir = tmp / "out"
        self.outdir.mkdir()
        self.output = self.outdir / "compacted.jsonl"
        self.cwd = tmp / "cwd"
        self.cwd.mkdir()
        self.home = tmp / "home"
        self.home.mkdir()
        self.config = tmp / "config" / "config.yaml"
        self.config.parent.mkdir()

    def write_config(self, **provider: Any) -> None:
        block = {
            "kind": "openai",
            "base_url": self.server.base_url,
            "model": "fault-model",
            # Generous: a loaded machine must not turn a good stream into a timeout
            # (the stall cases set their own read_timeout).
            "connect_timeout": 10.0,
            "read_timeout": 10.0,
            "max_retries": 2,
            "retry_base_delay": 0.01,
            "retry_cap": 0.05,
        }
        block.update(provider)
        if block["kind"] == "ollama":
            block["base_url"] = self.server.root_url
        self.config.write_text(json.dumps({"provider": block}))  # JSON is YAML

    def watched(self) -> dict[str, str | None]:
        return snapshot([self.folder, self.outdir, self.cwd, self.home])

    def argv(self, mode: str) -> list[str]:
        argv = ["compact", str(self.session), "--config", str(self.config)]
        if mode == "in-place":
            argv += ["--in-place", "--yes"]
        else:
            argv += ["--output", str(self.output)]
        return argv

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KIMI_COMPACT_TUI")}
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_STATE_HOME=str(self.home / ".state"),
            XDG_DATA_HOME=str(self.home / ".data"),
            KCT_TEST_API_KEY="sk-test",
            OPENAI_API_KEY="sk-test",
            PYTHONPATH=str(ROOT),
        )
        return env

    def popen(self, mode: str) -> subprocess.Popen[str]:
        """The CLI in a session of its own (stop it with ``procs.stop``): the test's
        SIGINT reaches it alone, and nothing it does to its group reaches pytest."""
        return procs.popen(
            [sys.executable, "-m", "kimi_compact_tui", *self.argv(mode)],
            cwd=self.cwd,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(self, mode: str) -> subprocess.CompletedProcess[str]:
        return procs.run(
            [sys.executable, "-m", "kimi_compact_tui", *self.argv(mode)],
            cwd=self.cwd,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )


@pytest.fixture
def world(tmp_path: Path) -> Any:
    with LoopbackServer(lifetime=900) as server:
        yield World(tmp_path, server, "kimi")


@pytest.fixture
def json_world(tmp_path: Path) -> Any:
    with LoopbackServer(lifetime=900) as server:
        yield World(tmp_path, server, "openai-json")


def run_in_process(
    world: World,
    mode: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[int, str, str]:
    """``cli.main`` in this process (the same code path as the console entry,
    without an interpreter start per case)."""
    for key in [k for k in os.environ if k.startswith("KIMI_COMPACT_TUI")]:
        monkeypatch.delenv(key)
    for key, value in world.env().items():
        if key != "PYTHONPATH":
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(world.cwd)
    capsys.readouterr()
    rc = cli.main(world.argv(mode))
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


# ----------------------------------------------------------------------------- faults

Script = Callable[[World], list[Reply]]


def _http_errors(status: int) -> Script:
    def script(w: World) -> list[Reply]:
        return [
            Reply.error(status, {"error": {"message": f"injected {status}"}}, retry_after="0")
            for _ in range(4)
        ]

    return script


FAULTS: dict[str, tuple[dict[str, Any], Script]] = {
    "http_500_every_try": ({}, _http_errors(500)),
    "http_503_every_try": ({}, _http_errors(503)),
    "http_401": ({}, _http_errors(401)),
    "http_429_every_try": ({}, _http_errors(429)),
    "cut_mid_stream": ({}, lambda w: [openai_sse(SUMMARY, cut=True, cut_after=2)]),
    "cut_mid_stream_chunked": (
        {},
        lambda w: [openai_sse(SUMMARY, cut=True, cut_after=3, chunked=True)],
    ),
    "cut_inside_an_event": (
        {},
        lambda w: [openai_sse(SUMMARY, split_every=7, cut=True, cut_after=20)],
    ),
    "no_done_no_finish": ({}, lambda w: [openai_sse(SUMMARY, finish=None, done=False)]),
    "length_truncated": ({}, lambda w: [openai_sse(SUMMARY, finish="length")]),
    "inband_error_event": (
        {},
        lambda w: [
            openai_sse(
                SUMMARY[:1],
                extra_events=[{"error": {"message": "injected overload", "type": "server"}}],
                finish=None,
            )
        ],
    ),
    "bad_json_event": ({}, lambda w: [openai_sse(SUMMARY[:1], extra_events=["{not json"])]),
    "empty_summary": ({}, lambda w: [openai_sse([])]),
    "stall_past_read_timeout": (
        {"read_timeout": 0.5, "max_retries": 1},
        lambda w: [openai_sse(SUMMARY, stall=5.0, stall_after=2)],
    ),
    "html_error_page": (
        {},
        lambda w: [
            Reply(
                status=502,
                headers={"Content-Type": "text/html"},
                pieces=[b"<html>bad gateway</html>"],
            )
            for _ in range(4)
        ],
    ),
    "ollama_cut_before_done": (
        {"kind": "ollama"},
        lambda w: [ollama_ndjson(SUMMARY, done=False, cut=True)],
    ),
    "ollama_length": ({"kind": "ollama"}, lambda w: [ollama_ndjson(SUMMARY, done_reason="length")]),
}


def assert_nothing_written(world: World, before: dict[str, str | None], source: bytes) -> None:
    after = world.watched()
    new = sorted(set(after) - set(before))
    gone = sorted(set(before) - set(after))
    changed = sorted(k for k in before if k in after and before[k] != after[k])
    assert not new, f"files appeared: {new}"
    assert not gone, f"files vanished: {gone}"
    assert not changed, f"files changed: {changed}"
    assert world.session.read_bytes() == source
    assert not world.output.exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_writes_nothing(
    fault: str,
    mode: str,
    world: World,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    overrides, script = FAULTS[fault]
    world.write_config(**overrides)
    world.server.script(script(world))
    source = world.session.read_bytes()
    before = world.watched()
    rc, _out, err = run_in_process(world, mode, capsys, monkeypatch)
    assert rc == 3, (rc, err)
    assert err.strip(), "the failure was not reported"
    assert_nothing_written(world, before, source)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fault", ["http_500_every_try", "cut_mid_stream", "length_truncated"])
def test_fault_writes_nothing_openai_json(
    fault: str,
    mode: str,
    json_world: World,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    overrides, script = FAULTS[fault]
    json_world.write_config(**overrides)
    json_world.server.script(script(json_world))
    source = json_world.session.read_bytes()
    before = json_world.watched()
    rc, _out, err = run_in_process(json_world, mode, capsys, monkeypatch)
    assert rc == 3, (rc, err)
    assert_nothing_written(json_world, before, source)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fault", ["http_500_every_try", "cut_inside_an_event"])
def test_fault_console_entry_writes_nothing(fault: str, mode: str, world: World) -> None:
    overrides, script = FAULTS[fault]
    world.write_config(**overrides)
    world.server.script(script(world))
    source = world.session.read_bytes()
    before = world.watched()
    proc = world.run(mode)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 3, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("kimi-compact-tui: error: "), proc.stderr
    assert_nothing_written(world, before, source)


def test_connection_refused_writes_nothing(
    world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    world.write_config(base_url="http://127.0.0.1:9/v1", max_retries=1)
    source = world.session.read_bytes()
    before = world.watched()
    for mode in (["in-place"] if HAS_IN_PLACE else []) + ["output"]:
        rc, _out, err = run_in_process(world, mode, capsys, monkeypatch)
        assert rc == 3, err
        assert_nothing_written(world, before, source)


def _read_until(stream: Any, marker: str, timeout: float) -> str:
    seen: list[str] = []
    done = threading.Event()

    def reader() -> None:
        while True:
            ch = stream.read(1)
            if not ch:
                break
            seen.append(ch)
            if marker in "".join(seen[-len(marker) :]):
                done.set()
        done.set()

    threading.Thread(target=reader, daemon=True).start()
    done.wait(timeout)
    return "".join(seen)


@pytest.mark.parametrize("mode", MODES)
def test_ctrl_c_mid_stream_writes_nothing(mode: str, world: World) -> None:
    world.write_config(read_timeout=30.0)
    # The first chunk arrives, then the server goes quiet for a long time.
    world.server.script([openai_sse(SUMMARY, stall=20.0, stall_after=2)])
    source = world.session.read_bytes()
    before = world.watched()
    proc = world.popen(mode)
    try:
        seen = _read_until(proc.stdout, "## Summary", timeout=TIMEOUT)
        assert "## Summary" in seen, "the first chunk never reached stdout"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        procs.stop(proc)
    assert "Traceback" not in err, err
    assert proc.returncode == 130, (proc.returncode, err)
    assert_nothing_written(world, before, source)


@pytest.mark.parametrize("mode", MODES)
def test_control_a_complete_stream_does_write(mode: str, world: World) -> None:
    """The same harness sees a write when there is one."""
    world.write_config()
    world.server.script([openai_sse(SUMMARY)])
    source = world.session.read_bytes()
    before = world.watched()
    proc = world.run(mode)
    assert proc.returncode == 0, proc.stderr
    assert world.watched() != before
    if mode == "in-place":
        assert world.session.read_bytes() != source
    else:
        assert world.output.is_file()
        assert world.session.read_bytes() == source

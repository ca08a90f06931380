"""`serve` refuses before anything is served: a busy port,
an address that does not resolve and a session that cannot be opened are one
line on stderr with exit 2, no traceback, and nothing ever listens. Real
subprocesses and a real socket holding the port."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import procs
from tests.cli.test_serve import ROOT, SAMPLE, free_port


def run_serve(
    *args: str, port: int, watch: bool = True, timeout: float = 30
) -> tuple[int | None, str]:
    """``serve ARGS --port PORT``: (exit status, stderr) once it exits, or
    (None, why) as soon as something answers on the port (it served; with
    ``watch``) or at the time limit."""
    cmd = [sys.executable, "-m", "kimi_compact_tui", "serve", *args, "--port", str(port)]
    proc = procs.popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None:
            if watch:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    return None, "it served"
                except OSError:
                    pass
            if time.monotonic() > deadline:
                return None, "still running"
            time.sleep(0.05)
        return proc.returncode, proc.stderr.read()
    finally:
        procs.stop(proc)


def assert_refused(code: int | None, stderr: str, *needles: str) -> None:
    assert code == 2, stderr
    assert stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr and "serving" not in stderr, stderr
    for needle in needles:
        assert needle in stderr, stderr


def test_a_busy_port_is_one_line_and_nothing_is_served():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        # The holder answers on the port: wait for the exit only.
        code, stderr = run_serve(str(SAMPLE), "--provider", "offline", port=port, watch=False)
    assert_refused(code, stderr, str(port), "in use")


@pytest.mark.parametrize(
    "host, needles",
    [("no-such-host.invalid", ("no-such-host.invalid", "--host")), ("", ("--host", "empty"))],
    ids=["unresolvable", "empty"],
)
def test_a_host_that_cannot_be_served_on_is_one_line(host, needles):
    port = free_port()
    code, stderr = run_serve(str(SAMPLE), "--provider", "offline", "--host", host, port=port)
    assert_refused(code, stderr, *needles)


@pytest.mark.parametrize("what", ["missing", "folder", "not-a-session"])
def test_a_session_that_cannot_be_opened_is_refused_before_serving(tmp_path: Path, what):
    if what == "missing":
        session = tmp_path / "nonexist.json"
    elif what == "folder":
        session = tmp_path / "empty-folder"
        session.mkdir()
    else:
        session = tmp_path / "notes.json"
        session.write_text('{"hello": "world"}\n', encoding="utf-8")
    port = free_port()
    code, stderr = run_serve(str(session), "--provider", "offline", port=port)
    assert_refused(code, stderr, str(session))


def test_a_session_id_is_served_as_the_session_it_names(tmp_path, monkeypatch):
    """Each browser tab runs `tui SESSION` from the server's folder: an id must
    reach it as the session it names, not as a file name in that folder."""
    import shlex

    from kimi_compact_tui.commands.options import ProviderOptions
    from kimi_compact_tui.commands.serve import app_command
    from kimi_compact_tui.commands.tui import AppOptions
    from tests.factories.kimi_code import conversation
    from tests.formats.test_kimi_code_by_id import make_home

    root, folder = make_home(tmp_path, conversation().bytes())
    monkeypatch.setenv("KIMI_CODE_HOME", str(root))
    args = AppOptions(session="session_x1", provider=ProviderOptions("offline"))
    argv = shlex.split(app_command(args))
    assert str(folder) in argv, argv

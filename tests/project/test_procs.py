"""Every process a test starts is in a session of its own (``tests/procs.py``), so a
child that signals its process group (an agent on exit, a shell tool's clean-up)
cannot reach pytest or an xdist worker; and nothing else in tests/ or the package
starts a process another way."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import procs
from tests.tui_support import wait_for

ROOT = Path(__file__).resolve().parents[2]

# A child that interrupts its whole process group, as some agents do on exit.
INTERRUPTS_ITS_GROUP = (
    "import os, signal, sys\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "print(os.getpgid(0), os.getsid(0))\n"
    "os.kill(0, signal.SIGINT)\n"
)


@pytest.fixture
def sigint_seen():
    """Record a SIGINT to this process instead of raising KeyboardInterrupt."""
    seen: list[int] = []
    try:
        old = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    except ValueError:
        pytest.skip("not in the main thread: cannot watch for SIGINT here")
    yield seen
    signal.signal(signal.SIGINT, old)


def test_a_child_interrupting_its_group_does_not_reach_the_test(sigint_seen):
    done = procs.run([sys.executable, "-c", INTERRUPTS_ITS_GROUP], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    pgid, sid = (int(x) for x in done.stdout.split())
    assert pgid != os.getpgid(0) and sid != os.getsid(0)
    assert sigint_seen == []


def test_spawned_kills_what_the_child_left_in_its_group(tmp_path):
    pidfile = tmp_path / "grandchild"
    code = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
    )
    with procs.spawned(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout.readline() == "ready\n"
        grandchild = int(pidfile.read_text())
        os.kill(grandchild, 0)  # alive
    wait_for(lambda: dead(grandchild), "the grandchild killed with its group")


def dead(pid: int) -> bool:
    """Gone, or a zombie nobody has reaped yet (its parent is gone too)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def test_a_child_reads_nothing_unless_given_stdin():
    """With ``-s`` in a terminal, pytest leaves its stdin on that terminal: a child
    must not wait on it (nor take a person's keys). Fails there on a child that
    inherits stdin; pytest's default capture and xdist give it /dev/null anyway."""
    read = [sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"]
    assert procs.run(read, capture_output=True, text=True, timeout=30).stdout == "''\n"
    given = procs.run(read, input="typed", capture_output=True, text=True, timeout=30)
    assert given.stdout == "'typed'\n"


def test_run_kills_the_group_on_a_timeout():
    with pytest.raises(subprocess.TimeoutExpired):
        procs.run([sys.executable, "-c", "import time; time.sleep(600)"], timeout=0.5)


# ----------------------------------------------------------------------------- the rule

SPAWNERS = {
    ("subprocess", "run"),
    ("subprocess", "Popen"),
    ("subprocess", "call"),
    ("subprocess", "check_call"),
    ("subprocess", "check_output"),
    ("subprocess", "getoutput"),
    ("subprocess", "getstatusoutput"),
    ("os", "system"),
    ("os", "popen"),
    ("os", "spawnv"),
    ("os", "spawnvp"),
    ("os", "posix_spawn"),
    ("os", "posix_spawnp"),
    ("asyncio", "create_subprocess_exec"),
    ("asyncio", "create_subprocess_shell"),
    ("pty", "spawn"),
}


def spawns(path: Path) -> list[tuple[int, str, bool]]:
    """(line, call, has start_new_session=True) for each process-starting call."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        if isinstance(owner, ast.Name) and (owner.id, node.func.attr) in SPAWNERS:
            new_session = any(
                k.arg == "start_new_session"
                and isinstance(k.value, ast.Constant)
                and k.value.value is True
                for k in node.keywords
            )
            found.append((node.lineno, f"{owner.id}.{node.func.attr}", new_session))
    return found


def test_tests_start_processes_only_through_procs():
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {call}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.name != "procs.py"
        for line, call, new_session in spawns(path)
        if not new_session
    ]
    assert offenders == [], "start these through tests/procs.py:\n" + "\n".join(offenders)


def test_the_package_starts_processes_in_a_session_of_their_own():
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {call}"
        for path in sorted((ROOT / "kimi_compact_tui").rglob("*.py"))
        for line, call, new_session in spawns(path)
        if not new_session
    ]
    assert offenders == [], "pass start_new_session=True:\n" + "\n".join(offenders)

"""Child processes for the tests, each in a session of its own.

A pytest-xdist worker shares its process group with the pytest master and the other
workers. A child left in that group can signal all of them: an agent that interrupts
its process group on exit, a shell tool's clean-up, a Ctrl+C meant for the child. So
every process a test starts goes through this module: it gets its own session
(``start_new_session=True``; its process group id is its pid), and when the test is
done with it, its whole group is killed, so nothing it started outlives the test.

``tests/project/test_procs.py`` checks that no test starts a process any other way.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

DEFAULT_TIMEOUT = 120.0


def popen(args: Sequence[str], **kwargs: Any) -> subprocess.Popen:
    """``subprocess.Popen`` in a new session, reading nothing unless given ``stdin``
    (run in a terminal without -n, pytest's stdin is the terminal). Stop it with
    :func:`stop` (or use :func:`spawned`)."""
    if kwargs.pop("start_new_session", True) is not True:
        raise ValueError("tests start every child in a session of its own")
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen(list(args), start_new_session=True, **kwargs)


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Signal the child's whole process group (it leads it: see :func:`popen`)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """Kill the child's group, reap the child and close its pipes."""
    kill_group(proc)
    try:
        proc.communicate(timeout=timeout)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        proc.kill()
        proc.wait(timeout=timeout)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass


@contextmanager
def spawned(args: Sequence[str], **kwargs: Any) -> Iterator[subprocess.Popen]:
    """``with spawned([...], stdout=PIPE) as proc:``: the group is killed on the way out."""
    proc = popen(args, **kwargs)
    try:
        yield proc
    finally:
        stop(proc)


def run(
    args: Sequence[str],
    *,
    input: str | bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    capture_output: bool = False,
    **kwargs: Any,
) -> subprocess.CompletedProcess:
    """``subprocess.run`` in a new session: on a timeout the whole group is killed and
    ``subprocess.TimeoutExpired`` raised; after a normal exit, whatever the child left
    running in its group is killed too."""
    if capture_output:
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
    if input is not None:
        if kwargs.get("stdin") not in (None, subprocess.PIPE):
            raise ValueError("stdin and input both given")
        kwargs["stdin"] = subprocess.PIPE
    elif kwargs.get("stdin") is None:
        kwargs["stdin"] = subprocess.DEVNULL
    proc = popen(args, **kwargs)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        stop(proc)
        raise subprocess.TimeoutExpired(proc.args, timeout, exc.output, exc.stderr) from None
    except BaseException:
        stop(proc)
        raise
    kill_group(proc)  # leftovers (its group id stays reserved while a member lives)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

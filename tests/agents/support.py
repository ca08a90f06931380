"""Process helpers for the agent tests: bounded subprocesses, copying agent state, and
our own CLI run as a user runs it. Re-exported by tests/agents/harness.py."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

RUN_TIMEOUT = 300.0  # a deadline for a hung agent, not a speed check: loaded machines are slow
FAKE_KEY = "sk-fake-test-key"


def run_bounded(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = RUN_TIMEOUT
) -> tuple[int, str, str]:
    """Run a command with no stdin, in a session of its own (an agent that signals its
    process group cannot reach pytest); kill its whole process group if it runs over,
    and what it left running in that group when it ends."""
    proc = subprocess.Popen(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
        raise AssertionError(
            f"timed out after {timeout:.0f} s: {args}\nstderr: {err.decode(errors='replace')[-2000:]}"
        ) from None
    finally:
        try:  # background processes the agent left (a shell tool's, a helper's)
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def copy_state(src: Path, dst: Path) -> None:
    """Copy an agent state folder, rewriting its absolute path inside text files
    (kimi-code records session folders as absolute paths)."""
    shutil.copytree(src, dst)
    old, new = str(src).encode(), str(dst).encode()
    for path in dst.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".toml"):
            data = path.read_bytes()
            if old in data:
                path.write_bytes(data.replace(old, new))


OUR_CLI = Path(sys.executable).with_name("kimi-compact-tui")


def run_ours(
    args: list[str],
    root: Path,
    extra_env: dict[str, str] | None = None,
    timeout: float = RUN_TIMEOUT,
) -> tuple[int, str, str]:
    """Run our own CLI as a user would (the installed ``kimi-compact-tui`` script), with a
    HOME and config folder of its own under ``root``, so no user config or kimi-cli prompt
    on this machine is found unless ``extra_env`` points at it. The key for the fake
    model is in OPENAI_API_KEY."""
    home = Path(root) / "our-home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "OPENAI_API_KEY": FAKE_KEY,
    }
    env.update(extra_env or {})
    exe = [str(OUR_CLI)] if OUR_CLI.is_file() else [sys.executable, "-m", "kimi_compact_tui"]
    return run_bounded(exe + args, env, Path(root), timeout)

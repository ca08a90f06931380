"""kimi-cli's own compaction results for our cases, made at test time.

``upstream_results(payload, workdir)`` runs tests/agents/kimi_cli_driver.py with the Python
of the kimi-cli venv that ``.ci/install-agents`` made (all cases in one process), bounded by
a timeout and in its own session, so a hung import is killed with its group.
``shared_upstream_results`` does that once per test run (pytest-xdist workers share the
answer through a lock in the run's base temp folder, as ``harness.shared_template`` does).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.agents.harness import KIMI_CLI_EXE

DRIVER = Path(__file__).with_name("kimi_cli_driver.py")
KIMI_CLI_PYTHON = KIMI_CLI_EXE.with_name("python")
DRIVER_TIMEOUT = 120.0


def upstream_results(
    payload: dict[str, Any], workdir: Path, timeout: float = DRIVER_TIMEOUT
) -> dict[str, Any]:
    """kimi-cli's answer for ``payload`` (see the driver's docstring). ``workdir`` is the
    driver's HOME and kimi-cli share folder, so nothing of this machine's is read."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir),
        "KIMI_SHARE_DIR": str(workdir / "kimi-share"),
        "LANG": "C.UTF-8",
    }
    # -I: nothing from the environment or the current folder on sys.path; -B: no .pyc
    # written into the agent's venv.
    args = [str(KIMI_CLI_PYTHON), "-I", "-B", str(DRIVER)]
    proc = subprocess.Popen(
        args,
        cwd=workdir,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(json.dumps(payload).encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)
        raise AssertionError(f"kimi-cli driver timed out after {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise AssertionError(
            f"kimi-cli driver exited {proc.returncode}:\n{err.decode(errors='replace')[-3000:]}"
        )
    return json.loads(out.decode("utf-8"))


def shared_upstream_results(tmp_path_factory: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """``upstream_results`` made once per test run, whichever worker asks first."""
    base = Path(tmp_path_factory.getbasetemp())
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    cache = base / "kimi-cli-upstream.json"
    request = json.dumps(payload, sort_keys=True)
    with open(base / "kimi-cli-upstream.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if cache.is_file():
            cached = json.loads(cache.read_text(encoding="utf-8"))
            if cached["request"] == request:
                return cached["answer"]
        answer = upstream_results(payload, base / "kimi-cli-driver")
        tmp = cache.with_suffix(".tmp")
        tmp.write_text(json.dumps({"request": request, "answer": answer}), encoding="utf-8")
        tmp.replace(cache)
    return answer

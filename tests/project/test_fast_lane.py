"""The fast lane (``pytest -m "not agents and not slow"``, CONTRIBUTING.md): the markers
are registered, ``agents`` comes with the folder tests/agents/, and every name
tests/conftest.py marks ``slow`` is a test that exists, so a move or a rename cannot
quietly put a slow test back into the fast lane."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from tests import conftest, procs

ROOT = Path(__file__).resolve().parents[2]


def collected(*args: str) -> list[str]:
    """The test ids ``pytest --collect-only`` selects with ``args``, run from the root."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = procs.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.split("\n") if "::" in line]


def test_the_markers_are_registered():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    markers = pyproject["tool"]["pytest"]["ini_options"]["markers"]
    assert {m.split(":")[0] for m in markers} >= {"agents", "slow"}


def test_every_slow_name_is_a_test_that_exists():
    missing = []
    for name in conftest.SLOW:
        file, _, test = name.partition("::")
        path = conftest.TESTS / file
        if not path.is_file():
            missing.append(name)
            continue
        if test:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            defined = {
                node.name
                for node in ast.walk(tree)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            if test not in defined:
                missing.append(name)
    assert missing == [], "tests/conftest.py SLOW names what is not there: " + ", ".join(missing)


def test_the_fast_lane_leaves_out_the_agents_folder_and_the_slow_tests():
    agents = sorted(
        p.relative_to(ROOT).as_posix() for p in (ROOT / "tests" / "agents").glob("test_*.py")
    )
    slow_file = "tests/" + next(n for n in conftest.SLOW if "::" not in n)
    slow_test = "tests/" + next(n for n in conftest.SLOW if "::" in n)
    fast_file = "tests/project/test_fast_lane.py"
    files = [agents[0], slow_file, slow_test.partition("::")[0], fast_file]

    every = collected(*files)
    fast = collected("-m", "not agents and not slow", *files)

    assert any(t.startswith(agents[0] + "::") for t in every)
    assert not any(t.startswith("tests/agents/") for t in fast)
    assert any(t.startswith(slow_file + "::") for t in every)
    assert not any(t.startswith(slow_file + "::") for t in fast)
    slow_ids = [t for t in every if t.split("[")[0] == slow_test]
    assert slow_ids and not set(slow_ids) & set(fast)
    # The rest of the file with the one slow test stays in the lane.
    named = {"tests/" + n for n in conftest.SLOW}
    rest = [
        t
        for t in every
        if t.startswith(slow_test.partition("::")[0]) and t.split("[")[0] not in named
    ]
    assert rest and set(rest) <= set(fast)
    assert any(t.startswith(fast_file + "::") for t in fast)

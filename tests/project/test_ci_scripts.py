"""``.ci/pytest-logged`` (the last step of ``.ci/run``) keeps pytest's log and ends a
failed run with the failing tests' names, also when an xdist worker dies mid-test or
pytest itself stops; ``scripts/failed_tests.py`` reads them from a log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import procs

ROOT = Path(__file__).resolve().parents[2]
LOGGED = ROOT / ".ci" / "pytest-logged"
FAILED_TESTS = ROOT / "scripts" / "failed_tests.py"

DEMO = """
import os


def test_passes():
    assert True


def test_fails():
    assert 1 == 2


def test_kills_its_worker():
    os._exit(3)  # the xdist worker dies in the middle of this test
"""


def run_logged(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_PYTHON"] = sys.executable
    return procs.run(
        ["bash", str(LOGGED), str(project / "logs"), "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def failure_section(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("pytest exited"))
    return [line.strip() for line in lines[start + 1 :]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "test_demo.py").write_text(DEMO, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return tmp_path


def test_a_failed_run_names_the_failed_test_and_the_one_a_dead_worker_ran(project):
    done = run_logged(project, "-n", "2", "test_demo.py")
    assert done.returncode != 0
    named = failure_section(done.stdout)
    assert "test_demo.py::test_fails" in named
    assert "test_demo.py::test_kills_its_worker" in named
    assert "test_demo.py::test_passes" not in named
    log = (project / "logs" / "pytest.log").read_text()
    assert "test_fails" in log and (project / "logs" / "pytest.xml").is_file()


def test_a_passing_run_exits_0_with_its_log(project):
    done = run_logged(project, "test_demo.py::test_passes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pytest exited" not in done.stdout
    assert "1 passed" in (project / "logs" / "pytest.log").read_text()


def test_a_run_that_names_no_test_shows_the_end_of_its_log(project):
    (project / "conftest.py").write_text("raise RuntimeError('conftest broke')\n")
    done = run_logged(project, "test_demo.py")
    assert done.returncode != 0
    section = "\n".join(failure_section(done.stdout))
    assert "no failing test named" in section and "conftest broke" in section


def test_failed_tests_reads_names_from_a_log(tmp_path):
    log = tmp_path / "pytest.log"
    log.write_text(
        "..F.\n"
        "[gw1] node down: Not properly terminated\n"
        "worker 'gw1' crashed while running 'tests/test_x.py::test_y[a-b]'\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_z.py::test_w - AssertionError: boom\n"
        "ERROR tests/test_e.py::test_f - RuntimeError\n"
        "2 failed, 10 passed, 1 error in 3.00s\n",
        encoding="utf-8",
    )
    done = procs.run([sys.executable, str(FAILED_TESTS), str(log)], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout.split() == [
        "tests/test_x.py::test_y[a-b]",
        "tests/test_z.py::test_w",
        "tests/test_e.py::test_f",
    ]
    log.write_text("....\n4 passed, 1 skipped, 2 warnings in 1.20s (0:00:01)\n")
    done = procs.run([sys.executable, str(FAILED_TESTS), str(log)], capture_output=True)
    assert done.returncode == 0 and done.stdout == b""

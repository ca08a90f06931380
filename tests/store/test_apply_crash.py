"""Crash safety: kill a writer process at many points of an apply and check
that the session is the old file or the new file, whole, and that the backup
exists (complete) whenever the new file is there."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.formats import dump_session, load_session
from kimi_compact_tui.job import build_compacted_session
from tests import procs
from tests.factories import write_kimi, write_openai_json

ROOT = Path(__file__).resolve().parents[2]
WRITER = ROOT / "tests" / "crash_writer.py"
PY = str(ROOT / ".venv" / "bin" / "python")
if not Path(PY).exists():
    PY = sys.executable
SUMMARY = "<current_focus>\ncrash test summary\n</current_focus>"
STEPS = ("checked", "backup-temp-written", "backup-linked", "backup-done", "replaced", "audited")


def turns(n: int) -> list[dict]:
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        out.append(
            {"role": role, "content": f"message {i}: " + ("lorem ipsum dolor sit amet, 数据 " * 8)}
        )
    return out


def make_kimi(folder: Path, n: int) -> Path:
    path = write_kimi(folder, turns(n), system_prompt="You are a test agent.", usage=123456)
    path.chmod(0o640)
    return path


def make_openai(folder: Path, n: int) -> Path:
    msgs = [{"role": "system", "content": "sys"}] + [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i} " * 40} for i in range(n)
    ]
    return write_openai_json(folder / "chat.json", msgs)


def expected_new(path: Path) -> bytes:
    s = load_session(path)
    return dump_session(build_compacted_session(s, make_plan(s.messages), SUMMARY))


def backups_of(path: Path) -> list[Path]:
    if path.name == "context.jsonl":
        return sorted(path.parent.glob("context_*.jsonl"))
    return sorted(path.parent.glob(path.name + ".bak-*"))


def check_old_or_new(path: Path, old: bytes, new: bytes) -> str:
    data = path.read_bytes()
    assert data in (old, new), f"{path} is neither the old nor the new file ({len(data)} bytes)"
    backups = backups_of(path)
    # A backup, when present, is always complete (never a partial copy).
    assert len(backups) <= 1
    for b in backups:
        assert b.read_bytes() == old, f"{b} is not a whole copy of the old file"
    if data == new:
        assert backups, "the new file is there but the backup is not"
        return "new"
    return "old"


def run_writer(path: Path, *extra: str) -> subprocess.CompletedProcess:
    return procs.run(
        [PY, str(WRITER), str(path), "--summary", SUMMARY, *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("fmt", ["kimi", "openai-json"])
def test_exit_at_every_file_system_call(tmp_path, fmt):
    src_dir = tmp_path / "src"
    path = make_kimi(src_dir, 2000) if fmt == "kimi" else make_openai(src_dir, 2000)
    old = path.read_bytes()
    new = expected_new(path)
    assert new != old
    outcomes = []
    k = 1
    while True:
        work = tmp_path / f"run{k}"
        shutil.copytree(src_dir, work)
        target = work / path.name
        res = run_writer(target, "--exit-at-call", str(k))
        if res.returncode == 0:
            assert "done" in res.stdout
            assert check_old_or_new(target, old, new) == "new"
            break
        assert res.returncode == 99, res.stderr
        outcomes.append(check_old_or_new(target, old, new))
        shutil.rmtree(work)
        k += 1
        assert k < 200, "the writer never finished"
    # The exits covered both sides of the replace.
    assert "old" in outcomes and "new" in outcomes
    assert len(outcomes) >= 8


@pytest.mark.parametrize("step", STEPS)
def test_exit_at_each_named_step(tmp_path, step):
    path = make_kimi(tmp_path / "s", 500)
    old = path.read_bytes()
    new = expected_new(path)
    res = run_writer(path, "--exit-at-step", step)
    assert res.returncode == 99, res.stderr
    state = check_old_or_new(path, old, new)
    assert state == ("new" if step in ("replaced", "audited") else "old")
    if step in ("backup-linked", "backup-done"):
        assert (path.parent / "context_1.jsonl").read_bytes() == old


def test_sigkill_at_many_moments(tmp_path):
    src = tmp_path / "src"
    path = make_kimi(src, 30000)  # several MB
    old = path.read_bytes()
    new = expected_new(path)
    # One complete run tells how long an apply takes here; kills are spread over it.
    probe = tmp_path / "probe"
    shutil.copytree(src, probe)
    proc = procs.popen(
        [PY, str(WRITER), str(probe / "context.jsonl"), "--summary", SUMMARY],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "ready"
    t0 = time.monotonic()
    proc.wait(timeout=120)
    procs.stop(proc)
    span = max(time.monotonic() - t0, 0.02)
    assert check_old_or_new(probe / "context.jsonl", old, new) == "new"

    seen = set()
    for i in range(20):
        work = tmp_path / f"kill{i}"
        shutil.copytree(src, work)
        target = work / "context.jsonl"
        proc = procs.popen(
            [PY, str(WRITER), str(target), "--summary", SUMMARY],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(span * i / 16)
        procs.kill_group(proc)  # SIGKILL: the writer gets no chance to clean up
        procs.stop(proc)
        seen.add(check_old_or_new(target, old, new))
        leftovers = [p for p in work.iterdir() if p.name.endswith(".tmp")]
        assert len(leftovers) <= 1  # at most the one temp file being written
        shutil.rmtree(work)
    assert seen  # outcomes depend on timing; each one was checked above


def test_restore_exit_at_every_file_system_call(tmp_path):
    src = tmp_path / "src"
    path = make_kimi(src, 1000)
    old = path.read_bytes()
    res = run_writer(path)  # a complete apply: context_1.jsonl holds the old bytes
    assert res.returncode == 0, res.stderr
    compacted = path.read_bytes()
    outcomes = []
    k = 1
    while True:
        work = tmp_path / f"restore{k}"
        shutil.copytree(src, work)
        target = work / "context.jsonl"
        res = procs.run(
            [PY, str(WRITER), str(target), "--restore", "--exit-at-call", str(k)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        data = target.read_bytes()
        assert data in (compacted, old)
        assert (work / "context_1.jsonl").read_bytes() == old
        kept = work / "context_2.jsonl"
        if kept.exists():
            assert kept.read_bytes() == compacted  # whole, never partial
        if data == old:
            assert kept.exists(), "restored, but the compacted version was not kept"
        if res.returncode == 0:
            assert data == old
            break
        assert res.returncode == 99, res.stderr
        outcomes.append("restored" if data == old else "not yet")
        shutil.rmtree(work)
        k += 1
        assert k < 200, "the restore never finished"
    assert "not yet" in outcomes

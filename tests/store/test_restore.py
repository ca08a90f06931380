"""The `restore` command, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import build_compacted_session
from kimi_compact_tui.store import Provenance, apply_compaction, fingerprint, read_audit
from tests.factories import run_cli, write_kimi

ROOT = Path(__file__).resolve().parents[2]
PY = str(ROOT / ".venv" / "bin" / "python")
if not Path(PY).exists():
    PY = sys.executable


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return run_cli("restore", *args, stdin=stdin)


def one_line_error(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kimi-compact-tui: error: ")
    return lines[0]


def make_session(folder: Path) -> Path:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"t{i}"} for i in range(6)
    ]
    return write_kimi(folder, messages, system_prompt="sp", usage=99)


def apply(path: Path, summary: str = "SUM") -> None:
    fp = fingerprint(path)
    s = load_session(path)
    plan = make_plan(s.messages)
    apply_compaction(
        s,
        build_compacted_session(s, plan, summary),
        loaded_fingerprint=fp,
        summary=summary,
        plan=plan,
        provenance=Provenance(prompt=None, provider="offline", model=None, usage=None),
    )


def test_list_and_restore_with_yes(tmp_path):
    path = make_session(tmp_path / "sess")
    original = path.read_bytes()
    apply(path)
    compacted = path.read_bytes()
    res = cli(str(path.parent), "--list")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0].startswith("* context_1.jsonl")
    assert "before the compaction" in res.stdout
    res = cli(str(path.parent), "--list", "--json")
    points = json.loads(res.stdout)["points"]
    assert [Path(p["path"]).name for p in points] == ["context_1.jsonl"]

    res = cli(str(path), "--yes")
    assert res.returncode == 0, res.stderr
    assert "Restored" in res.stdout and "context_1.jsonl" in res.stdout
    assert "context_2.jsonl" in res.stdout
    assert path.read_bytes() == original
    assert (path.parent / "context_2.jsonl").read_bytes() == compacted
    assert [r["action"] for r in read_audit(path)] == ["apply", "restore"]


def test_restore_without_terminal_needs_yes(tmp_path):
    path = make_session(tmp_path / "sess")
    apply(path)
    compacted = path.read_bytes()
    line = one_line_error(cli(str(path), stdin="y\n"))
    assert "--yes" in line
    assert path.read_bytes() == compacted


def test_restore_with_no_points_and_missing_session(tmp_path):
    path = make_session(tmp_path / "sess")
    line = one_line_error(cli(str(path), "--yes"))
    assert "no restore points" in line and str(path) in line
    res = cli(str(path), "--list")
    assert res.returncode == 0 and "no restore points" in res.stdout
    line = one_line_error(cli(str(tmp_path / "nowhere" / "context.jsonl"), "--yes"))
    assert "no such folder" in line


def test_restore_named_point(tmp_path):
    path = make_session(tmp_path / "sess")
    original = path.read_bytes()
    apply(path, "ONE")
    apply(path, "TWO")
    res = cli(str(path), "--yes", "--point", "context_1.jsonl")
    assert res.returncode == 0, res.stderr
    assert path.read_bytes() == original
    line = one_line_error(cli(str(path), "--yes", "--point", "context_42.jsonl"))
    assert "not a restore point" in line


def test_restore_openai_backup(tmp_path):
    path = tmp_path / "chat.json"
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(6)]
    path.write_text(json.dumps(msgs))
    original = path.read_bytes()
    apply(path)
    assert path.read_bytes() != original
    res = cli(str(path), "--yes")
    assert res.returncode == 0, res.stderr
    assert path.read_bytes() == original
    assert len(list(tmp_path.glob("chat.json.bak-*"))) == 1  # the version before the write
    # The compacted version the restore replaced: named as what it is, not as a backup.
    assert len(list(tmp_path.glob("chat.json.replaced-*"))) == 1

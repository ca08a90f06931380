"""`compact --in-place`: the complete summary is written over the source
through the safe apply (rotation/backup, audit), and undone by `restore`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kimi_compact_tui.formats import load_session
from tests.core_helpers import SAMPLES
from tests.factories import run_cli


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_in_place_kimi_session_rotates_and_restore_undoes(tmp_path: Path):
    folder = tmp_path / "session"
    shutil.copytree(SAMPLES / "kimi-debugging-session", folder)
    original = (folder / "context.jsonl").read_bytes()
    result = run_cli("compact", str(folder), "--in-place", "--yes", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "complete" and report["written"] is True
    assert report["output"] == str(folder / "context.jsonl")
    assert (folder / "context_1.jsonl").read_bytes() == original
    lines = (folder / "context.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1]) == {"role": "_checkpoint", "id": 0}
    summary = json.loads(lines[2])
    assert summary["content"][0]["text"].startswith("<system>Previous context has been compacted")
    assert summary["content"][1]["text"] == report["summary"]
    assert json.loads(lines[-1])["role"] == "_usage"
    compacted = load_session(folder)
    assert len(compacted.messages) == report["messages_after"] == 3
    audit = [
        json.loads(x)
        for x in (folder / "context.jsonl.compact-audit.jsonl").read_text().splitlines()
    ]
    assert audit and audit[-1]["provider"] == "offline"
    undo = run_cli("restore", str(folder), "--yes", cwd=tmp_path)
    assert undo.returncode == 0, undo.stderr
    assert (folder / "context.jsonl").read_bytes() == original


def test_in_place_without_terminal_or_yes_refuses_before_streaming(tmp_path: Path):
    target = tmp_path / "chat.json"
    shutil.copy(SAMPLES / "openai-retry-refactor.json", target)
    before = listing(tmp_path)
    result = run_cli("compact", str(target), "--in-place", cwd=tmp_path)
    assert result.returncode == 2
    assert "pass --yes" in result.stderr and "Traceback" not in result.stderr
    assert "compacting" not in result.stderr  # refused before any request
    assert listing(tmp_path) == before


def test_in_place_and_output_are_exclusive(tmp_path: Path):
    target = tmp_path / "chat.json"
    shutil.copy(SAMPLES / "openai-retry-refactor.json", target)
    before = listing(tmp_path)
    result = run_cli(
        "compact",
        str(target),
        "--in-place",
        "--yes",
        "--output",
        str(tmp_path / "o.json"),
        cwd=tmp_path,
    )
    assert result.returncode == 2 and "cannot be used together" in result.stderr
    assert listing(tmp_path) == before


def test_in_place_openai_json_keeps_a_timestamped_backup(tmp_path: Path):
    target = tmp_path / "chat.json"
    shutil.copy(SAMPLES / "openai-retry-refactor.json", target)
    original = target.read_bytes()
    result = run_cli("compact", str(target), "--in-place", "--yes", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    backups = sorted(tmp_path.glob("chat.json.bak-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == original
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["model"] == "gpt-4o-mini"  # other keys kept
    roles = [m["role"] for m in data["messages"]]
    assert roles[:3] == ["system", "system", "user"]  # leading system kept, then the summary
    assert data["messages"][2]["content"].startswith("<system>Previous context has been compacted")

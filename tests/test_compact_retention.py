"""`compact` carries the retention report and refuses to write below a minimum."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.factories import run_cli

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_sessions" / "kimi-debugging-session"


def run(*args: str, stdin: str | None = None):
    return run_cli(*args, stdin=stdin, timeout=120)


def copy_sample(tmp_path: Path) -> Path:
    folder = tmp_path / "session"
    shutil.copytree(SAMPLE, folder)
    return folder


def test_compact_json_carries_the_retention_report(tmp_path):
    folder = copy_sample(tmp_path)
    res = run("compact", str(folder), "--provider", "offline", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)["retention"]
    files = report["categories"]["file_paths"]
    assert files["total"] > 0 and 0 <= files["kept"] <= files["total"]
    for missing in files["missing"]:
        assert missing["item"] and all(isinstance(n, int) and n >= 1 for n in missing["messages"])
    # The same figures as the retention command on the same summary.
    summary = tmp_path / "summary.txt"
    summary.write_text(json.loads(res.stdout)["summary"], encoding="utf-8")
    alone = run("retention", str(folder), "--summary", str(summary), "--json")
    assert alone.returncode == 0, alone.stderr
    assert json.loads(alone.stdout)["retention"]["categories"] == report["categories"]


def test_min_retention_shortfall_writes_nothing_and_exits_4(tmp_path):
    folder = copy_sample(tmp_path)
    before = sorted((p.name, p.read_bytes()) for p in folder.iterdir())
    res = run(
        "compact", str(folder), "--provider", "offline", "--in-place", "--yes",
        "--min-retention", "commands=100",
    )  # fmt: skip
    assert res.returncode == 4, res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert "not written" in last and "commands" in last
    assert sorted((p.name, p.read_bytes()) for p in folder.iterdir()) == before
    bad = run("compact", str(folder), "--min-retention", "nosuch=5")
    assert bad.returncode == 2 and "file_paths" in bad.stderr  # lists the valid names
    ok = run(
        "compact", str(folder), "--provider", "offline", "--in-place", "--yes",
        "--min-retention", "latest_request=100",
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert (folder / "context_1.jsonl").exists()

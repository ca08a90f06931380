"""`compact` carries the retention report and refuses to write below a minimum."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.factories import run_cli

ROOT = Path(__file__).resolve().parents[2]
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


def figures_session(tmp_path: Path) -> Path:
    """An OpenAI .jsonl session whose tool output holds more figures than the
    offline summary lists (it keeps the last 16)."""
    figures = " ".join(f"run {n}: {100 + n} ms;" for n in range(24))
    lines = [
        {"role": "user", "content": "Time the endpoint 24 times."},
        {"role": "assistant", "content": "Timing it now."},
        {"role": "tool", "content": figures, "tool_call_id": "t1"},
        {"role": "assistant", "content": "Done: the times are above."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "You're welcome."},
    ]
    path = tmp_path / "figures.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_min_retention_shortfall_writes_nothing_and_exits_4(tmp_path):
    session = figures_session(tmp_path)
    before = sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir())
    res = run(
        "compact", str(session), "--provider", "offline", "--in-place", "--yes",
        "--min-retention", "numbers=100",
    )  # fmt: skip
    assert res.returncode == 4, res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert "not written" in last and "numbers" in last
    assert sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir()) == before
    bad = run("compact", str(session), "--min-retention", "nosuch=5")
    assert bad.returncode == 2 and "file_paths" in bad.stderr  # lists the valid names
    ok = run(
        "compact", str(session), "--provider", "offline", "--in-place", "--yes",
        "--min-retention", "user_requests=100",
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert any(p.name.startswith("figures.jsonl.bak-") for p in tmp_path.iterdir())


def test_min_retention_with_an_old_category_name_names_its_replacement(tmp_path):
    folder = copy_sample(tmp_path)
    for old, new in (
        ("requirements", "instructions"),
        ("open_items", "open_tasks"),
        ("latest_request", "user_requests"),
    ):
        res = run("compact", str(folder), "--provider", "offline", "--min-retention", f"{old}=50")
        assert res.returncode == 2
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{old!r} is now {new!r}" in lines[0], res.stderr
        assert f"{new}=50" in lines[0]

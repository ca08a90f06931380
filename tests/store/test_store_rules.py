"""The store's trust rules (undo and restore must never surprise; a
boundary must not cut a tool call from its result; a skipped line is never
written back)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.compaction.pairs import find_splits, nearest_safe_up_to
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import ApplyError, UserError
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.providers.base import ProviderConfig, StreamResult
from kimi_compact_tui.store import read_audit, restore, restore_points, undo_plan
from tests.factories import run_cli, write_kimi

ROOT = Path(__file__).resolve().parents[2]


def line(data: dict) -> str:
    """A message line as kimi-cli appends it."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def kimi_lines(n: int, tools: bool = False) -> list[dict]:
    out: list[dict] = []
    for i in range(n):
        out.append({"role": "user", "content": f"request {i}"})
        if tools:
            call = {
                "id": f"c{i}",
                "type": "function",
                "function": {"name": "sh", "arguments": "{}"},
            }
            out.append({"role": "assistant", "content": f"run {i}", "tool_calls": [call]})
            out.append({"role": "tool", "content": f"out {i}", "tool_call_id": f"c{i}"})
        out.append({"role": "assistant", "content": f"answer {i}"})
    return out


def write_session(folder: Path, messages: list[dict]) -> Path:
    return write_kimi(folder, messages, system_prompt="sys", usage=None)


def compact(path: Path, up_to: int | None = None, *, allow_split: bool = False, text="SUM"):
    job = CompactionJob.load(path, AppConfig())
    prep = job.prepare(up_to=up_to)
    draft = job.draft(prep, StreamResult(status="complete", summary=text))
    return job.commit(draft, ProviderConfig(), allow_split=allow_split)


def cli(*args: str, stdin: str | None = None):
    return run_cli(*args, stdin=stdin, timeout=120)


# ----------------------------------------------------------------------------- undo


def test_a_rotation_the_tool_did_not_make_is_never_the_default(tmp_path):
    path = write_session(tmp_path / "s", kimi_lines(4))
    # kimi-cli's own /compact: its rotation of the file
    agent_rotation = write_kimi(tmp_path / "agent", kimi_lines(9), system_prompt="sys", usage=None)
    agent_rotation = agent_rotation.rename(path.with_name("context_1.jsonl"))
    live = path.read_bytes()
    with pytest.raises(
        ApplyError, match="nothing of ours to undo: kimi-compact-tui wrote no compaction"
    ):
        restore(path.parent)
    assert path.read_bytes() == live
    (point,) = restore_points(path)
    assert not point.ours and "kimi-cli's own rotation" in point.origin
    # Picked by name it can be restored, and the live file is kept first.
    result = restore(path.parent, "context_1.jsonl")
    assert path.read_bytes() == agent_rotation.read_bytes()
    assert result.replaced_backup is not None and result.replaced_backup.read_bytes() == live


def test_undo_after_the_agent_appended_refuses_and_force_keeps_the_new_turns(tmp_path):
    path = write_session(tmp_path / "s", kimi_lines(4))
    original = path.read_bytes()
    compact(path)
    with path.open("a") as fh:  # the agent resumed and added a turn
        fh.write(line({"role": "user", "content": "a new turn"}) + "\n")
    grown = path.read_bytes()
    with pytest.raises(ApplyError, match="changed since this tool wrote it"):
        restore(path.parent)
    assert path.read_bytes() == grown
    plan = undo_plan(path.parent)
    assert plan.changed_since and plan.source.name == "context_1.jsonl"
    result = restore(path.parent, force=True)
    assert path.read_bytes() == original
    assert result.replaced_backup.read_bytes() == grown  # the new turn is not lost
    assert [r["action"] for r in read_audit(path)] == ["apply", "restore"]


def test_cli_restore_follows_the_same_rules(tmp_path):
    path = write_session(tmp_path / "s", kimi_lines(4))
    original = path.read_bytes()
    compact(path)
    listing = cli("restore", str(path.parent), "--list")
    assert listing.stdout.splitlines()[0].startswith("* context_1.jsonl"), listing.stdout
    assert "made by kimi-compact-tui" in listing.stdout
    with path.open("a") as fh:
        fh.write(line({"role": "user", "content": "later"}) + "\n")
    refused = cli("restore", str(path.parent), "--yes")
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1 and "--force" in refused.stderr
    done = cli("restore", str(path.parent), "--yes", "--force")
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == original
    again = cli("restore", str(path.parent), "--yes")
    assert again.returncode == 2 and "nothing of ours to undo" in again.stderr
    assert path.read_bytes() == original


# ----------------------------------------------------------------------------- tool exchanges


def test_explicit_boundary_inside_a_tool_exchange_is_refused(tmp_path):
    # messages: 1 user, 2 assistant+call, 3 tool, 4 assistant, ... (4 per round)
    path = write_session(tmp_path / "s", kimi_lines(3, tools=True))
    before = path.read_bytes()
    with pytest.raises(UserError) as info:
        compact(path, up_to=2)
    message = str(info.value)
    assert "message 2 (tool call c0)" in message and "message 3" in message
    assert "--up-to 3" in message and "\n" not in message
    assert path.read_bytes() == before and not path.with_name("context_1.jsonl").exists()
    # Explicitly allowed, it is written (the user's choice).
    compact(path, up_to=2, allow_split=True)
    assert load_session(path).messages[1].role == "tool"


def test_nearest_safe_boundary_and_the_default_tail_never_splits(tmp_path):
    session = load_session(write_session(tmp_path / "s", kimi_lines(5, tools=True)))
    messages = session.messages
    assert find_splits(messages, make_plan(messages, up_to=2))
    assert nearest_safe_up_to(messages, 2, 0) == 3
    for up_to in range(1, len(messages) + 1):
        safe = nearest_safe_up_to(messages, up_to, 0)
        assert not find_splits(messages, make_plan(messages, up_to=safe))
    for keep in range(1, 12):
        plan = make_plan(messages, max_preserved_messages=keep)
        assert not find_splits(messages, plan), keep


def test_cli_in_place_refuses_a_split_before_any_request(tmp_path):
    path = write_session(tmp_path / "s", kimi_lines(3, tools=True))
    before = path.read_bytes()
    res = cli("compact", str(path.parent), "--up-to", "2", "--in-place", "--yes")
    assert res.returncode == 2, res.stderr
    assert res.stdout == "" and len(res.stderr.strip().splitlines()) == 1
    assert "splits a tool call from its result" in res.stderr
    assert path.read_bytes() == before and sorted(p.name for p in path.parent.iterdir()) == [
        "context.jsonl"
    ]
    ok = cli("compact", str(path.parent), "--up-to", "3", "--in-place", "--yes")
    assert ok.returncode == 0, ok.stderr


# ----------------------------------------------------------------------------- skipped lines


def test_a_session_with_a_half_written_line_is_written_without_it(tmp_path):
    lines = kimi_lines(4)
    path = write_session(tmp_path / "s", lines)
    with path.open("ab") as fh:
        fh.write(b'{"role":"user","content":"half')
    original = path.read_bytes()
    assert len(load_session(path).warnings) == 1
    result = compact(path)
    assert result.backup_path.read_bytes() == original  # kept byte for byte
    rewritten = load_session(path)
    assert rewritten.warnings == []
    assert b"half" not in path.read_bytes()


async def test_the_tui_opens_a_session_with_a_skipped_line_and_says_which(tmp_path):
    from kimi_compact_tui.tui.app import create_app

    path = write_session(tmp_path / "s", kimi_lines(4))
    with path.open("ab") as fh:
        fh.write(b'{"role":"user","content":"half')
    app = create_app(path.parent, provider="offline")
    seen: list[tuple[str, str]] = []
    real_notify = app.notify

    def notify(message, *, title="", **kw):
        seen.append((str(title), str(message)))
        return real_notify(message, title=title, **kw)

    app.notify = notify  # record what the user is told
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.session is not None and len(app.state.session.messages) == 8
        shown = [m for title, m in seen if "skipped on load" in title]
        assert shown and f"{path}:11: skipped" in shown[0]

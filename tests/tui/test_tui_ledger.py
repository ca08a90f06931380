"""The ledger in the TUI (issue 33 items 3 and 4): ``H`` lists the open session's
compactions with what each summary lost, and ``p`` there repairs the agent's latest
own summary as ``compact --repair`` does: the block shown first, asked, written
with a restore point, and ``u`` gives the bytes back. On a Claude Code session that
compacted itself (the reference files the real agent wrote)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kimi_compact_tui.tui.screens.confirm import AskScreen
from kimi_compact_tui.tui.screens.ledger import LedgerScreen
from kimi_compact_tui.tui.screens.restore import RestoreConfirmScreen
from tests import core_helpers
from tests.tui_support import press_and_settle, settle, wait_until

REFERENCE = Path(os.environ.get("KIMI_COMPACT_TUI_REFERENCE") or core_helpers.REFERENCE)
SIZE = (120, 40)


def copy(tmp_path: Path, name: str) -> Path:
    src = REFERENCE / "agents" / name
    if not src.exists():
        pytest.skip(f"reference data absent: {src}")
    target = tmp_path / name
    shutil.copy(src, target)
    target.chmod(0o644)
    return target


async def ledger_screen(pilot) -> LedgerScreen:
    app = pilot.app
    await settle(pilot)
    await press_and_settle(pilot, "H")
    return await wait_until(
        pilot,
        lambda: isinstance(app.screen, LedgerScreen) and app.screen.entries is not None and app.screen,
        "the ledger read",
    )  # fmt: skip


async def test_the_ledger_lists_the_agents_compaction_and_repair_writes_and_undoes(
    tmp_path, review_app
):
    path = copy(tmp_path, "claude-session-after-compact.jsonl")
    before = path.read_bytes()
    app = review_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ledger_screen(pilot)
        text = str(screen.query_one("#ledger-body").render())
        assert "Claude Code (manual)" in text and "[latest of the agent's own" in text
        assert "lost: [user_requests] third turn" in text
        assert "p repairs the latest" in text
        await press_and_settle(pilot, "p")
        ask = await wait_until(pilot, lambda: isinstance(app.screen, AskScreen) and app.screen,
                               "the repair question")  # fmt: skip
        assert "<!-- retention:" in ask.body and "third turn" in ask.body  # the block first
        assert path.read_bytes() == before  # nothing written before y
        await pilot.press("y")
        await wait_until(pilot, lambda: path.read_bytes() != before, "the repair written")
        await settle(pilot)
        old, new = before.split(b"\n"), path.read_bytes().split(b"\n")
        changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
        assert len(changed) == 1  # that summary message only, in place
        record = json.loads(new[changed[0]])
        assert record["isCompactSummary"] is True and "third turn" in json.dumps(record)
        await wait_until(pilot, lambda: not app.message_list.loading, "the reload")
        screen = await ledger_screen(pilot)
        text = str(screen.query_one("#ledger-body").render())
        assert "repaired by kimi-compact-tui" in text and "nothing to repair" in text
        assert screen.check_action("repair", ()) is False
        await press_and_settle(pilot, "escape", "u")
        await wait_until(pilot, lambda: isinstance(app.screen, RestoreConfirmScreen), "undo")
        await pilot.press("y")
        await wait_until(pilot, lambda: path.read_bytes() == before, "the bytes back")


async def test_a_session_never_compacted_by_its_agent_offers_no_repair(tmp_path, review_app):
    path = copy(tmp_path, "claude-session-before-compact.jsonl")
    app = review_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ledger_screen(pilot)
        text = str(screen.query_one("#ledger-body").render())
        assert "no compaction recorded" in text
        assert "has not compacted this session itself" in text
        assert screen.check_action("repair", ()) is False
        await press_and_settle(pilot, "p")
        assert isinstance(app.screen, LedgerScreen)  # nothing asked

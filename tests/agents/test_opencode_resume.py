"""The registered opencode format against the REAL opencode 1.18.33, through the CLI as
a user runs it (``compact DB#ses_… --in-place --yes --provider offline``, ``restore``).

What opencode sends the model when it resumes is the truth: after our write it must
send [its framing, our summary, the kept messages, the new turn], and our reading of
the session must equal it message for message. ``restore`` must give the session's
rows back exactly, and opencode then resumes the original. The other session of the
same database is never touched. A session opencode writes to while we stream is
refused inside the write, with nothing written.

Sessions are made once per module (opencode turns take seconds); each test works on a
clone of its home.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui import store
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats import load
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers import ProviderConfig, stream_summary
from tests.agents.harness import require_agent
from tests.agents.opencode import FakeOpencodeModel, Opencode, opencode_installed
from tests.agents.test_opencode_read import FRAMING, _sent_history, _wire
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)

ENABLED = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})
OWN_SUMMARY = "OPENCODE-OWN-SUMMARY: the user ran echoes."


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Opencode, str, str]:
    """Two sessions in one database, written by opencode: A (4 turns, two real bash
    calls) and B (one turn)."""
    require_agent(opencode_installed(), "opencode")
    from tests.agents.fake_model import text_turn

    root = tmp_path_factory.mktemp("opencode-resume")
    with FakeOpencodeModel() as fake:
        oc = Opencode(root / "runner", fake)
        a = oc.create_session()
        b = oc.create_session([("MARK-B1 other session", [text_turn("MARK-B1 answer")])])
    return oc, a, b


def rows_of(db: Path, sid: str) -> list[tuple[Any, ...]]:
    """The session's own rows exactly as stored (every column)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        messages = conn.execute(
            "SELECT * FROM message WHERE session_id = ? ORDER BY id", (sid,)
        ).fetchall()
        parts = conn.execute(
            "SELECT * FROM part WHERE message_id IN"
            " (SELECT id FROM message WHERE session_id = ?) ORDER BY id",
            (sid,),
        ).fetchall()
    finally:
        conn.close()
    return [tuple(r) for r in messages] + [tuple(r) for r in parts]


def assert_resumes(messages: list[Message], body: dict[str, Any], prompt: str) -> list[Any]:
    """Our reading (``messages``, loaded before the turn) equals the history opencode
    sent in ``body``; returns ours as sent."""
    ours = [_wire(m) for m in messages]
    framing = {i for i, m in enumerate(ours) if m is FRAMING}
    assert ours == _sent_history(body, framing)
    assert prompt in json.dumps(body["messages"][-1])
    return ours


def compact(cli_main, ref: str, *extra: str):  # noqa: F811
    done = cli_main("compact", ref, "--in-place", "--yes", "--provider", "offline", *extra)
    assert done.code == 0, done.stderr
    return done


def test_after_our_write_opencode_resumes_our_summary_and_restore_gives_the_rows_back(
    template, tmp_path, cli_main  # noqa: F811
):
    oc, a, b = template
    with FakeOpencodeModel() as fake:
        run = oc.clone(tmp_path / "oc", fake)
        ref = f"{run.db}#{a}"
        original, other = rows_of(run.db, a), rows_of(run.db, b)
        before = load(ref).session.messages
        compact(cli_main, ref)  # the default tail: the last two messages
        after = load(ref).session.messages
        assert after[0].data.get("opencode") == {"framing": True}
        assert after[2:] == before[-2:] and rows_of(run.db, b) == other
        summary = after[1].text()
        assert "MARK-U3 again" in summary  # the offline summary of what it compacted

        body = run.resume(a, "MARK-U5 after ours")
        sent = assert_resumes(after, body, "MARK-U5 after ours")
        assert sent[1] == {"role": "assistant", "content": summary}
        # compacted away: sent in no message after the summary (the offline summary
        # itself quotes every user request, so it holds it)
        assert "MARK-U1 please" not in json.dumps(body["messages"][3:])
        assert rows_of(run.db, b) == other

        # opencode wrote after us: undo refuses, in one line, unless forced
        refused = cli_main("restore", ref, "--yes")
        assert refused.code == 2 and "changed since this tool wrote it" in refused.stderr
        forced = cli_main("restore", ref, "--yes", "--force")
        assert forced.code == 0, forced.stderr
        assert rows_of(run.db, a) == original and rows_of(run.db, b) == other

        assert load(ref).session.messages == before
        body = run.resume(a, "MARK-U6 after the restore")
        assert_resumes(before, body, "MARK-U6 after the restore")  # the original, resumed


def test_a_boundary_at_a_prompt_keeps_from_that_prompt_on(
    template, tmp_path, cli_main  # noqa: F811
):
    oc, a, b = template
    with FakeOpencodeModel() as fake:
        run = oc.clone(tmp_path / "oc", fake)
        ref = f"{run.db}#{a}"
        other = rows_of(run.db, b)
        before = load(ref).session.messages
        third = next(i for i, m in enumerate(before) if "MARK-U3" in m.text())
        compact(cli_main, ref, "--up-to", str(third))  # messages 1..third compacted
        after = load(ref).session.messages
        assert after[2:] == before[third:]
        body = run.resume(a, "MARK-U5 after the boundary")
        assert_resumes(after, body, "MARK-U5 after the boundary")
        # [system, framing, summary, kept…]: the compacted prompt is sent in no message
        # after the summary (the offline summary itself quotes every user request)
        sent = json.dumps(body["messages"][3:])
        assert "MARK-U3 again" in sent and "MARK-U1 please" not in sent
        assert rows_of(run.db, b) == other


def test_ours_on_top_of_opencodes_own_compaction(template, tmp_path, cli_main):  # noqa: F811
    oc, a, b = template
    with FakeOpencodeModel(summary=OWN_SUMMARY) as fake:
        run = oc.clone(tmp_path / "oc", fake)
        ref = f"{run.db}#{a}"
        other = rows_of(run.db, b)
        run.compact(a)
        theirs = load(ref).session.messages
        assert theirs[1].text() == OWN_SUMMARY
        # our default tail would start inside what its compaction kept (opencode would
        # send its old summary again after it): refused in one line, nothing written
        compacted = rows_of(run.db, a)
        refused = cli_main("compact", ref, "--in-place", "--yes", "--provider", "offline")
        assert refused.code == 2 and rows_of(run.db, a) == compacted
        (line,) = refused.error_lines
        assert "inside what opencode's earlier compaction kept" in line and "--up-to" in line

        body = run.resume(a, "MARK-U5 after its compaction")
        assert_resumes(theirs, body, "MARK-U5 after its compaction")  # what it resumes
        theirs = load(ref).session.messages
        compact(cli_main, ref)  # keeps MARK-U5 and its answer, written after its summary
        ours = load(ref).session.messages
        assert ours[1].text() != OWN_SUMMARY and ours[2:] == theirs[-2:]
        body = run.resume(a, "MARK-U6 after both")
        assert_resumes(ours, body, "MARK-U6 after both")
        assert OWN_SUMMARY not in json.dumps(body["messages"][2:])
        assert rows_of(run.db, b) == other


def test_a_session_opencode_writes_to_while_we_stream_is_refused(template, tmp_path):
    oc, a, b = template
    with FakeOpencodeModel() as fake:
        run = oc.clone(tmp_path / "oc", fake)
        ref = f"{run.db}#{a}"
        other = rows_of(run.db, b)
        job = CompactionJob.load(ref, ENABLED)
        prep = job.prepare()

        async def stream_while_opencode_answers(provider, request, on_event=None, cancel=None):
            # a prompt sent to the session while the summary streams
            await asyncio.to_thread(run.resume, a, "MARK-U5 meanwhile")
            return await stream_summary(provider, request, on_event, cancel)

        result = asyncio.run(
            job.summarize(prep, ProviderConfig(), stream=stream_while_opencode_answers)
        )
        draft = job.draft(prep, result)
        written = rows_of(run.db, a)
        with pytest.raises(ApplyError, match=r"changed on disk since it was loaded.*nothing"):
            job.commit(draft, ProviderConfig())
        assert rows_of(run.db, a) == written and store.restore_points(ref) == []
        assert any("MARK-U5 meanwhile" in m.text() for m in load(ref).session.messages)
        assert rows_of(run.db, b) == other

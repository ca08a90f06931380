"""The tests every session format gets by construction: each runs once per format
of ``formats.registry.FORMATS``, on the session its writer in
``tests/factories/writers.py`` lays out as the agent would, and a registered
format with no writer fails here.

Round trip (load then dump: the bytes read), the plan (the default preserved
tail and every explicit boundary, as the spec says), the write through the
compaction job and the store (the file the format's write strategy says, and its
restore point), undo (the original bytes back), the diff (before/after counts)
and retention (a report over the compacted range). What a format refuses, it
refuses with one line (asserted, not skipped). Offline only: no agents, no network.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from kimi_compact_tui import store
from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.diff import diff_sessions
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import load, registry
from kimi_compact_tui.formats.base import Session, SessionFormat
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.formats.strategies import (
    AppendTruncate,
    BackupReplace,
    Rotate,
    Transactional,
)
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.model import COMPACTION_ROLES
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.retention import retention_report
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories import FORMAT_WRITERS

ENABLED = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})
OFFLINE = ProviderConfig()  # the offline summarizer: no key, no network


def test_every_registered_format_has_a_writer() -> None:
    """A new format gets the tests below by adding its writer (docs/ARCHITECTURE.md)."""
    missing = [name for name in registry.names() if name not in FORMAT_WRITERS]
    assert not missing, f"formats with no writer in tests/factories/writers.py: {missing}"
    stale = sorted(set(FORMAT_WRITERS) - set(registry.names()))
    assert not stale, f"writers for formats no longer registered: {stale}"


@dataclass
class Written:
    fmt: SessionFormat
    opened: Path  # what the user passes as SESSION
    path: Path  # the session file it resolves to (the database, for DB#KEY)
    original: bytes  # the session's content: a file's bytes, a database session's rows
    ref: SessionRef

    def content(self) -> bytes:
        """The session's content now, as its write strategy reads it."""
        return self.fmt.storage.current(self.ref).data


@pytest.fixture(params=registry.names())
def written(request: pytest.FixtureRequest, tmp_path: Path) -> Written:
    fmt = registry.get(request.param)
    opened = FORMAT_WRITERS[fmt.name](tmp_path)
    ref = registry.resolve(opened)  # DB#KEY for a session kept in a database
    assert ref.path.exists() and tmp_path in ref.path.parents
    original = fmt.storage.current(ref).data
    assert (ref.key is None) == fmt.storage.byte_based
    return Written(fmt, opened, ref.path, original, ref)


def one_line(text: str) -> bool:
    return bool(text.strip()) and "\n" not in text and "Traceback" not in text


# ----------------------------------------------------------------------------- round trip


def test_round_trip(written: Written) -> None:
    loaded = load(written.opened)  # the path the user gives: detected, not told
    session = loaded.session
    assert session.format is written.fmt and session.path == written.path
    assert session.warnings == []  # a session the agent wrote at rest: nothing skipped
    assert loaded.fingerprint.size == len(written.original)
    if written.fmt.storage.byte_based:
        assert written.fmt.dump(session) == written.original
    else:  # rows in a database: no file of its own to dump, said in one line
        with pytest.raises(SessionFormatError) as refused:
            written.fmt.dump(session)
        assert one_line(str(refused.value)) and str(written.ref) in str(refused.value)
    # realistic: prompts, replies, a tool call answered by its result
    roles = [m.role for m in session.messages]
    assert {"user", "assistant", "tool"} <= set(roles)
    calls = {c["id"] for m in session.messages for c in m.tool_calls}
    results = {m.tool_call_id for m in session.messages if m.role == "tool"}
    assert calls and calls == results
    assert roles[-4:] == ["user", "assistant", "user", "assistant"]


# ----------------------------------------------------------------------------- the plan


def leading_count(session: Session) -> int:
    n = 0
    while n < len(session.messages) and session.messages[n].role == "system":
        n += 1
    return n


def test_default_plan_preserves_the_last_two_user_or_assistant_messages(written: Written):
    session = load(written.opened).session
    plan = CompactionJob(session, ENABLED).prepare().plan
    n, lead = len(session.messages), leading_count(session)
    assert plan.noop is None and plan.mode == "tail"
    assert list(plan.leading_system_indices) == list(range(lead))
    compact, tail = list(plan.compact_indices), list(plan.preserved_indices)
    assert compact and compact == list(range(lead, compact[-1] + 1))
    assert tail == list(range(compact[-1] + 1, n))
    assert list(plan.request_indices) == list(range(0, tail[0]))
    # the tail starts at the second-to-last user/assistant message (the spec's scan)
    counted = [i for i in tail if session.messages[i].role in COMPACTION_ROLES]
    assert len(counted) == plan.max_preserved_messages == 2 and counted[0] == tail[0]


def test_every_explicit_boundary_compacts_exactly_up_to_it(
    written: Written, cli_main  # noqa: F811
):
    session = load(written.opened).session
    job = CompactionJob(session, ENABLED)
    n, lead = len(session.messages), leading_count(session)
    for up_to in range(1, n + 1):
        plan = job.prepare(up_to=up_to).plan
        assert plan.mode == "explicit" and plan.up_to == up_to
        if up_to <= lead:
            assert plan.noop and not plan.compact_indices
            continue
        assert plan.noop is None
        assert list(plan.compact_indices) == list(range(lead, up_to))
        assert list(plan.preserved_indices) == list(range(up_to, n))
        assert list(plan.request_indices) == list(range(0, up_to))
    # the command line, on the path the user gives, says the same
    middle = (lead + n) // 2 + 1
    shown = cli_main("plan", written.opened, "--up-to", str(middle), "--json")
    assert shown.code == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["format"] == written.fmt.name
    assert data["compact_indices"] == list(range(lead, middle))
    beyond = cli_main("plan", written.opened, "--up-to", str(n + 1))
    assert beyond.code == 2 and len(beyond.error_lines) == 1 and "out of range" in beyond.stderr


# ----------------------------------------------------------------------------- write, undo, diff


def boundary_of(session: Session, which: str) -> int | None:
    """``up_to`` for the test's boundary: the default tail (None), or an explicit
    one two messages before it (before the last-but-one prompt: no tool call split)."""
    if which == "tail":
        return None
    tail = CompactionJob(session, ENABLED).prepare().plan.boundary
    return tail - 2


@pytest.mark.parametrize("which", ["tail", "explicit"])
def test_write_undo_diff_and_retention(written: Written, which: str) -> None:
    fmt, path, original = written.fmt, written.path, written.original
    job = CompactionJob.load(written.opened, ENABLED)
    session = job.session
    prep = job.prepare(up_to=boundary_of(session, which))
    plan: CompactionPlan = prep.plan
    assert job.write_refusal() is None
    result = asyncio.run(job.summarize(prep, OFFLINE))
    assert result.status == "complete" and result.summary
    draft = job.draft(prep, result)
    assert draft.splits == []
    byte_based = fmt.storage.byte_based
    # what the format says it will write (a database format writes its rows instead)
    op = fmt.write_op(session, draft.compacted) if byte_based else None
    applied = job.commit(draft, OFFLINE)

    # the file the format's strategy says, and the copy kept before it
    assert applied.path == path and applied.policy == fmt.storage.name
    assert applied.backup_path.read_bytes() == original
    now = written.content()
    if op is None:  # the session's own rows, exported, then one transaction
        assert isinstance(fmt.storage, Transactional)
        assert applied.backup_path.parent == fmt.restore_folder(path)
        assert applied.backup_path.name.startswith(f"{written.ref.name}.bak-")
        assert now != original
    elif isinstance(fmt.storage, Rotate):  # the current file kept as the next rotation
        assert applied.backup_path == path.parent / fmt.rotation_name(path, 1)
        assert now == op.data
    elif isinstance(fmt.storage, AppendTruncate):  # a copy, then our records appended
        assert applied.backup_path.parent == fmt.restore_folder(path)
        assert now == original + op.data  # after the bytes read, which never change
    else:  # a timestamped copy, then the whole file replaced
        assert isinstance(fmt.storage, BackupReplace)
        assert applied.backup_path.parent == fmt.restore_folder(path)
        assert now == op.data
    (record,) = store.read_audit(written.ref, fmt)
    assert record["format"] == fmt.name and record["policy"] == fmt.storage.name

    # what the agent resumes: leading system, the summary, the kept messages
    after = load(written.opened).session
    assert after.format is fmt and after.warnings == []
    assert after.messages == draft.compacted.messages
    lead, kept = plan.leading, len(plan.preserved_indices)
    # the summary message (for some agents, with the agent's own framing of it)
    added = after.messages[lead : len(after) - kept]
    assert after.messages[:lead] == session.messages[:lead]
    assert 1 <= len(added) <= 2 and result.summary in added[-1].text()
    assert after.messages[lead + len(added) :] == session.messages[plan.boundary :]
    assert (applied.compacted, applied.kept) == (len(plan.compact_indices), lead + kept)

    diff = diff_sessions(session, after)
    assert diff.counts == {
        "kept": lead + len(plan.preserved_indices),
        "removed": len(plan.compact_indices),
        "added": len(added),
    }
    report = retention_report(session, plan, result.summary)
    assert report.compacted == (lead + 1, plan.boundary)

    # undo: the file as it was, byte for byte, and the session as it was loaded
    target = store.Target.of(after)
    assert applied.backup_path in [p.path for p in store.restore_points(target)]
    store.restore(target)
    assert written.content() == original
    assert load(written.opened).session.messages == session.messages


# ----------------------------------------------------------------------------- refusals


def test_a_session_from_bare_messages_is_made_or_refused_in_one_line(written: Written) -> None:
    """``from_messages`` either makes a session of the format holding the messages, or
    refuses with one line (Claude Code: a transcript is only ever read from disk)."""
    fmt = written.fmt
    messages = load(written.opened).session.messages
    try:
        made = fmt.from_messages(messages)
    except SessionFormatError as exc:
        assert one_line(str(exc)), str(exc)
        return
    assert made.format is fmt and made.messages == messages
    data = fmt.dump(made)  # a session it made, it can write
    copy = written.path.with_name("copy" + written.path.suffix)
    copy.write_bytes(data)
    again = load(copy, fmt).session
    assert again.format is fmt and [m.data for m in again.messages] == [m.data for m in messages]


def test_a_session_of_another_format_is_written_or_refused_in_one_line(written: Written) -> None:
    """A format that writes from its own loaded state refuses another format's
    session in one line before anything is written; the others may write it."""
    fmt = written.fmt
    other = registry.get("openai-json" if fmt.name != "openai-json" else "openai-jsonl")
    session = other.from_messages(load(written.opened).session.messages, written.path)
    why = fmt.write_refusal(session)
    assert why is None or one_line(why), why
    if why is None:
        assert not isinstance(fmt.storage, AppendTruncate)  # an append needs the file it read

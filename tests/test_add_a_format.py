"""``docs/ARCHITECTURE.md``'s "Add a session format", followed literally.

A throwaway format (a ``.chat`` file: one ``role<TAB>JSON text`` line per
message) is written here as one class and registered with one line; nothing
else in the package is touched. The whole review then works on it: detection,
the one load path, the plan and the request, a summary, the write through the
job and the store (with the format's own restore folder), the audit record,
undo, the diff, retention, and the CLI's ``plan`` and ``compact``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kimi_compact_tui import store
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.diff import diff_sessions
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import load, registry
from kimi_compact_tui.formats.base import Session, SessionFormat, SessionMeta, WriteOp
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.retention import retention_report
from tests import test_every_format
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories import FORMAT_WRITERS

ENABLED = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})


class ChatFormat(SessionFormat):
    """Step 1: the class, its attributes and the required hooks."""

    name = "test-chat"
    label = "test .chat transcript"
    agent = "the test agent"
    write_policy = "backup"
    write_notes = ("the test agent must be closed",)

    def recognise(self, path: Path, head: bytes) -> bool:
        return path.suffix == ".chat"

    def parse(self, data: bytes, path: Path) -> Session:
        messages, warnings = [], []
        for number, line in enumerate(data.decode("utf-8").split("\n"), 1):
            if not line:
                continue
            role, sep, text = line.partition("\t")
            if not sep:
                warnings.append(f"{path}:{number}: skipped, as the test agent does: no tab")
                continue
            try:
                messages.append(Message.make(role, json.loads(text)))
            except ValueError:
                raise SessionFormatError(f"{path}:{number}: invalid JSON text") from None
        return Session(path, self, messages, warnings, SessionMeta(recorded_tokens=7))

    def dump(self, session: Session) -> bytes:
        lines = [
            f"{m.role}\t{json.dumps(m.text(), ensure_ascii=False)}\n" for m in session.messages
        ]
        return "".join(lines).encode("utf-8")

    def write_op(self, session: Session, compacted: Session) -> WriteOp:
        return WriteOp("backup", self.dump(compacted))

    def restore_folder(self, path: Path) -> Path:  # an optional hook
        return path.parent / "chat-restore-points"


@pytest.fixture
def chat_format(monkeypatch: pytest.MonkeyPatch) -> ChatFormat:
    """Step 2: one instance, one line in FORMATS (before the fallback formats)."""
    fmt = ChatFormat()
    monkeypatch.setattr(registry, "FORMATS", [fmt, *registry.FORMATS])
    return fmt


def write_chat(path: Path, bad_line: bool = False) -> Path:
    rows = [("system", "You are a test agent."), ("user", "Fix the bug in parser.py")]
    rows += [("assistant", "Fixed: parser.py line 12 raised KeyError('id')."), ("user", "Thanks")]
    rows += [("assistant", "You are welcome.")]
    lines = [f"{role}\t{json.dumps(text)}" for role, text in rows]
    if bad_line:
        lines.insert(2, "a line the agent skips")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_whole_review_works_on_a_new_format(tmp_path: Path, chat_format: ChatFormat) -> None:
    path = write_chat(tmp_path / "work.chat", bad_line=True)
    original = path.read_bytes()
    loaded = load(path)  # the one load path
    session = loaded.session
    assert session.format is chat_format and len(session.messages) == 5
    assert session.warnings == [f"{path}:3: skipped, as the test agent does: no tab"]
    assert chat_format.dump(session) != original  # it drops the skipped line on dump

    job = CompactionJob(session, ENABLED, loaded.fingerprint)
    prep = job.prepare()  # default tail: the last two user/assistant messages are kept
    assert list(prep.plan.compact_indices) == [1, 2] and prep.plan.leading == 1
    assert prep.request is not None and "## Message 2\nRole: user" in prep.request.transcript
    result = asyncio.run(job.summarize(prep, ProviderConfig()))  # offline
    assert result.status == "complete"
    draft = job.draft(prep, result)
    assert [m.role for m in draft.compacted.messages] == ["system", "user", "user", "assistant"]

    applied = job.commit(draft, ProviderConfig())
    backup = applied.backup_path
    assert backup.parent == tmp_path / "chat-restore-points"  # the format's restore folder
    assert backup.read_bytes() == original
    assert applied.audit_path == backup.parent / f"{path.name}.compact-audit.jsonl"  # with it
    (record,) = store.read_audit(path, chat_format)
    assert record["format"] == "test-chat" and record["policy"] == "backup"
    after = load(path).session
    assert after.messages[1].text().endswith(result.summary)
    assert after.messages[2:] == session.messages[3:]

    diff = diff_sessions(session, after)
    assert diff.counts["removed"] == 2 and diff.counts["added"] == 1
    report = retention_report(session, prep.plan, result.summary)
    assert report.compacted == (2, 3)

    points = store.restore_points(store.Target.of(after))
    assert [p.path for p in points] == [backup]
    store.restore(store.Target.of(after))  # undo: the file as it was, byte for byte
    assert path.read_bytes() == original


def test_the_cli_reads_and_writes_a_new_format(tmp_path, chat_format, cli_main):  # noqa: F811
    path = write_chat(tmp_path / "work.chat")
    config = tmp_path / "config.yaml"
    config.write_text("compaction:\n  enabled: true\n  type: kimi\n", encoding="utf-8")
    plan = cli_main("plan", path, "--json", "--config", config)
    assert plan.code == 0, plan.stderr
    data = json.loads(plan.stdout)
    assert data["format"] == "test-chat" and data["compact_indices"] == [1, 2]
    out = tmp_path / "out.chat"
    done = cli_main("compact", path, "--output", out, "--config", config)
    assert done.code == 0, done.stderr
    assert [line.split("\t")[0] for line in out.read_text().splitlines()] == [
        "system",
        "user",
        "user",
        "assistant",
    ]


def test_step_3_a_registered_format_without_a_writer_fails_the_every_format_tests(
    tmp_path: Path, chat_format: ChatFormat, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Step 3: until the format has its writer in tests/factories/writers.py, the
    every-format tests fail naming it; with it, they pass."""
    with pytest.raises(AssertionError, match="test-chat"):
        test_every_format.test_every_registered_format_has_a_writer()
    monkeypatch.setitem(FORMAT_WRITERS, "test-chat", lambda folder: write_chat(folder / "w.chat"))
    test_every_format.test_every_registered_format_has_a_writer()

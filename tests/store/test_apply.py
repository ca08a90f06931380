"""Safe apply: round trips, kimi-cli parity, backups, conflicts, permissions,
audit log, restore cycles, read-only folders and full disks."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import shutil
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kimi_compact_tui.commands.compact import CompactionRun, write_in_place
from kimi_compact_tui.commands.compact.options import CompactOptions
from kimi_compact_tui.commands.options import SessionOptions
from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import ApplyError, UserError
from kimi_compact_tui.formats import dump_session, load, load_session
from kimi_compact_tui.formats import durable as durable_mod
from kimi_compact_tui.formats.kimi_cli.plugin import dump_message
from kimi_compact_tui.job import CompactionJob, build_compacted_session
from kimi_compact_tui.job.job import provenance_of
from kimi_compact_tui.providers.base import ProviderConfig, StreamResult
from kimi_compact_tui.store import (
    ApplyResult,
    Provenance,
    apply_compaction,
    audit_path,
    fingerprint,
    read_audit,
    restore,
    restore_points,
)
from tests import procs
from tests.factories import write_kimi, write_openai_json

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
NOW = datetime(2026, 11, 30, 3, 17, 0, tzinfo=UTC)


# ----------------------------------------------------------------------------- helpers


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def turns(n: int, system: str | None = None) -> list[dict]:
    """``n`` alternating user/assistant turns, after a system message if given."""
    out = [{"role": "system", "content": system}] if system else []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        out.append({"role": role, "content": f"turn {i} text ünïcode"})
    return out


def kimi_session(folder: Path, n: int = 8) -> Path:
    return write_kimi(folder, turns(n), system_prompt="You are kimi.", usage=4242)


def openai_session(path: Path) -> Path:
    return write_openai_json(path, turns(8, "sys"), model="x")


def do_apply(path: Path, summary: str = "SUMMARY TEXT", **kw) -> ApplyResult:
    fp = fingerprint(path)
    session = load_session(path)
    plan = make_plan(session.messages)
    compacted = build_compacted_session(session, plan, summary, output_tokens=kw.pop("out", None))
    args = {
        "loaded_fingerprint": fp,
        "summary": summary,
        "plan": plan,
        "provenance": Provenance(provider="offline", model="test-model"),
        "now": NOW,
    }
    args.update(kw)
    return apply_compaction(session, compacted, **args)


def listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def temp_files(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


# ----------------------------------------------------------------------------- round trips


def sample_paths() -> list[Path]:
    if not SAMPLES.is_dir():
        return []
    return sorted(p for p in SAMPLES.iterdir() if not p.name.startswith("."))


def test_round_trip_every_sample_session():
    paths = sample_paths()
    assert paths, f"the bundled samples are missing from {SAMPLES}"
    checked = 0
    for p in paths:
        if p.is_dir() and not (p / "context.jsonl").is_file():
            continue
        session = load_session(p)
        out = dump_session(session)
        original = session.path.read_bytes()
        if session.format.name == "kimi":
            assert out == original, p
        elif session.format.name == "openai-json":
            assert json.loads(out) == json.loads(original), p
        else:
            assert [json.loads(x) for x in out.splitlines() if x.strip()] == [
                json.loads(x) for x in original.splitlines() if x.strip()
            ], p
        checked += 1
    assert checked


def test_apply_and_restore_every_sample_session(tmp_path):
    paths = sample_paths()
    assert paths, f"the bundled samples are missing from {SAMPLES}"
    for p in paths:
        work = tmp_path / p.name
        if p.is_dir():
            shutil.copytree(p, work)
            target = work / "context.jsonl"
        else:
            shutil.copy2(p, work)
            target = work
        session = load_session(target)
        plan = make_plan(session.messages)
        if plan.noop:
            continue
        before = target.read_bytes()
        result = do_apply(target)
        assert result.backup_path.read_bytes() == before
        reloaded = load_session(target)
        assert len(reloaded.messages) == result.messages_after
        restore(target)
        assert target.read_bytes() == before


# ----------------------------------------------------------------------------- kimi-cli parity


def test_rotation_number_follows_existing_rotations(tmp_path):
    path = kimi_session(tmp_path / "s", 8)
    (tmp_path / "s" / "context_1.jsonl").write_text("old1\n")
    (tmp_path / "s" / "context_3.jsonl").write_text("old3\n")
    result = do_apply(path)
    assert result.backup_path.name == "context_4.jsonl"
    assert (tmp_path / "s" / "context_1.jsonl").read_text() == "old1\n"
    assert (tmp_path / "s" / "context_3.jsonl").read_text() == "old3\n"


def test_backup_keeps_the_original_mtime(tmp_path):
    path = kimi_session(tmp_path / "s", 8)
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    result = do_apply(path)
    assert result.backup_path.stat().st_mtime_ns == 1_700_000_000_000_000_000


# ----------------------------------------------------------------------------- other formats


def test_openai_json_backup_and_summary_message(tmp_path):
    path = openai_session(tmp_path / "chat.json")
    before = path.read_bytes()
    result = do_apply(path)
    assert result.backup_path == tmp_path / "chat.json.bak-20261130T031700Z"
    assert result.backup_path.read_bytes() == before
    data = json.loads(path.read_text())
    assert data["model"] == "x"
    assert data["messages"][0] == {"role": "system", "content": "sys"}
    summary_msg = data["messages"][1]
    assert summary_msg["role"] == "user" and isinstance(summary_msg["content"], str)
    assert summary_msg["content"].endswith("\nSUMMARY TEXT")
    assert data["messages"][2:] == json.loads(before)["messages"][-2:]
    # A second apply in the same second gets a unique name.
    second = do_apply(path, "AGAIN")
    assert second.backup_path == tmp_path / "chat.json.bak-20261130T031700Z-1"
    assert second.backup_path.read_bytes() != before


def test_openai_jsonl_apply(tmp_path):
    path = tmp_path / "chat.jsonl"
    rows = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"r{i}"} for i in range(6)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    do_apply(path)
    got = [json.loads(x) for x in path.read_text().splitlines()]
    assert got[0]["content"].endswith("SUMMARY TEXT")
    assert got[1:] == rows[-2:]


# ----------------------------------------------------------------------------- conflicts


def test_conflict_appended_line_refused_and_nothing_written(tmp_path):
    path = kimi_session(tmp_path / "s", 8)
    fp = fingerprint(path)
    session = load_session(path)
    plan = make_plan(session.messages)
    compacted = build_compacted_session(session, plan, "S")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(dump_message({"role": "user", "content": "appended by kimi-cli"}) + "\n")
    changed = path.read_bytes()
    names = listing(path.parent)
    with pytest.raises(ApplyError) as info:
        apply_compaction(
            session,
            compacted,
            loaded_fingerprint=fp,
            summary="S",
            plan=plan,
            provenance=Provenance(prompt=None, provider="p", model="m", usage=None),
        )
    message = str(info.value)
    assert str(path) in message and "changed on disk" in message and "\n" not in message
    assert path.read_bytes() == changed
    assert listing(path.parent) == names  # no backup, no audit, no temp file


def test_conflict_on_same_size_rewrite_and_on_touch(tmp_path):
    path = kimi_session(tmp_path / "s", 8)
    fp = fingerprint(path)
    data = path.read_bytes()
    path.write_bytes(data.replace(b"turn 0", b"TURN 0"))
    os.utime(path, ns=(fp.mtime_ns, fp.mtime_ns))
    session = load_session(path)
    with pytest.raises(ApplyError, match="content changed"):
        do_apply(path, loaded_fingerprint=fp)
    path.write_bytes(data)
    os.utime(path, ns=(fp.mtime_ns + 10**9, fp.mtime_ns + 10**9))
    with pytest.raises(ApplyError, match="modification time"):
        do_apply(path, loaded_fingerprint=fp)
    assert session  # loaded fine; only the write was refused
    assert not (path.parent / "context_1.jsonl").exists()


def test_summary_must_be_the_reviewed_text(tmp_path):
    path = kimi_session(tmp_path / "s", 8)
    fp = fingerprint(path)
    session = load_session(path)
    plan = make_plan(session.messages)
    compacted = build_compacted_session(session, plan, "what the model wrote")
    with pytest.raises(ApplyError, match="reviewed summary"):
        apply_compaction(
            session,
            compacted,
            loaded_fingerprint=fp,
            summary="an edited text",
            plan=plan,
            provenance=Provenance(prompt=None, provider="p", model="m", usage=None),
        )
    with pytest.raises(ApplyError, match="empty"):
        do_apply(path, "   ")
    assert not (path.parent / "context_1.jsonl").exists()


# ----------------------------------------------------------------------------- permissions


@pytest.mark.parametrize("kind", ["kimi", "openai"])
def test_file_mode_kept(tmp_path, kind):
    path = kimi_session(tmp_path / "s") if kind == "kimi" else openai_session(tmp_path / "c.json")
    path.chmod(0o600)
    result = do_apply(path)
    assert path.stat().st_mode & 0o7777 == 0o600
    assert result.backup_path.stat().st_mode & 0o7777 == 0o600
    assert audit_path(path).stat().st_mode & 0o077 == 0
    restore(path)
    assert path.stat().st_mode & 0o7777 == 0o600


# ----------------------------------------------------------------------------- audit log


def test_audit_record_contents_and_no_key(tmp_path, monkeypatch):
    secret = "sk-test-" + uuid.uuid4().hex
    monkeypatch.setenv("MY_TEST_KEY", secret)
    provider = ProviderConfig(
        kind="openai",
        base_url="https://user:hunter2@llm.example/v1",
        model="gpt-x",
        api_key_env="MY_TEST_KEY",
    )

    prompt = PromptSource("file", "/p/compact.md", "PROMPT", "ab" * 32)
    path = kimi_session(tmp_path / "s", 10)
    usage = {"prompt_tokens": 100, "completion_tokens": 20, "api_key": secret, "note": "x"}
    result = do_apply(path, "SUM", provenance=provenance_of(prompt, provider, "gpt-x", usage))
    text = audit_path(path).read_text()
    assert secret not in text and "hunter2" not in text
    (rec,) = read_audit(path)
    assert rec["action"] == "apply"
    assert rec["time"] == "2026-11-30T03:17:00Z"
    assert rec["source"] == str(path) and rec["backup"] == str(result.backup_path)
    assert rec["indices"]["compacted"] == [0, 8] and rec["indices"]["kept"] == [8, 10]
    assert rec["prompt"] == {
        "source": "file",
        "path": "/p/compact.md",
        "sha256": "ab" * 32,
        "upstream_exact": False,
    }
    assert rec["provider"] == "openai" and "llm.example" in rec["provider_detail"]
    assert rec["model"] == "gpt-x"
    assert rec["usage"] == {"prompt_tokens": 100, "completion_tokens": 20}
    assert rec["summary_sha256"] == hashlib.sha256(b"SUM").hexdigest()
    assert rec["before"]["sha256"] == sha(result.backup_path)
    assert rec["after"]["sha256"] == sha(path)
    assert rec["before"]["messages"] == 10 and rec["after"]["messages"] == 3


# ----------------------------------------------------------------------------- restore


def test_restore_after_apply_and_apply_after_restore(tmp_path):
    path = kimi_session(tmp_path / "s", 8)
    original = path.read_bytes()
    first = do_apply(path, "FIRST")
    compacted = path.read_bytes()
    points = restore_points(path.parent)
    assert [p.path.name for p in points] == ["context_1.jsonl"]
    assert "before the compaction" in points[0].origin
    res = restore(path.parent)
    assert res.changed and res.restored_from == first.backup_path
    assert path.read_bytes() == original
    assert res.replaced_backup == path.parent / "context_2.jsonl"
    assert res.replaced_backup.read_bytes() == compacted
    assert (res.messages_before, res.messages_after) == (3, 8)
    assert "context_1.jsonl" in res.describe()
    # Apply again after the restore: a fresh load, a new rotation.
    second = do_apply(path, "SECOND")
    assert second.backup_path == path.parent / "context_3.jsonl"
    assert second.backup_path.read_bytes() == original
    assert load_session(path).messages[0].text().endswith("SECOND")
    actions = [r["action"] for r in read_audit(path)]
    assert actions == ["apply", "restore", "apply"]
    # Nothing was ever lost: every version is still on disk.
    versions = {p.read_bytes() for p in path.parent.glob("context*.jsonl")}
    assert original in versions and compacted in versions


def test_a_second_undo_does_not_redo_and_picking_redoes_without_new_copies(tmp_path):
    path = openai_session(tmp_path / "c.json")
    original = path.read_bytes()
    do_apply(path)
    compacted = path.read_bytes()
    restore(path, now=datetime(2026, 11, 30, 4, 0, tzinfo=UTC))
    assert path.read_bytes() == original
    copies = sorted(p.name for p in tmp_path.glob("c.json.bak-*"))
    # A second undo would re-apply the compaction just undone: refused, nothing changes.
    with pytest.raises(
        ApplyError,
        match="nothing of ours to undo: the last compaction written here was already undone",
    ):
        restore(path, now=datetime(2026, 11, 30, 4, 1, tzinfo=UTC))
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.glob("c.json.bak-*")) == copies
    # Redo is explicit: pick the copy holding the compacted version.
    (redo,) = [p for p in restore_points(path) if p.path.read_bytes() == compacted]
    restore(path, redo, now=datetime(2026, 11, 30, 4, 2, tzinfo=UTC))
    assert path.read_bytes() == compacted
    # Back and forth again: every version already has a copy, so no new one piles up.
    (back,) = [p for p in restore_points(path) if p.path.read_bytes() == original]
    restore(path, back, now=datetime(2026, 11, 30, 4, 3, tzinfo=UTC))
    restore(path, redo, now=datetime(2026, 11, 30, 4, 4, tzinfo=UTC))
    assert path.read_bytes() == compacted
    assert sorted(p.name for p in tmp_path.glob("c.json.bak-*")) == copies


def test_restore_named_point_and_errors(tmp_path):
    path = kimi_session(tmp_path / "s", 8)
    with pytest.raises(ApplyError, match="no restore points"):
        restore(path)
    original = path.read_bytes()
    do_apply(path, "ONE")
    do_apply(path, "TWO")
    restore(path, "context_1.jsonl")
    assert path.read_bytes() == original
    with pytest.raises(ApplyError, match="not a restore point"):
        restore(path, "context_99.jsonl")
    # A broken restore point is refused, the session untouched.
    (path.parent / "context_9.jsonl").write_text("{not json\n")
    before = path.read_bytes()
    with pytest.raises(ApplyError, match="not a valid session"):
        restore(path, "context_9.jsonl")
    assert path.read_bytes() == before


# ----------------------------------------------------------------------------- full disk, read-only


def enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("where", ["fsync", "replace"])
@pytest.mark.parametrize("kind", ["kimi", "openai"])
def test_full_disk_simulated(tmp_path, monkeypatch, where, kind):
    path = kimi_session(tmp_path / "s") if kind == "kimi" else openai_session(tmp_path / "c.json")
    digest = sha(path)
    names = listing(path.parent)
    if where == "fsync":
        monkeypatch.setattr(os, "fsync", enospc)
    else:
        monkeypatch.setattr(os, "replace", enospc)
    with pytest.raises(ApplyError) as info:
        do_apply(path)
    monkeypatch.undo()
    msg = str(info.value)
    assert str(path) in msg and "no space left" in msg and "nothing was changed" in msg
    assert sha(path) == digest
    assert listing(path.parent) == names  # no backup, no temp file, no audit


def test_read_only_simulated(tmp_path, monkeypatch):
    path = kimi_session(tmp_path / "s")
    digest = sha(path)
    names = listing(path.parent)

    def erofs(*a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "mkstemp", erofs)
    with pytest.raises(ApplyError, match="read-only"):
        do_apply(path)
    monkeypatch.undo()
    assert sha(path) == digest and listing(path.parent) == names


@contextlib.contextmanager
def tiny_tmpfs(tmp_path: Path, size: str):
    mnt = tmp_path / f"mnt-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    res = procs.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({res.stderr.strip() or res.returncode})")
    try:
        yield mnt
    finally:
        procs.run(["umount", "-l", str(mnt)], capture_output=True)


def test_full_disk_real_tmpfs(tmp_path):
    with tiny_tmpfs(tmp_path, "64k") as mnt:
        folder = mnt / "s"
        path = kimi_session(folder, 250)  # ~11 KB; filler leaves no room for a copy
        filler = mnt / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * 1024)
        finally:
            os.close(fd)
        digest = sha(path)
        names = listing(folder)
        with pytest.raises(ApplyError) as info:
            do_apply(path)
        assert "no space left" in str(info.value)
        assert sha(path) == digest
        assert listing(folder) == names


def test_read_only_folder_real(tmp_path):
    if os.geteuid() != 0:
        path = kimi_session(tmp_path / "s")
        path.parent.chmod(0o555)
        try:
            digest, names = sha(path), listing(path.parent)
            with pytest.raises(ApplyError, match="permission denied|read-only"):
                do_apply(path)
            assert sha(path) == digest and listing(path.parent) == names
        finally:
            path.parent.chmod(0o755)
        return
    with tiny_tmpfs(tmp_path, "1m") as mnt:
        path = kimi_session(mnt / "s")
        res = procs.run(["mount", "-o", "remount,ro", str(mnt)], capture_output=True)
        if res.returncode != 0:
            pytest.skip("cannot remount the tmpfs read-only")
        digest, names = sha(path), listing(path.parent)
        with pytest.raises(ApplyError, match="read-only"):
            do_apply(path)
        assert sha(path) == digest and listing(path.parent) == names


# ----------------------------------------------------------------------------- the job, in place


class FakeStdin(io.StringIO):
    def __init__(self, text: str, tty: bool) -> None:
        super().__init__(text)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def cli_setup(tmp_path: Path):
    path = kimi_session(tmp_path / "s", 8)
    job = CompactionJob.load(path, AppConfig())
    return path, job, job.prepare()


def stream(status: str = "complete", summary: str = "STREAMED", **kw) -> StreamResult:
    return StreamResult(status=status, summary=summary, provider="offline", **kw)


def in_place(job, prep, result, **kw):
    run = CompactionRun(job.session, job.config, prep, ProviderConfig(), result, None, job)
    run.draft = job.draft(prep, result, kw.pop("summary", None))
    opts = CompactOptions(SessionOptions(str(job.session.path)), **kw.pop("args", {}))
    return write_in_place(opts, run, **kw)


def test_job_draft_needs_complete_summary(tmp_path):
    path, job, prep = cli_setup(tmp_path)
    before = sha(path)
    for status in ("truncated", "failed", "cancelled"):
        with pytest.raises(UserError, match=status):
            job.draft(prep, stream(status, error="cut"))
    with pytest.raises(UserError, match="empty"):
        job.draft(prep, stream(summary=" "))
    with pytest.raises(UserError, match="empty"):
        job.draft(prep, stream(), "  ")
    assert sha(path) == before and not (path.parent / "context_1.jsonl").exists()


def test_in_place_confirmation(tmp_path):
    path, job, prep = cli_setup(tmp_path)
    before = sha(path)
    out = io.StringIO()
    with pytest.raises(UserError, match="--yes"):
        in_place(job, prep, stream(), args={"yes": False}, stdin=FakeStdin("y\n", False))
    got = in_place(job, prep, stream(), args={"yes": False}, stdin=FakeStdin("n\n", True), out=out)
    assert got is None and "Not written" in out.getvalue() and sha(path) == before
    got = in_place(
        job,
        prep,
        stream(usage={"completion_tokens": 50}),
        args={"yes": False},
        stdin=FakeStdin("yes\n", True),
        out=out,
    )
    assert got is not None and got.backup_path.name == "context_1.jsonl"
    written = load_session(path)
    assert written.messages[0].text().endswith("STREAMED")
    assert written.meta.recorded_tokens is not None and written.meta.recorded_tokens >= 50
    assert "Wrote" in out.getvalue()


def test_in_place_yes_uses_edited_summary(tmp_path):
    path, job, prep = cli_setup(tmp_path)
    result = in_place(
        job,
        prep,
        stream(usage={"completion_tokens": 50}),
        summary="EDITED BY USER",
        args={"yes": True},
        stdin=FakeStdin("", False),
        out=io.StringIO(),
    )
    assert result is not None
    written = load_session(path)
    assert written.messages[0].text().endswith("EDITED BY USER")
    # The provider's 50 output tokens described the unedited text: estimated instead.
    assert written.meta.recorded_tokens == sum(len(m.text()) for m in written.messages) // 4


def test_step_hook_is_off_by_default():
    assert durable_mod._step_hook is None


def test_load_fingerprints_the_bytes_it_parses(tmp_path):
    path = kimi_session(tmp_path / "s", 6)
    loaded = load(path.parent)
    session, fp = loaded.session, loaded.fingerprint
    assert session.path == path and len(session.messages) == 6
    assert fp == fingerprint(path)
    assert fp.sha256 == sha(path) and fp.size == path.stat().st_size
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    with pytest.raises(UserError, match="empty"):
        load(empty)


def test_audit_failure_does_not_undo_the_apply(tmp_path):
    path = kimi_session(tmp_path / "s", 8)
    audit_path(path).mkdir()  # the audit line cannot be appended
    result = do_apply(path)
    assert result.audit_error and str(audit_path(path)) in result.audit_error
    assert result.audit_path is None
    assert "warning:" in result.describe()
    assert load_session(path).messages[0].text().endswith("SUMMARY TEXT")
    assert result.backup_path.exists()


def test_restore_when_the_session_file_was_deleted(tmp_path):
    path = kimi_session(tmp_path / "s", 8)
    original = path.read_bytes()
    path.chmod(0o640)
    do_apply(path)
    path.unlink()
    res = restore(path.parent)
    assert res.changed and res.replaced_backup is None
    assert path.read_bytes() == original
    assert path.stat().st_mode & 0o7777 == 0o640
    assert "no current file" in res.describe()

"""Audit logs and restore points made before the storage contract still restore.

``tests/fixtures/legacy_store/root`` was made by main's code before the
session reference and the write strategies (``make.py`` there says how): one
session per way of writing there was (kimi-cli's rotation, an OpenAI file's
backup, a kimi-code journal's append), each compacted once, with the copy and
the audit log as that code laid them out. The audit log records absolute
paths, so the fixture is moved as a whole, as a user's home would be.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from kimi_compact_tui import store
from kimi_compact_tui.formats import load
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "legacy_store" / "root"
NAMES = ("kimi", "openai-json", "kimi-code")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def legacy(tmp_path: Path) -> tuple[Path, dict[str, dict[str, str]]]:
    """The fixture copied to ``tmp_path``, the paths recorded in it moved with it."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURE, root, symlinks=True)
    manifest = json.loads((root / "manifest.json").read_text())
    for file in root.rglob("*"):  # the audit logs, and kimi-code's session index
        if file.is_file() and manifest["root"].encode() in file.read_bytes():
            mode = file.stat().st_mode
            file.write_bytes(file.read_bytes().replace(manifest["root"].encode(), bytes(root)))
            file.chmod(mode)
    return root, manifest["sessions"]


@pytest.mark.parametrize("name", NAMES)
def test_an_old_write_is_listed_and_undone_by_the_new_store(legacy, name, cli_main):  # noqa: F811
    root, sessions = legacy
    made = sessions[name]
    path, backup = root / made["path"], root / made["backup"]
    assert sha(path) == made["written_sha256"] and sha(backup) == made["original_sha256"]

    target = store.locate(root / made["opened"])
    assert target.path == path and target.ref.key is None
    (record,) = store.read_audit(target.ref, target.format)
    assert record["action"] == "apply" and record["format"] == name
    points = store.restore_points(target)
    assert [p.path for p in points if p.ours] == [backup]  # labelled from the old log
    plan = store.undo_plan(target)
    assert plan.source == backup and plan.changed_since is None
    # the journal's append is cut back, as the old record's offset says
    assert (plan.truncate_to is not None) == (name == "kimi-code")

    done = cli_main("restore", root / made["opened"], "--yes")
    assert done.code == 0, done.stderr
    assert sha(path) == made["original_sha256"]
    assert len(load(root / made["opened"]).session.messages) > 0
    records = store.read_audit(target.ref, target.format)
    assert [r["action"] for r in records] == ["apply", "restore"]  # the same log, grown


def test_an_old_write_changed_since_is_refused_by_the_new_store(legacy, cli_main):  # noqa: F811
    root, sessions = legacy
    made = sessions["kimi-code"]
    path = root / made["path"]
    with open(path, "ab") as fh:  # kimi-code resumed the session after the old write
        fh.write(b'{"type":"turn.begin","agentId":"main","time":1}\n')
    before = path.read_bytes()
    refused = cli_main("restore", root / made["opened"], "--yes")
    assert refused.code == 2 and path.read_bytes() == before
    assert "bytes were appended after our compaction records (kimi-code resumed" in refused.stderr

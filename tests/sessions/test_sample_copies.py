"""Sample copies do not pile up: making a new copy removes
the earlier ones that are unmodified (the sample's files, byte for byte) and
more than a day old. A modified copy (the user's work) and anything the app
did not make are never deleted."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kimi_compact_tui import samples

FOLDER = samples.samples_dir()
pytestmark = pytest.mark.skipif(FOLDER is None, reason="no bundled samples")
DIR_SAMPLE = "kimi-debugging-session"
FILE_SAMPLE = "openai-retry-refactor.json"
TWO_DAYS = 2 * 24 * 3600


def sample(name: str) -> Path:
    assert FOLDER is not None
    return FOLDER / name


def age(copy: Path, seconds: float) -> Path:
    """Date the copy's scratch folder ``seconds`` back; returns the scratch folder."""
    scratch = copy.parent
    when = time.time() - seconds
    os.utime(scratch, (when, when))
    return scratch


def test_a_new_copy_removes_old_unmodified_copies_only():
    old_dir = age(samples.copy_sample(sample(DIR_SAMPLE)), TWO_DAYS)
    old_file = age(samples.copy_sample(sample(FILE_SAMPLE)), TWO_DAYS)

    changed = samples.copy_sample(sample(DIR_SAMPLE))
    with (changed / "context.jsonl").open("ab") as fh:
        fh.write(b"\n")
    changed_scratch = age(changed, TWO_DAYS)

    added = samples.copy_sample(sample(FILE_SAMPLE))
    added.with_name(added.name + ".bak-20260101T000000Z").write_bytes(added.read_bytes())
    added_scratch = age(added, TWO_DAYS)

    recent = samples.copy_sample(sample(DIR_SAMPLE)).parent  # in use: less than a day old
    foreign = samples.copies_dir() / "notes"
    foreign.mkdir()
    odd = samples.copies_dir() / "20200101-000000-abc"  # our name, not our content
    (odd / "x").mkdir(parents=True)
    for folder in (foreign, odd):
        os.utime(folder, (time.time() - TWO_DAYS,) * 2)

    fresh = samples.copy_sample(sample(FILE_SAMPLE)).parent
    left = set(samples.copies_dir().iterdir())
    assert not old_dir.exists() and not old_file.exists()
    assert {changed_scratch, added_scratch, recent, foreign, odd, fresh} == left


def test_prune_copies_reports_what_it_removed():
    copy = samples.copy_sample(sample(DIR_SAMPLE))
    assert samples.is_unmodified_copy(copy, sample(DIR_SAMPLE))
    assert samples.prune_copies() == []  # less than a day old
    scratch = age(copy, TWO_DAYS)
    assert samples.prune_copies() == [scratch] and not scratch.exists()
    assert samples.prune_copies(samples.copies_dir() / "missing") == []


def test_unmodified_means_the_same_files_byte_for_byte(tmp_path):
    copy = samples.copy_sample(sample(DIR_SAMPLE))
    original = sample(DIR_SAMPLE)
    assert samples.is_unmodified_copy(copy, original)
    data = (copy / "wire.jsonl").read_bytes()
    (copy / "wire.jsonl").write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # same size
    assert not samples.is_unmodified_copy(copy, original)
    (copy / "wire.jsonl").write_bytes(data)
    assert samples.is_unmodified_copy(copy, original)
    (copy / "extra").mkdir()
    (copy / "extra" / "f").write_text("x", encoding="utf-8")
    assert not samples.is_unmodified_copy(copy, original)

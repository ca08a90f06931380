"""A bundled sample is never written, whichever front end
asks: the job refuses a write to it (and ``restore`` over it), and
``compact --in-place`` works on a fresh copy under the state folder, as the
TUI does, and says so.

The tests read the checkout's own samples. Each one snapshots the sample's
files first and puts them back if a write got through (so a regression fails
the test without leaving the checkout changed).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kimi_compact_tui import samples
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.providers.base import ProviderConfig, StreamResult

FOLDER = samples.samples_dir()
pytestmark = pytest.mark.skipif(FOLDER is None, reason="no bundled samples")


def snapshot(top: Path) -> dict[Path, bytes]:
    if top.is_file():
        return {top: top.read_bytes()}
    return {p: p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()}


@pytest.fixture(params=["kimi-debugging-session", "openai-retry-refactor.json"])
def sample(request) -> Iterator[Path]:
    assert FOLDER is not None
    top = FOLDER / request.param
    before = snapshot(top)
    folder = top if top.is_dir() else top.parent
    names = sorted(p.name for p in folder.iterdir())
    yield top
    after = snapshot(top)
    for extra in sorted(set(folder.iterdir()) - {folder / n for n in names}):
        extra.unlink()  # a rotation, a backup or an audit log a regression left
    for path, data in before.items():
        if after.get(path) != data:
            path.write_bytes(data)
    assert after == before, f"{top}: the sample was changed"
    assert sorted(p.name for p in folder.iterdir()) == names


def copies_root() -> Path:
    """``<state>/samples``, where the copies are made."""
    return samples.state_dir() / samples.COPIES


@pytest.mark.parametrize("json_out", [False, True])
def test_compact_in_place_on_a_sample_works_on_a_copy_and_says_so(cli_main, sample, json_out):
    argv = ["compact", sample, "--in-place", "--yes", "--provider", "offline"]
    result = cli_main(*argv, *(["--json"] if json_out else []))
    assert result.code == 0, result.stderr
    assert "is a bundled sample, which never changes: compacting a copy of it" in result.stderr
    (scratch,) = list(copies_root().iterdir())
    copy = scratch / sample.name
    assert str(copy) in result.stderr
    assert not samples.is_unmodified_copy(copy, sample)  # the copy was compacted
    if json_out:
        import json

        data = json.loads(result.stdout)
        assert data["written"] is True and data["output"].startswith(str(scratch))


def test_the_job_refuses_to_write_a_sample(sample):
    from kimi_compact_tui.job import RefusalKind

    job = CompactionJob.load(sample, AppConfig())
    prep = job.prepare()
    ready = job.readiness(prep, ProviderConfig(), write=True)
    assert RefusalKind.SAMPLE in ready.kinds()
    draft = job.draft(prep, StreamResult(status="complete", summary="SUMMARY"))
    with pytest.raises(ApplyError, match="a bundled sample is never changed") as info:
        job.commit(draft, ProviderConfig())
    assert str(copies_root()) in str(info.value) and "--output" in str(info.value)


@pytest.mark.parametrize("extra", [[], ["--point", "x"], ["--force"]])
def test_restore_on_a_sample_is_refused_in_one_line(cli_main, sample, extra):
    result = cli_main("restore", sample, "--yes", *extra)
    assert result.code == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "a bundled sample is never changed" in result.stderr


def test_restore_list_on_a_sample_only_looks(cli_main, sample):
    result = cli_main("restore", sample, "--list")
    assert result.code == 0, result.stderr


def test_compact_output_from_a_sample_writes_the_new_file_only(cli_main, sample, tmp_path):
    out = tmp_path / ("out" + (".json" if sample.is_file() else ".jsonl"))
    result = cli_main("compact", sample, "--provider", "offline", "--output", out)
    assert result.code == 0, result.stderr
    assert out.exists() and not copies_root().exists()


def test_the_issue_command_from_the_checkout(cli_main, sample, monkeypatch):
    """``compact sample_sessions/kimi-debugging-session --in-place --yes``, as
    typed in the checkout: a relative path names the sample too."""
    assert FOLDER is not None
    monkeypatch.chdir(FOLDER.parent)
    relative = Path(FOLDER.name) / sample.name
    result = cli_main("compact", relative, "--in-place", "--yes", "--provider", "offline")
    assert result.code == 0, result.stderr
    assert "compacting a copy of it" in result.stderr

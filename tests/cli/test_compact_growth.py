"""A compaction that makes the session larger is said, with both figures,
before it is written: ``compact`` with ``--output``, with
``--in-place`` (in its question too) and when it only prints the summary."""

from __future__ import annotations

import asyncio
import io
import json
import re
from pathlib import Path

import pytest

from kimi_compact_tui.commands.compact import write_in_place
from kimi_compact_tui.commands.compact.options import CompactOptions
from kimi_compact_tui.commands.compact.run import run_compaction
from kimi_compact_tui.commands.options import ProviderOptions, SessionOptions
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.providers.base import ProviderConfig, StreamResult
from tests.factories import conversation, write_session

GROWTH = re.compile(r"makes the session larger, not smaller: ~([\d,]+) → ~([\d,]+) tokens")


def small(tmp_path: Path) -> Path:
    """Eight short turns: the summary's six sections outweigh what they replace."""
    return write_session(tmp_path / "s", "openai-json", conversation(8))


def large(tmp_path: Path) -> Path:
    words = " ".join(f"word{i}" for i in range(600))
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}: {words}"}
        for i in range(12)
    ]
    return write_session(tmp_path / "s", "openai-json", messages)


def figures(stderr: str) -> tuple[int, int]:
    found = GROWTH.search(stderr)
    assert found is not None, stderr
    return int(found[1].replace(",", "")), int(found[2].replace(",", ""))


def expected(path: Path) -> tuple[int, int]:
    """The job's own figures for the offline summary of ``path``."""
    job = CompactionJob.load(path, AppConfig())
    prep = job.prepare()
    result = asyncio.run(job.summarize(prep, ProviderConfig()))  # offline: no model
    draft = job.draft(prep, result)
    assert draft.grows
    return draft.tokens_before, draft.tokens_after


@pytest.mark.parametrize(
    "mode",
    [["--output", "{out}"], ["--in-place", "--yes"], []],
    ids=["output", "in-place", "print"],
)
def test_a_growing_compaction_is_warned_with_both_figures(cli_main, tmp_path, mode):
    path = small(tmp_path)
    want = expected(path)
    argv = [a.replace("{out}", str(tmp_path / "out.json")) for a in mode]
    result = cli_main("compact", path, "--provider", "offline", *argv)
    assert result.code == 0, result.stderr
    assert figures(result.stderr) == want and want[1] > want[0]
    assert result.stderr.count("makes the session larger") == 1


def test_the_in_place_question_carries_the_warning(tmp_path):
    path = small(tmp_path)
    args = CompactOptions(
        SessionOptions(str(path)), ProviderOptions("offline"), in_place=True, yes=False
    )
    run = run_compaction(args)

    class Tty:
        def isatty(self) -> bool:
            return True

        def readline(self) -> str:
            return "n\n"

    out = io.StringIO()
    assert write_in_place(args, run, stdin=Tty(), out=out) is None
    question = out.getvalue()
    assert "Write it? [y/N]" in question and GROWTH.search(question), question


def test_json_says_it_grows_with_both_figures(cli_main, tmp_path):
    path = small(tmp_path)
    result = cli_main("compact", path, "--provider", "offline", "--json")
    data = json.loads(result.stdout)
    assert data["grows"] is True and data["tokens_after"] > data["tokens_before"] > 0
    assert figures(result.stderr) == (data["tokens_before"], data["tokens_after"])


def test_a_shrinking_compaction_says_nothing_of_growth(cli_main, tmp_path):
    path = large(tmp_path)
    result = cli_main("compact", path, "--provider", "offline", "--output", tmp_path / "o.json")
    assert result.code == 0, result.stderr
    assert "larger" not in result.stderr


def test_the_draft_exposes_the_figures_the_tui_shows(tmp_path):
    """The TUI's confirmation reads these, unchanged in name."""
    job = CompactionJob.load(small(tmp_path), AppConfig())
    prep = job.prepare()
    draft = job.draft(prep, StreamResult(status="complete", summary="word " * 2000))
    assert draft.grows and draft.tokens_after > draft.tokens_before == prep.tokens_before
    line = draft.growth_warning()
    assert line is not None and f"~{draft.tokens_before:,}" in line
    assert f"~{draft.tokens_after:,} tokens" in line
    short = job.draft(prep, StreamResult(status="complete", summary="S"))
    assert not short.grows and short.growth_warning() is None

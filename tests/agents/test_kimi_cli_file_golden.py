"""File-level golden data made at test time: kimi-cli's own ``context.jsonl`` before and
after its own ``/compact``.

The pair comes from the session kimi-cli 1.51.0 wrote (the shared template: 4 turns, 2 real
shell tool calls), compacted by kimi-cli's ``/compact`` against the fake model; kimi-cli
keeps the file before as ``context_1.jsonl``. With ../shared/reference present, its stored
pair is checked the same way (an extra source; nothing here needs it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.diff import diff_sessions
from kimi_compact_tui.formats import dump_session, load_session
from kimi_compact_tui.job import build_compacted_session
from tests.agents.fake_model import COMPLETION_TOKENS, FakeModel
from tests.core_helpers import KIMI_REF

pytestmark = pytest.mark.agents

SUMMARY = "<current_focus>\nFAKE SUMMARY — 摘要: echo hello, echo world\n</current_focus>"
REFERENCE_SUMMARY = "<current_focus>\nSUMMARY\n</current_focus>"  # see its README
REFERENCE_OUTPUT_TOKENS = 321


@dataclass(frozen=True)
class GoldenPair:
    source: str
    before: Path
    after: Path
    summary: str
    output_tokens: int


@pytest.fixture(scope="module")
def golden_pairs(kimi_cli_session_template, tmp_path_factory) -> list[GoldenPair]:
    template, sid = kimi_cli_session_template
    with FakeModel(summary=SUMMARY, lifetime=300) as fake:
        cli = template.clone(tmp_path_factory.mktemp("file-golden") / "cli", fake)
        assert len(cli.compact(sid).compaction_bodies()) == 1
    folder = cli.session_dir(sid)
    pairs = [
        GoldenPair(
            "kimi-cli",
            folder / "context_1.jsonl",
            folder / "context.jsonl",
            SUMMARY,
            COMPLETION_TOKENS,
        )
    ]
    golden = KIMI_REF / "golden"
    before, after = (
        golden / "context_before_compaction.jsonl",
        golden / "context_after_compaction.jsonl",
    )
    if before.is_file() and after.is_file():
        pairs.append(
            GoldenPair("reference", before, after, REFERENCE_SUMMARY, REFERENCE_OUTPUT_TOKENS)
        )
    return pairs


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_kimi_clis_files_load_with_their_records_and_round_trip(golden_pairs, tmp_path):
    for pair in golden_pairs:
        for path in (pair.before, pair.after):
            where = f"{pair.source}: {path.name}"
            records = _records(path)
            session = load_session(path)
            assert session.format.name == "kimi", where
            prompts = [r["content"] for r in records if r["role"] == "_system_prompt"]
            usages = [r["token_count"] for r in records if r["role"] == "_usage"]
            assert prompts and session.meta.system_prompt == prompts[-1], where
            assert usages and session.meta.recorded_tokens == usages[-1], where
            history = [r for r in records if not r["role"].startswith("_")]
            assert [m.data for m in session.messages] == history, where  # metadata is not history
            assert dump_session(session) == path.read_bytes(), where
        # a session folder opens its context.jsonl
        folder = tmp_path / pair.source
        folder.mkdir()
        (folder / "context.jsonl").write_bytes(pair.before.read_bytes())
        assert dump_session(load_session(folder)) == pair.before.read_bytes()


def test_our_compaction_of_kimi_clis_file_is_the_file_kimi_cli_wrote(golden_pairs):
    for pair in golden_pairs:
        session = load_session(pair.before)
        compacted = build_compacted_session(
            session, make_plan(session.messages), pair.summary, output_tokens=pair.output_tokens
        )
        ours = dump_session(compacted).decode("utf-8").splitlines()
        theirs = pair.after.read_text(encoding="utf-8").splitlines()
        assert len(ours) == len(theirs), pair.source
        for i, (mine, want) in enumerate(zip(ours, theirs, strict=True), 1):
            assert mine == want, f"{pair.source}: line {i} differs"


def test_diff_of_kimi_clis_pair_is_the_diff_of_our_compaction(golden_pairs, cli_main):
    for pair in golden_pairs:
        result = cli_main("diff", pair.before, pair.after, "--json")
        assert result.code == 0, result.stderr
        data = json.loads(result.stdout)
        before, after = load_session(pair.before), load_session(pair.after)
        assert data["counts"]["removed"] + data["counts"]["kept"] == len(before.messages)
        assert data["counts"]["added"] == 1  # the summary message
        assert data["after"]["recorded_tokens"] == after.meta.recorded_tokens
        ours = build_compacted_session(
            before, make_plan(before.messages), pair.summary, output_tokens=pair.output_tokens
        )
        mine = diff_sessions(before, ours)
        assert [r["kind"] for r in data["rows"]] == [r.kind for r in mine.rows], pair.source

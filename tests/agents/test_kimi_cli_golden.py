"""Golden cases made at test time by kimi-cli 1.51.0's own code.

Every case of tests/agents/compaction_cases.py is run through kimi-cli's
``SimpleCompaction.prepare`` / ``compact`` and kosong's message model (in kimi-cli's venv,
one subprocess per run: tests/agents/kimi_cli_driver.py) and through our engine, and the
two must agree: the compaction input parts, the request kimi-cli hands its chat provider
(with kimi-cli's installed ``compact.md`` as our prompt), the preserved tail, and for a
kimi-cli session the compacted messages, their token estimate and the lines written.

One difference is by design (the spec keeps a leading system message): where kimi-cli
would compact nothing but leading system messages, we do nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import dump_session, load_session, registry
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.job import build_compacted_session, prepare_compaction
from kimi_compact_tui.model import Message
from tests.agents.compaction_cases import (
    ALL_CASES,
    CASES,
    NOT_KIMI_FORM,
    OUTPUT_TOKENS,
    REFERENCE_CASES,
    SUMMARY,
)
from tests.agents.harness import KIMI_CLI_VERSION, kimi_cli_compact_md

pytestmark = pytest.mark.agents

CASE_IDS = [c["name"] for c in ALL_CASES]


def _config(case: dict) -> AppConfig:
    block = {"enabled": True, "type": "kimi"}
    block["max_preserved_messages"] = case["max_preserved_messages"]
    return AppConfig(raw={"compaction": block})


def _upstream(kimi_cli_upstream: dict, case: dict) -> dict:
    got = kimi_cli_upstream["cases"][case["name"]]
    assert "error" not in got, f"kimi-cli rejected the case: {got.get('traceback')}"
    return got


def _kimi_session(tmp_path: Path, upstream: dict) -> Session:
    """The case as a kimi-cli session: the context.jsonl kimi-cli's Context writes."""
    folder = tmp_path / "session"
    folder.mkdir()
    path = folder / "context.jsonl"
    path.write_text(upstream["files"]["before"], encoding="utf-8")
    return load_session(path)


def test_the_driver_ran_the_installed_kimi_cli_on_every_case(kimi_cli_upstream):
    assert kimi_cli_upstream["kimi_cli_version"] == KIMI_CLI_VERSION
    assert set(kimi_cli_upstream["cases"]) == set(CASE_IDS)
    errors = {n: r["error"] for n, r in kimi_cli_upstream["cases"].items() if "error" in r}
    assert not errors
    # The inputs are written as kimi-cli writes messages, except the cases that say not.
    rewritten = {
        c["name"]
        for c in ALL_CASES
        if kimi_cli_upstream["cases"][c["name"]]["messages"] != c["messages"]
    }
    assert rewritten == NOT_KIMI_FORM
    # With ../shared/reference present: kimi-cli today gives what the stored cases recorded.
    for case in REFERENCE_CASES:
        stored, now = case["stored_upstream"], kimi_cli_upstream["cases"][case["name"]]
        assert now["compaction_input_parts"] == stored["compaction_input_parts"], case["name"]
        assert now["to_preserve"] == stored["to_preserve"], case["name"]
        got = now["request"]["messages"] if now["request"] else None
        assert got == stored["request_messages"], case["name"]
    # the prompt kimi-cli used is the compact.md our tests find in its venv
    compact_md = kimi_cli_compact_md()
    assert compact_md is not None and str(compact_md) == kimi_cli_upstream["compact_md"]
    assert hashlib.sha256(compact_md.read_bytes()).hexdigest() == kimi_cli_upstream["prompt_sha256"]


def test_the_cases_cover_what_kimi_cli_distinguishes(kimi_cli_upstream):
    results = [kimi_cli_upstream["cases"][n] for n in CASE_IDS]
    requests = [r for r in results if r["compaction_input_parts"] is not None]
    assert len(requests) >= 15 and len(results) - len(requests) >= 6  # requests and no-ops
    keeps = {c["max_preserved_messages"] for c in CASES}
    assert {0, 1, 2, 3} <= keeps
    roles = {m["role"] for c in CASES for m in c["messages"]}
    assert roles == {"system", "user", "assistant", "tool"}
    parts = {
        p["type"]
        for c in CASES
        for m in c["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
    }
    assert {"text", "think", "image_url", "audio_url", "video_url"} <= parts
    assert any(c["custom_instruction"] for c in CASES)
    # the designed difference is exercised: kimi-cli compacts only a leading system message
    assert any(_only_leading_system_compacted(kimi_cli_upstream["cases"][c["name"]]) for c in CASES)


def _only_leading_system_compacted(upstream: dict) -> bool:
    if upstream["compaction_input_parts"] is None:
        return False
    compacted = len(upstream["messages"]) - len(upstream["to_preserve"])
    leading = 0
    for m in upstream["messages"]:
        if m["role"] != "system":
            break
        leading += 1
    return compacted <= leading


@pytest.mark.parametrize("source", ["as-read", "kimi-cli-file"])
@pytest.mark.parametrize("case", ALL_CASES, ids=CASE_IDS)
def test_our_request_equals_kimi_clis(case, source, kimi_cli_upstream, monkeypatch, tmp_path):
    """Our plan and request for the case, with kimi-cli's installed compact.md as the prompt:
    ``as-read`` from the case's messages as written, ``kimi-cli-file`` from the context.jsonl
    kimi-cli writes for them."""
    upstream = _upstream(kimi_cli_upstream, case)
    monkeypatch.setenv("KIMI_CLI_COMPACT_MD", kimi_cli_upstream["compact_md"])
    if source == "as-read":
        session = registry.get("openai-json").from_messages([Message(m) for m in case["messages"]])
    else:
        session = _kimi_session(tmp_path, upstream)
    prep = prepare_compaction(session, _config(case), custom_instruction=case["custom_instruction"])
    plan = prep.plan
    assert prep.prompt.source == "kimi-cli" and prep.prompt.upstream_exact
    if upstream["compaction_input_parts"] is None:
        assert plan.noop and prep.request is None
        assert upstream["request"] is None
        return
    if _only_leading_system_compacted(upstream):
        assert plan.noop and prep.request is None, "the spec keeps leading system messages"
        return
    assert not plan.noop, plan.noop
    request = prep.request
    assert request.parts == upstream["compaction_input_parts"]
    assert request.body["messages"] == upstream["request"]["messages"]
    assert upstream["request"]["tools"] == [] and "tools" not in request.body
    # The preserved tail starts where kimi-cli's does, and we keep it as it was read.
    total = len(session.messages)
    tail_start = total - len(upstream["to_preserve"])
    assert list(plan.preserved_indices) == list(range(tail_start, total))
    assert upstream["messages"][tail_start:] == upstream["to_preserve"]
    kept = [session.messages[i].data for i in plan.preserved_indices]
    if source == "as-read":
        assert kept == case["messages"][tail_start:]
    else:
        assert kept == upstream["to_preserve"]


@pytest.mark.parametrize("case", ALL_CASES, ids=CASE_IDS)
def test_our_compacted_kimi_session_equals_kimi_clis(case, kimi_cli_upstream, tmp_path):
    """A kimi-cli session compacted by us: kimi-cli's file round-trips byte for byte, and
    the compacted messages, their token estimate (with and without the provider's output
    tokens) and the lines written are kimi-cli's own."""
    upstream = _upstream(kimi_cli_upstream, case)
    session = _kimi_session(tmp_path, upstream)
    assert dump_session(session).decode("utf-8") == upstream["files"]["before"]
    prep = prepare_compaction(session, _config(case))
    plan = prep.plan
    if upstream["compaction_input_parts"] is None or _only_leading_system_compacted(upstream):
        assert plan.noop
        return
    ours = build_compacted_session(session, plan, SUMMARY, output_tokens=OUTPUT_TOKENS)
    theirs = upstream["compacted"]
    assert theirs["requests"] == 1
    leading = [m.data for m in ours.messages[: plan.leading]]
    assert leading == upstream["messages"][: plan.leading]  # the spec keeps them
    assert [m.data for m in ours.messages[plan.leading :]] == theirs["messages"]
    assert ours.meta.recorded_tokens == theirs["estimated_token_count"]
    # the file: kimi-cli's records and lines, with the leading system messages kept after
    # its system prompt and checkpoint
    after = upstream["files"]["after"].splitlines(keepends=True)
    kept = upstream["files"]["before"].splitlines(keepends=True)[1 : 1 + plan.leading]
    assert dump_session(ours).decode("utf-8") == "".join(after[:2] + kept + after[2:])
    assert upstream["files"]["rotated"] == ["context_1.jsonl"]
    unreported = build_compacted_session(session, plan, SUMMARY, output_tokens=None)
    without = upstream["compacted_without_usage"]
    assert [m.data for m in unreported.messages[plan.leading :]] == without["messages"]
    assert unreported.meta.recorded_tokens == without["estimated_token_count"]

"""Replay the recorded provider streams in ../shared/reference/streams/ through the
loopback server. Expected text is computed from each file at test time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.providers import stream_summary
from tests.loopback_server import Reply

BODY = {
    "model": "m",
    "messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": [{"type": "text", "text": "u"}]},
    ],
    "stream": True,
}


def _sse_objects(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            out.append(json.loads(line[5:]))
    return out


def _expected_sse(path: Path) -> tuple[str, str, dict | None, str | None]:
    text, reasoning, usage, finish = [], [], None, None
    for obj in _sse_objects(path):
        if obj.get("usage"):
            usage = obj["usage"]
        for choice in obj.get("choices") or []:
            delta = choice.get("delta") or {}
            text.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or delta.get("reasoning") or "")
            if choice.get("usage"):
                usage = choice["usage"]
            finish = choice.get("finish_reason") or finish
    return "".join(text), "".join(reasoning), usage, finish


SSE_CASES = [
    ("openai_chat_stream.sse", "openai"),
    ("moonshot_kimi_stream_thinking.sse", "moonshot"),
    ("ollama_v1_chat_stream.sse", "openai"),
]


@pytest.mark.parametrize(("name", "kind"), SSE_CASES)
@pytest.mark.parametrize("split", [None, 1, 5, 33])
async def test_reference_sse_streams(
    loopback, provider_config, reference_streams, name, kind, split
):
    path = reference_streams / name
    if not path.exists():
        pytest.skip(f"{name} is not in {reference_streams}")
    summary, reasoning, usage, finish = _expected_sse(path)
    loopback.script([Reply.from_file(path, split_every=split)])
    result = await stream_summary(provider_config(kind), BODY)
    assert result.status == "complete"
    assert finish == "stop" == result.finish_reason
    assert result.summary == summary and summary
    assert result.reasoning == reasoning
    assert result.usage == usage and usage is not None


@pytest.mark.parametrize("split", [None, 1, 17])
async def test_reference_ollama_ndjson(loopback, provider_config, reference_streams, split):
    path = reference_streams / "ollama_api_chat.ndjson"
    if not path.exists():
        pytest.skip(f"{path.name} is not in {reference_streams}")
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    last = lines[-1]
    loopback.script([Reply.from_file(path, split_every=split)])
    result = await stream_summary(provider_config("ollama"), BODY)
    assert result.status == "complete"
    assert result.summary == "".join(x["message"].get("content", "") for x in lines)
    assert result.reasoning == "".join(x["message"].get("thinking", "") for x in lines)
    assert result.finish_reason == last["done_reason"]
    assert result.usage["prompt_tokens"] == last["prompt_eval_count"]
    assert result.usage["completion_tokens"] == last["eval_count"]


async def test_reference_stream_cut_before_done_fails(loopback, provider_config, reference_streams):
    path = reference_streams / "openai_chat_stream.sse"
    if not path.exists():
        pytest.skip(f"{path.name} is not in {reference_streams}")
    raw = path.read_bytes()
    cut = raw[: raw.index(b"data: [DONE]")]
    loopback.script([Reply(headers={"Content-Type": "text/event-stream"}, pieces=[cut])])
    result = await stream_summary(provider_config("openai"), BODY)
    assert result.status == "failed"
    assert result.summary == _expected_sse(path)[0]

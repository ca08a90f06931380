"""The fake Anthropic Messages API the real Claude Code talks to: SSE in the API's
event order, a scripted tool call, the compaction and side requests, count_tokens."""

from __future__ import annotations

import json

import httpx

from tests.agents.fake_anthropic import DEFAULT_TEXT, SIDE_TEXT, FakeAnthropic
from tests.agents.fake_model import text_turn, tool_turn

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def _events(body: str) -> list[tuple[str, dict]]:
    out = []
    for block in body.strip().split("\n\n"):
        name, data = block.split("\n", 1)
        out.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def test_streams_a_scripted_tool_call_then_text_and_records_everything():
    with FakeAnthropic(summary="SUM") as fa:
        fa.script(tool_turn("echo hi", text="Running."), text_turn("Done.", reasoning="think"))
        url = fa.base_url + "/v1/messages?beta=true"
        body = {"model": "m", "stream": True, "tools": TOOLS, "max_tokens": 100}
        body["messages"] = [{"role": "user", "content": "go"}]
        events = _events(httpx.post(url, json=body, timeout=10).text)
        names = [n for n, _ in events]
        assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
        starts = [e["content_block"] for n, e in events if n == "content_block_start"]
        assert [b["type"] for b in starts] == ["text", "tool_use"] and starts[1]["name"] == "Bash"
        args = [e["delta"]["partial_json"] for n, e in events if n == "content_block_delta"
                and e["delta"]["type"] == "input_json_delta"]  # fmt: skip
        assert json.loads("".join(args)) == {"command": "echo hi"}
        assert events[-2][1]["delta"]["stop_reason"] == "tool_use"

        second = httpx.post(url, json=dict(body, stream=False), timeout=10).json()
        assert [b["type"] for b in second["content"]] == ["thinking", "text"]
        assert second["stop_reason"] == "end_turn"
        third = httpx.post(url, json=dict(body, stream=False), timeout=10).json()
        assert third["content"] == [{"type": "text", "text": DEFAULT_TEXT}]  # nothing left
        ask = "Your task is to create a detailed summary of the conversation so far."
        compaction = dict(body, stream=False, messages=[{"role": "user", "content": ask}])
        assert httpx.post(url, json=compaction, timeout=10).json()["content"][0]["text"] == "SUM"
        side = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "title?"}]}
        assert httpx.post(url, json=side, timeout=10).json()["content"][0]["text"] == SIDE_TEXT
        counted = httpx.post(fa.base_url + "/v1/messages/count_tokens", json=body, timeout=10)
        assert counted.json()["input_tokens"] > 0
        assert httpx.post(fa.base_url + "/v1/other", json={}, timeout=10).status_code == 404
        kinds = [r.kind for r in fa.requests]
        assert kinds == ["turn", "turn", "turn", "compaction", "side", "count_tokens", "other"]
        assert fa.pending() == 0

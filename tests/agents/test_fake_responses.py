"""The fake Responses API Codex runs against: its SSE events on the wire, the scripted
turns, the tool call it makes Codex run, and compaction requests (no Codex needed)."""

from __future__ import annotations

import json

import httpx

from tests.agents.fake_responses import (
    COMPACTION_MARKER,
    DEFAULT_TEXT,
    FakeResponses,
    text_turn,
    tool_turn,
)


def _events(text: str) -> list[dict]:
    out = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in lines:
            data = json.loads(lines["data"])
            assert data["type"] == lines["event"]
            out.append(data)
    return out


def test_fake_responses_streams_script_records_and_answers_compaction():
    with FakeResponses(summary="SUM") as fm:
        fm.script(tool_turn("echo hi"), text_turn("hello there", reasoning="hmm"))
        url = fm.base_url + "/responses"
        tools = [{"type": "function", "name": "exec_command", "parameters": {}}]
        user = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "go"}],
        }
        body = {"model": "m", "stream": True, "tools": tools, "input": [user]}
        first = _events(httpx.post(url, json=body, timeout=10).text)
        assert [e["type"] for e in first] == [
            "response.created",
            "response.output_item.added",
            "response.output_item.done",
            "response.completed",
        ]
        call = first[2]["item"]
        assert call["type"] == "function_call" and call["name"] == "exec_command"
        assert json.loads(call["arguments"]) == {"cmd": "echo hi"}
        second = _events(httpx.post(url, json=body, timeout=10).text)
        items = [e["item"] for e in second if e["type"] == "response.output_item.done"]
        assert [i["type"] for i in items] == ["reasoning", "message"]
        deltas = "".join(e["delta"] for e in second if e["type"] == "response.output_text.delta")
        assert deltas == "hello there" == items[1]["content"][0]["text"]
        ask = dict(user, content=[{"type": "input_text", "text": f"You are {COMPACTION_MARKER}"}])
        third = _events(httpx.post(url, json=dict(body, input=[user, ask]), timeout=10).text)
        assert third[-2]["item"]["content"][0]["text"] == "SUM"
        fourth = _events(httpx.post(url, json=body, timeout=10).text)
        assert fourth[-2]["item"]["content"][0]["text"] == DEFAULT_TEXT
        assert [r.kind for r in fm.requests] == ["turn", "turn", "compaction", "turn"]
        assert fm.requests[0].json == body
        assert httpx.post(fm.base_url + "/chat/completions", json={}, timeout=10).status_code == 404

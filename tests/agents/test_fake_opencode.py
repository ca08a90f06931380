"""The fake model opencode talks to: Chat Completions (the shared FakeModel) with
opencode's tool-less side requests kept apart from the scripted turns."""

from __future__ import annotations

import json

import httpx

from tests.agents.fake_model import text_turn, tool_turn
from tests.agents.opencode import FakeOpencodeModel

TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {}}}]


def _post(fake: FakeOpencodeModel, system: str, tools: list | None = None) -> dict:
    body: dict = {
        "model": "fake-model",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": "go"}],
    }
    if tools:
        body["tools"] = tools
    reply = httpx.post(fake.base_url + "/chat/completions", json=body, timeout=10)
    return reply.json()["choices"][0]["message"]


def test_titles_and_compactions_take_no_scripted_turn(tmp_path):
    with FakeOpencodeModel(summary="SUM") as fake:
        fake.script(tool_turn("echo hi"), text_turn("second"))
        assert _post(fake, "You make a short title for this thread.")["content"] == fake.title
        assert _post(fake, "You summarize the conversation so far.")["content"] == "SUM"
        call = _post(fake, "You are an agent.", TOOLS)["tool_calls"][0]["function"]
        assert call["name"] == "bash" and json.loads(call["arguments"]) == {"command": "echo hi"}
        assert _post(fake, "You are an agent.", TOOLS)["content"] == "second"
        assert [r.kind for r in fake.requests] == ["side", "compaction", "turn", "turn"]
        assert fake.pending() == 0

"""The agent harness itself: the fake model on the wire, and kimi-code driven through a
session, a resume and its own /compact (kimi-cli is driven the same way throughout
test_kimi_cli_resume.py)."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.agents.fake_model import DEFAULT_TEXT, FakeModel, text_turn, tool_turn


def _sse_payloads(text: str) -> list[dict]:
    out = []
    for block in text.split("\n\n"):
        if block.startswith("data: ") and block != "data: [DONE]":
            out.append(json.loads(block[len("data: ") :]))
    return out


def test_fake_model_streams_script_records_and_answers_compaction():
    with FakeModel(summary="SUM") as fm:
        fm.script(tool_turn("echo hi"), text_turn("hello there"))
        tools = [{"type": "function", "function": {"name": "Bash", "parameters": {}}}]
        url = fm.base_url + "/chat/completions"
        body = {
            "model": "m",
            "stream": True,
            "tools": tools,
            "messages": [{"role": "user", "content": "go"}],
        }
        first = _sse_payloads(httpx.post(url, json=body, timeout=10).text)
        calls = [
            c["choices"][0]["delta"]["tool_calls"][0]
            for c in first
            if c["choices"] and "tool_calls" in c["choices"][0]["delta"]
        ]
        assert calls[0]["function"]["name"] == "Bash"
        assert json.loads(calls[0]["function"]["arguments"]) == {"command": "echo hi"}
        assert first[-1]["usage"]["total_tokens"] > 0

        second = httpx.post(url, json=dict(body, stream=False), timeout=10).json()
        assert second["choices"][0]["message"]["content"] == "hello there"

        compaction = {
            "model": "m",
            "messages": [
                {
                    "role": "system",
                    "content": "You are a helpful assistant that compacts conversation context.",
                },
                {"role": "user", "content": "..."},
            ],
        }
        assert (
            httpx.post(url, json=compaction, timeout=10).json()["choices"][0]["message"]["content"]
            == "SUM"
        )
        handoff = {
            "model": "m",
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "You are about to run out of context. X"}],
                },
            ],
        }
        assert (
            httpx.post(url, json=handoff, timeout=10).json()["choices"][0]["message"]["content"]
            == "SUM"
        )
        # script exhausted: the default text, never a compaction summary
        assert (
            httpx.post(url, json=dict(body, stream=False), timeout=10).json()["choices"][0][
                "message"
            ]["content"]
            == DEFAULT_TEXT
        )
        assert httpx.get(fm.base_url + "/models", timeout=10).json()["data"][0]["id"]
        assert [r.kind for r in fm.requests] == [
            "turn",
            "turn",
            "compaction",
            "compaction",
            "turn",
            "models",
        ]
        assert fm.requests[0].json["messages"][0]["content"] == "go"


def test_fake_model_stops_by_itself():
    fm = FakeModel(lifetime=2.0)
    fm.start()
    url = fm.base_url + "/models"
    assert httpx.get(url, timeout=5).status_code == 200
    assert fm.wait_stopped(timeout=30), "still serving long after its 2 s lifetime"
    with pytest.raises(httpx.TransportError):
        httpx.get(url, timeout=2)


def test_fake_model_stops_after_max_requests():
    with FakeModel(max_requests=2) as fm:
        url = fm.base_url + "/models"
        httpx.get(url, timeout=5)
        assert not fm.wait_stopped(timeout=0), "stopped before its budget ran out"
        httpx.get(url, timeout=5)
        assert fm.wait_stopped(timeout=30), "still serving after its 2 requests"
        with pytest.raises(httpx.TransportError):
            httpx.get(url, timeout=2)


def _tool_results(body: dict) -> list[str]:
    return [json.dumps(m.get("content")) for m in body["messages"] if m["role"] == "tool"]


def test_kimi_code_runs_real_tools_resumes_and_compacts(
    kimi_code_session_template, tmp_path, fake_model
):
    template, sid = kimi_code_session_template
    code = template.clone(tmp_path / "code", fake_model)
    body = code.resume(sid, "And now?")
    results = _tool_results(body)
    assert any("hello\\n" in r for r in results) and any("world\\n" in r for r in results)
    requests = code.compact(sid)
    assert [r.kind for r in requests] == ["compaction"]
    records = [json.loads(line) for line in code.wire_file(sid).read_bytes().split(b"\n") if line]
    applied = [r for r in records if r["type"] == "context.apply_compaction"]
    assert applied and applied[-1]["summary"] == fake_model.summary
    after = code.resume(sid, "After compaction?")
    assert fake_model.summary in json.dumps(after["messages"])
    assert not any(
        "echo hello" in json.dumps(m) for m in after["messages"] if m["role"] == "assistant"
    )

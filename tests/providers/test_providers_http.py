"""Providers against a real HTTP server on 127.0.0.1 (tests/loopback_server.py).

Each test scripts the server's replies, streams a summary through the public
entry point and checks the final state, the text collected (summary and
reasoning apart), the usage kept, and how many tries were made.
"""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kimi_compact_tui.providers import StreamEvent, stream_summary
from kimi_compact_tui.providers.http import estimate_num_ctx
from tests.loopback_server import (
    LoopbackServer,
    Reply,
    moonshot_sse,
    ollama_ndjson,
    ollama_v1_sse,
    openai_sse,
    sse_events,
)

FAKE_KEY = "sk-test-LEAKCHECK-9f8e7d6c5b4a"
USAGE_A = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}


def make_body(text: str = "## Message 1\nRole: user\nContent:\nhello") -> dict:
    return {
        "model": "body-model",
        "messages": [
            {"role": "system", "content": "You compact conversations."},
            {"role": "user", "content": [{"type": "text", "text": text}]},
        ],
        "stream": True,
        "tools": [{"type": "function", "function": {"name": "shell"}}],
        "tool_choice": "auto",
        "functions": [{"name": "old"}],
    }


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch):
    monkeypatch.setenv("KCT_TEST_API_KEY", FAKE_KEY)


class Events(list):
    def __call__(self, event: StreamEvent) -> None:
        self.append(event)

    def of(self, kind: str) -> list[StreamEvent]:
        return [e for e in self if e.kind == kind]


# ----------------------------------------------------------------------------- wire formats


async def test_openai_stream_complete_and_request_shape(loopback, provider_config):
    loopback.script([openai_sse(["## Sum", "mary\n", "done"], usage=USAGE_A)])
    events = Events()
    result = await stream_summary(provider_config("openai"), make_body(), events)
    assert result.status == "complete"
    assert result.summary == "## Summary\ndone"
    assert result.reasoning == ""
    assert result.usage == USAGE_A
    assert result.finish_reason == "stop"
    assert result.attempts == 1
    assert result.error is None
    assert "".join(e.text for e in events.of("text")) == result.summary
    assert [e.text for e in events.of("status")] == [
        "HTTP 200 from openai; waiting for the first token"
    ]
    (req,) = loopback.requests
    assert req.method == "POST"
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {FAKE_KEY}"
    sent = req.json
    assert "tools" not in sent and "tool_choice" not in sent and "functions" not in sent
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}
    # The engine chose the model (a compaction_model override, else the
    # provider's): the body's model is sent, not the provider's default.
    assert sent["model"] == "body-model"
    assert sent["messages"] == make_body()["messages"]


async def test_config_model_fills_a_body_without_one(loopback, provider_config):
    loopback.script([openai_sse(["ok"])])
    body = make_body()
    body.pop("model")
    result = await stream_summary(provider_config("openai"), body)
    assert result.status == "complete"
    assert loopback.requests[0].json["model"] == "test-model"


async def test_body_model_is_used_when_config_has_none(loopback, provider_config):
    loopback.script([openai_sse(["ok"])])
    result = await stream_summary(provider_config("openai", model=None), make_body())
    assert result.status == "complete"
    assert loopback.requests[0].json["model"] == "body-model"


async def test_extra_body_is_merged_but_cannot_add_tools(loopback, provider_config):
    loopback.script([openai_sse(["ok"])])
    cfg = provider_config("openai", extra_body={"temperature": 0.1, "tools": [{"x": 1}]})
    await stream_summary(cfg, make_body())
    sent = loopback.requests[0].json
    assert sent["temperature"] == 0.1
    assert "tools" not in sent


async def test_moonshot_reasoning_apart_and_usage_inside_choice(loopback, provider_config):
    usage = {"prompt_tokens": 8, "completion_tokens": 6, "total_tokens": 14, "cached_tokens": 4}
    loopback.script(
        [
            moonshot_sse(
                ["<current_focus>", "x</current_focus>"],
                reasoning=["Let me", " think"],
                usage=usage,
            )
        ]
    )
    events = Events()
    result = await stream_summary(provider_config("moonshot"), make_body(), events)
    assert result.status == "complete"
    assert result.summary == "<current_focus>x</current_focus>"
    assert result.reasoning == "Let me think"
    assert "think" not in result.summary
    assert result.usage == usage
    assert result.model == "kimi-k2-thinking"
    assert [e.text for e in events.of("reasoning")] == ["Let me", " think"]
    sent = loopback.requests[0].json
    assert "stream_options" not in sent
    assert "tools" not in sent


async def test_ollama_v1_reasoning_field(loopback, provider_config):
    loopback.script([ollama_v1_sse(["answer"], reasoning=["hmm"], usage=USAGE_A)])
    result = await stream_summary(provider_config("openai"), make_body())
    assert (result.status, result.summary, result.reasoning) == ("complete", "answer", "hmm")
    assert result.usage == USAGE_A


async def test_inline_think_block_is_reasoning_not_summary(loopback, provider_config):
    loopback.script([ollama_ndjson(["<think>", "plan it", "</think>\n\n", "## Summary"])])
    result = await stream_summary(provider_config("ollama"), make_body())
    assert result.status == "complete"
    assert result.summary == "## Summary"
    assert result.reasoning == "plan it"


async def test_usage_is_the_last_seen_never_summed(loopback, provider_config):
    first = {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
    last = {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}
    extra = [
        {"model": "m", "choices": [{"index": 0, "delta": {"content": "b"}}], "usage": first},
    ]
    loopback.script([openai_sse(["a"], extra_events=extra, usage=last)])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.summary == "ab"
    assert result.usage == last


async def test_ollama_native_ndjson(loopback, provider_config):
    loopback.script([ollama_ndjson(["## Sum", "mary"], thinking=["I should", " summarise"])])
    cfg = provider_config("ollama", api_key_env="")
    result = await stream_summary(cfg, make_body("x" * 100))
    assert result.status == "complete"
    assert result.summary == "## Summary"
    assert result.reasoning == "I should summarise"
    assert result.usage == {"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27}
    (req,) = loopback.requests
    assert req.path == "/api/chat"
    assert "authorization" not in req.headers
    sent = req.json
    assert sent["stream"] is True
    assert sent["truncate"] is False
    assert sent["options"]["num_ctx"] >= 8192
    assert "tools" not in sent and "tool_choice" not in sent
    assert sent["messages"][1] == {"role": "user", "content": "x" * 100}


async def test_ollama_native_num_ctx_from_config_and_base_url_with_v1(loopback, provider_config):
    loopback.script([ollama_ndjson(["ok"])])
    cfg = provider_config("ollama", base_url=loopback.base_url, num_ctx=4096)
    result = await stream_summary(cfg, make_body())
    assert result.status == "complete"
    assert loopback.requests[0].path == "/api/chat"
    assert loopback.requests[0].json["options"]["num_ctx"] == 4096


def test_num_ctx_estimate_covers_a_long_transcript():
    text = "word " * 60_000  # 300,000 characters
    n = estimate_num_ctx([{"role": "user", "content": text}])
    assert n >= len(text) // 3 + 4096
    assert n % 1024 == 0
    assert estimate_num_ctx([{"role": "user", "content": "hi"}]) == 8192
    cjk = "修复数据库迁移" * 6000  # 42,000 characters, about one token each
    assert estimate_num_ctx([{"role": "user", "content": cjk}]) >= len(cjk) + 4096


async def test_ollama_native_length_and_cut(loopback, provider_config):
    loopback.script(
        [ollama_ndjson(["part"], done_reason="length"), ollama_ndjson(["half"], done=False)]
    )
    cfg = provider_config("ollama")
    truncated = await stream_summary(cfg, make_body())
    assert (truncated.status, truncated.summary) == ("truncated", "part")
    cut = await stream_summary(cfg, make_body())
    assert (cut.status, cut.summary) == ("failed", "half")
    assert "done: true" in cut.error


async def test_ollama_native_inband_error_and_bad_json(loopback, provider_config):
    loopback.script(
        [
            ollama_ndjson(["a"], extra_lines=[{"error": "model runner crashed"}]),
            ollama_ndjson(["a"], extra_lines=["{not json"]),
        ]
    )
    cfg = provider_config("ollama")
    err = await stream_summary(cfg, make_body())
    assert err.status == "failed" and err.summary == "a"
    assert "model runner crashed" in err.error
    bad = await stream_summary(cfg, make_body())
    assert bad.status == "failed" and bad.summary == "a"
    assert "invalid JSON" in bad.error


# ----------------------------------------------------------------------------- byte-level misbehaviour


@pytest.mark.parametrize("every", [1, 2, 3, 7, 64])
async def test_events_split_across_tcp_writes(loopback, provider_config, every):
    loopback.script(
        [
            moonshot_sse(
                ["héllo ", "wörld ", "→ 完成"], reasoning=["思考"], split_every=every, gap=0.0005
            )
        ]
    )
    result = await stream_summary(provider_config("moonshot"), make_body())
    assert result.status == "complete"
    assert result.summary == "héllo wörld → 完成"
    assert result.reasoning == "思考"


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cuts=st.lists(st.integers(min_value=1, max_value=2000), max_size=12))
def test_split_at_arbitrary_offsets(cuts):
    async def run():
        with LoopbackServer(lifetime=300) as srv:
            srv.script([openai_sse(["a€", "b\n", "c😀"], usage=USAGE_A, crlf=True, split_at=cuts)])
            from kimi_compact_tui.providers.base import ProviderConfig

            cfg = ProviderConfig(kind="openai", base_url=srv.base_url, model="m", api_key_env="")
            return await stream_summary(cfg, make_body())

    result = asyncio.run(run())
    assert result.status == "complete"
    assert result.summary == "a€b\nc😀"
    assert result.usage == USAGE_A


async def test_crlf_comments_and_multiline_data(loopback, provider_config):
    loopback.script(
        [openai_sse(["one", " two"], usage=USAGE_A, crlf=True, comments=True, multiline=True)]
    )
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "complete"
    assert result.summary == "one two"
    assert result.usage == USAGE_A


async def test_chunked_transfer_encoding(loopback, provider_config):
    loopback.script([openai_sse(["x", "y"], chunked=True, split_every=5)])
    result = await stream_summary(provider_config("openai"), make_body())
    assert (result.status, result.summary) == ("complete", "xy")


async def test_ten_thousand_tiny_chunks(loopback, provider_config):
    pieces = [str(i % 10) for i in range(10_000)]
    loopback.script([openai_sse(pieces, usage=USAGE_A)])
    events = Events()
    result = await stream_summary(provider_config("openai"), make_body(), events)
    assert result.status == "complete"
    assert result.summary == "".join(pieces)
    assert len(events.of("text")) == 10_000
    assert result.usage == USAGE_A


# ----------------------------------------------------------------------------- stream failures


async def test_stream_cut_without_done_keeps_partial_text(loopback, provider_config):
    loopback.script([openai_sse(["partial ", "text"], finish=None, done=False)])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "failed"
    assert result.summary == "partial text"
    assert "[DONE]" in result.error
    assert result.attempts == 1


async def test_finish_stop_but_no_done_is_still_a_failure(loopback, provider_config):
    loopback.script([openai_sse(["all of it"], done=False)])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "failed"
    assert result.summary == "all of it"


async def test_chunked_stream_cut_mid_body(loopback, provider_config):
    loopback.script([openai_sse(["a", "b", "c"], chunked=True, cut=True, cut_after=3)])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "failed"
    assert result.summary == "ab"
    assert len(loopback.requests) == 1


async def test_inband_error_event(loopback, provider_config):
    err = {"error": {"message": "upstream overloaded", "type": "server_error"}}
    loopback.script([openai_sse(["so far"], extra_events=[err])])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "failed"
    assert result.summary == "so far"
    assert "upstream overloaded" in result.error


async def test_sse_error_event_type(loopback, provider_config):
    pieces = sse_events([{"choices": [{"index": 0, "delta": {"content": "p"}}]}], done=False)
    pieces.append(b'event: error\ndata: {"error": {"message": "boom"}}\n\n')
    loopback.script([Reply(headers={"Content-Type": "text/event-stream"}, pieces=pieces)])
    result = await stream_summary(provider_config("openai"), make_body())
    assert (result.status, result.summary) == ("failed", "p")
    assert "boom" in result.error


async def test_malformed_json_event(loopback, provider_config):
    loopback.script([openai_sse(["good"], extra_events=['{"choices": [ {"delta": '])])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "failed"
    assert result.summary == "good"
    assert "invalid JSON" in result.error


async def test_stall_longer_than_read_timeout(loopback, provider_config):
    loopback.script([openai_sse(["before ", "after"], stall=3.0, stall_after=2)])
    result = await stream_summary(provider_config("openai", read_timeout=0.3), make_body())
    assert result.status == "failed"
    assert result.summary == "before "
    assert "read timeout" in result.error
    assert len(loopback.requests) == 1


async def test_stall_before_first_byte_is_not_retried(loopback, provider_config):
    loopback.script([openai_sse(["x"], stall=3.0, stall_after=0), openai_sse(["y"])])
    result = await stream_summary(provider_config("openai", read_timeout=0.3), make_body())
    assert result.status == "failed"
    assert result.summary == ""
    assert "read timeout" in result.error


async def test_finish_reason_length_is_truncated(loopback, provider_config):
    loopback.script([openai_sse(["cut off here"], finish="length", usage=USAGE_A)])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "truncated"
    assert result.summary == "cut off here"
    assert result.finish_reason == "length"
    assert not result.writable()
    assert result.writable(allow_truncated=True)


async def test_empty_summary_fails(loopback, provider_config):
    loopback.script([moonshot_sse([], reasoning=["only thinking"])])
    result = await stream_summary(provider_config("moonshot"), make_body())
    assert result.status == "failed"
    assert result.reasoning == "only thinking"
    assert "empty" in result.error


async def test_done_without_finish_reason_fails(loopback, provider_config):
    loopback.script([openai_sse(["text"], finish=None)])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "failed"
    assert "finish reason" in result.error


async def test_non_stream_json_completion(loopback, provider_config):
    whole = {
        "model": "m",
        "choices": [{"index": 0, "message": {"content": "whole"}, "finish_reason": "stop"}],
        "usage": USAGE_A,
    }
    loopback.script(
        [Reply(headers={"Content-Type": "application/json"}, pieces=[json.dumps(whole).encode()])]
    )
    result = await stream_summary(provider_config("openai"), make_body())
    assert (result.status, result.summary, result.usage) == ("complete", "whole", USAGE_A)


async def test_missing_model_fails_without_a_request(loopback, provider_config):
    body = make_body()
    del body["model"]
    result = await stream_summary(provider_config("openai", model=None), body)
    assert result.status == "failed"
    assert "model" in result.error
    assert loopback.requests == []


# ----------------------------------------------------------------------------- HTTP errors and retries


@pytest.mark.parametrize(
    ("status", "body", "label", "provider_says"),
    [
        (
            401,
            {"error": {"message": "Invalid Authentication", "type": "invalid_authentication"}},
            "API key",
            "Invalid Authentication",
        ),
        (404, {"error": {"message": "model 'nope' not found"}}, "not found", "model 'nope'"),
        (
            400,
            {"error": {"message": "This model's maximum context length is 8192 tokens"}},
            "context",
            "maximum context length is 8192",
        ),
        (400, {"error": "plain string error body"}, "bad request", "plain string error body"),
        (403, b"<html>forbidden by proxy</html>", "forbidden", "forbidden by proxy"),
    ],
)
async def test_http_errors_give_the_provider_message(
    loopback, provider_config, status, body, label, provider_says
):
    loopback.script([Reply.error(status, body)])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "failed"
    assert result.http_status == status
    assert f"HTTP {status}" in result.error
    assert label in result.error
    assert provider_says in result.error
    assert result.attempts == 1
    assert len(loopback.requests) == 1
    assert "\n" not in result.error


async def test_401_names_the_unset_key_variable(loopback, provider_config, monkeypatch):
    monkeypatch.delenv("KCT_TEST_API_KEY")
    loopback.script([Reply.error(401, {"error": {"message": "no key"}})])
    result = await stream_summary(provider_config("openai"), make_body())
    assert "KCT_TEST_API_KEY is not set" in result.error
    assert "authorization" not in loopback.requests[0].headers


async def test_429_with_retry_after_then_success(loopback, provider_config):
    loopback.script(
        [
            Reply.error(429, {"error": {"message": "Rate limit reached"}}, retry_after="0"),
            openai_sse(["fine"], usage=USAGE_A),
        ]
    )
    events = Events()
    result = await stream_summary(provider_config("openai"), make_body(), events)
    assert result.status == "complete"
    assert result.summary == "fine"
    assert result.attempts == 2
    (retry,) = events.of("retry")
    assert retry.delay == 0.0
    assert retry.attempt == 2
    assert "Rate limit reached" in retry.text
    assert len(loopback.requests) == 2


async def test_retry_after_is_capped(loopback, provider_config):
    loopback.script(
        [
            Reply.error(429, {"error": {"message": "wait"}}, retry_after="3600"),
            Reply.error(429, {"error": {"message": "wait"}}, retry_after_ms="20"),
            openai_sse(["ok"]),
        ]
    )
    events = Events()
    result = await stream_summary(provider_config("openai", retry_cap=0.05), make_body(), events)
    assert result.status == "complete"
    assert [e.delay for e in events.of("retry")] == [0.05, 0.02]
    assert result.attempts == 3


async def test_500_then_success(loopback, provider_config):
    loopback.script([Reply.error(500, {"error": {"message": "oops"}}), openai_sse(["ok"])])
    events = Events()
    result = await stream_summary(provider_config("openai"), make_body(), events)
    assert (result.status, result.summary, result.attempts) == ("complete", "ok", 2)
    assert len(events.of("retry")) == 1
    assert 0 < events.of("retry")[0].delay <= 0.05


async def test_at_most_three_tries(loopback, provider_config):
    loopback.script([Reply.error(503, {"error": {"message": f"busy {i}"}}) for i in range(5)])
    events = Events()
    result = await stream_summary(provider_config("openai"), make_body(), events)
    assert result.status == "failed"
    assert result.attempts == 3
    assert len(loopback.requests) == 3
    assert len(events.of("retry")) == 2
    assert "busy 2" in result.error
    assert result.http_status == 503


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}},
        {"error": {"message": "account balance too low", "type": "exceeded_current_quota_error"}},
    ],
)
async def test_quota_exhausted_429_is_not_retried(loopback, provider_config, body):
    loopback.script([Reply.error(429, body, retry_after="0"), openai_sse(["never"])])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "failed"
    assert "quota exhausted" in result.error
    assert result.attempts == 1
    assert len(loopback.requests) == 1


async def test_connection_refused_retries_then_fails(provider_config):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Nothing listens on that port now.
    events = Events()
    cfg = provider_config("openai", base_url=f"http://127.0.0.1:{port}/v1")
    result = await stream_summary(cfg, make_body(), events)
    assert result.status == "failed"
    assert "could not connect" in result.error
    assert result.attempts == 3
    assert len(events.of("retry")) == 2


async def test_no_retry_after_first_token(loopback, provider_config):
    loopback.script([openai_sse(["started"], finish=None, done=False), openai_sse(["again"])])
    result = await stream_summary(provider_config("openai"), make_body())
    assert result.status == "failed"
    assert result.summary == "started"
    assert loopback.pending == 1


# ----------------------------------------------------------------------------- cancel


async def test_cancel_event_keeps_partial_text(loopback, provider_config):
    loopback.script([openai_sse(["first ", "second"], stall=3.0, stall_after=2)])
    cancel = asyncio.Event()

    def on_event(event: StreamEvent) -> None:
        if event.kind == "text":
            cancel.set()

    result = await stream_summary(provider_config("openai"), make_body(), on_event, cancel)
    assert result.status == "cancelled"
    assert result.summary == "first "


async def test_task_cancel_gives_cancelled_result(loopback, provider_config):
    loopback.script([openai_sse(["first ", "second"], stall=3.0, stall_after=2)])
    got_text = asyncio.Event()
    task = asyncio.ensure_future(
        stream_summary(
            provider_config("openai"), make_body(), lambda e: e.kind == "text" and got_text.set()
        )
    )
    await got_text.wait()
    task.cancel()
    result = await task
    assert result.status == "cancelled"
    assert result.summary == "first "


async def test_cancel_already_set_sends_nothing(loopback, provider_config):
    cancel = asyncio.Event()
    cancel.set()
    result = await stream_summary(provider_config("openai"), make_body(), None, cancel)
    assert result.status == "cancelled"
    assert loopback.requests == []


# ----------------------------------------------------------------------------- secrets


async def test_api_key_never_appears_in_results(loopback, provider_config):
    loopback.script(
        [
            Reply.error(401, {"error": {"message": f"Incorrect API key provided: {FAKE_KEY}"}}),
            Reply.error(500, {"error": {"message": f"bad {FAKE_KEY}"}}),
            Reply.error(500, {"error": {"message": f"bad {FAKE_KEY}"}}),
            Reply.error(500, {"error": {"message": f"bad {FAKE_KEY}"}}),
            openai_sse(["x"], extra_events=[{"error": {"message": f"key {FAKE_KEY} revoked"}}]),
            openai_sse(["x"], extra_events=[f"{{bad json {FAKE_KEY}"]),
        ]
    )
    cfg = provider_config("openai")
    results = []
    events = Events()
    for _ in range(4):
        results.append(await stream_summary(cfg, make_body(), events))
    assert [r.status for r in results] == ["failed"] * 4
    assert results[0].http_status == 401
    assert loopback.requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"
    for r in results:
        assert r.error
        for text in (json.dumps(r.to_json()), str(r), repr(r)):
            assert FAKE_KEY not in text
    for e in events:
        assert FAKE_KEY not in e.text and FAKE_KEY not in repr(e)
    assert FAKE_KEY not in repr(cfg)

"""The ``anthropic`` provider kind against a real HTTP server on 127.0.0.1 that
speaks the Messages API's SSE shapes (tests/anthropic_sse.py): the request as
sent (headers, system, text blocks, no tools), every way a stream ends, the
retries, the key kept out of every output, and ``compact --provider anthropic``
end to end."""

from __future__ import annotations

import json

import pytest

from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.request import COMPACTOR_SYSTEM_PROMPT, build_request
from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.job import draft_output_tokens
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers import (
    ProviderConfig,
    StreamEvent,
    create_provider,
    provider_config_from,
    stream_summary,
)
from kimi_compact_tui.providers.http import AnthropicMessages, HttpProvider
from kimi_compact_tui.providers.http.anthropic import DEFAULT_MAX_TOKENS, text_blocks
from tests.anthropic_sse import anthropic_error, anthropic_sse
from tests.factories import write_openai_json
from tests.loopback_server import LoopbackServer, Reply

FAKE_KEY = "sk-ant-LEAKCHECK-5e4d3c2b1a09"
TOOLS = [{"name": "bash", "input_schema": {"type": "object"}}]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("KCT_ANTHROPIC_KEY", FAKE_KEY)


@pytest.fixture
def config(loopback):
    def make(**overrides) -> ProviderConfig:
        values = {
            "kind": "anthropic",
            "base_url": loopback.root_url,
            "model": "claude-test",
            "api_key_env": "KCT_ANTHROPIC_KEY",
            "connect_timeout": 5.0,
            "read_timeout": 5.0,
            "retry_base_delay": 0.01,
            "retry_cap": 0.05,
        }
        values.update(overrides)
        return ProviderConfig(**values)

    return make


class Events(list):
    def __call__(self, event: StreamEvent) -> None:
        self.append(event)

    def of(self, kind: str) -> list[str]:
        return [e.text for e in self if e.kind == kind]


def compaction_request(overrides: dict | None = None):
    messages = [
        Message.make("user", "Fix the crash in app/main.py"),
        Message.make("assistant", [{"type": "text", "text": "Looking."}]),
        Message.make("user", [{"type": "text", "text": "Part one. "}, "Part two — 日本語"]),
        Message.make("assistant", "Fixed it."),
        Message.make("user", "Add a test."),
        Message.make("assistant", "Added."),
    ]
    plan = make_plan(messages, up_to=4)
    prompt = PromptSource("inline", None, "Summarise.", "0" * 64)
    cfg = {"settings_overrides": overrides or {}}
    return build_request(messages, plan, prompt, cfg, compaction_model="claude-request")


def no_key_anywhere(result, events, loopback) -> None:
    assert FAKE_KEY not in json.dumps(result.to_json())
    assert all(FAKE_KEY not in e.text for e in events)


# ----------------------------------------------------------------------------- the request


async def test_complete_stream_and_the_request_as_sent(loopback, config):
    loopback.script([anthropic_sse(["<current_focus>", "tests</current_focus>"])])
    request = compaction_request({"temperature": 0.2, "tools": TOOLS, "tool_choice": "auto"})
    events = Events()
    result = await stream_summary(
        config(extra_body={"mcp_servers": [], "tools": TOOLS}), request, events
    )
    assert result.status == "complete", result.error
    assert result.summary == "<current_focus>tests</current_focus>"
    assert (result.reasoning, result.finish_reason) == ("", "end_turn")
    assert result.model == "claude-loopback"
    assert result.usage == {"input_tokens": 25, "output_tokens": 15}
    assert draft_output_tokens(result, edited=False) == 15  # the job's rule finds it
    assert "".join(events.of("text")) == result.summary
    assert events.of("status") == ["HTTP 200 from anthropic; waiting for the first token"]
    (req,) = loopback.requests
    assert (req.method, req.path) == ("POST", "/v1/messages")
    assert req.headers["x-api-key"] == FAKE_KEY
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert req.headers["content-type"] == "application/json"
    assert "authorization" not in req.headers
    sent = req.json
    assert set(sent) == {"model", "max_tokens", "temperature", "system", "messages", "stream"}
    assert sent["model"] == "claude-request"
    assert sent["max_tokens"] == DEFAULT_MAX_TOKENS
    assert sent["stream"] is True and sent["temperature"] == 0.2
    assert sent["system"] == COMPACTOR_SYSTEM_PROMPT == request.messages[0]["content"]
    (user,) = sent["messages"]
    assert user["role"] == "user"
    assert [b["type"] for b in user["content"]] == ["text"] * len(request.parts)
    assert [b["text"] for b in user["content"]] == request.parts
    no_key_anywhere(result, events, loopback)


async def test_thinking_is_reasoning_and_never_summary(loopback, config):
    loopback.script([anthropic_sse(["SUMMARY"], thinking=["Let me ", "think."])])
    events = Events()
    result = await stream_summary(config(), compaction_request(), events)
    assert result.status == "complete"
    assert (result.summary, result.reasoning) == ("SUMMARY", "Let me think.")
    assert events.of("reasoning") == ["Let me ", "think."]
    assert events.of("text") == ["SUMMARY"]
    assert "signature" not in result.summary + result.reasoning


@pytest.mark.parametrize(
    ("stop_reason", "text", "status", "words"),
    [
        ("stop_sequence", ["done"], "complete", None),
        ("max_tokens", ["half a sum"], "truncated", "output limit"),
        ("max_tokens", [], "failed", "before writing any summary"),
        ("refusal", ["no"], "failed", "'refusal'"),
        (None, ["x"], "failed", "without a finish reason"),
        ("end_turn", ["  "], "failed", "empty summary"),
    ],
)
async def test_stop_reasons(loopback, config, stop_reason, text, status, words):
    loopback.script([anthropic_sse(text, stop_reason=stop_reason)])
    result = await stream_summary(config(), compaction_request())
    assert result.status == status
    assert result.finish_reason == stop_reason
    if words is None:
        assert result.error is None
    else:
        assert words in result.error
    if status == "truncated":
        assert result.summary == "half a sum"
        assert result.writable(allow_truncated=True) and not result.writable()


async def test_error_event_mid_stream_fails_and_is_not_retried(loopback, config):
    loopback.script(
        [
            anthropic_sse(["partial "], error=anthropic_error("overloaded_error", "Overloaded")),
            anthropic_sse(["never asked for"]),
        ]
    )
    result = await stream_summary(config(), compaction_request())
    assert result.status == "failed"
    assert "overloaded_error: Overloaded" in result.error
    assert result.summary == "partial "
    assert (result.attempts, len(loopback.requests)) == (1, 1)


async def test_a_cut_stream_fails(loopback, config):
    loopback.script([anthropic_sse(["all of it"], stop=False)])
    result = await stream_summary(config(), compaction_request())
    assert result.status == "failed"
    assert "message_stop" in result.error
    assert result.summary == "all of it"


async def test_a_stream_broken_mid_event_fails(loopback, config):
    loopback.script([anthropic_sse(["one", "two"], chunked=True, cut=True, cut_after=4)])
    result = await stream_summary(config(), compaction_request())
    assert result.status == "failed"
    assert "the connection broke mid-stream" in result.error
    assert result.summary == "one"
    assert len(loopback.requests) == 1  # text had arrived: never retried


@pytest.mark.parametrize(
    ("status", "kind", "message", "label"),
    [
        (
            401,
            "authentication_error",
            "invalid x-api-key",
            "bad or missing API key (from KCT_ANTHROPIC_KEY)",
        ),
        (400, "invalid_request_error", "max_tokens: 999999 > 64000", "bad request"),
        (
            400,
            "invalid_request_error",
            "prompt is too long: 210000 tokens",
            "request too long for the model's context",
        ),
        (404, "not_found_error", "model: claude-nope", "model or endpoint not found"),
    ],
)
async def test_http_errors_with_anthropic_bodies(loopback, config, status, kind, message, label):
    body = anthropic_error(kind, f"{message} (key {FAKE_KEY})")
    loopback.script([Reply.error(status, body)])
    events = Events()
    result = await stream_summary(config(), compaction_request(), events)
    assert result.status == "failed"
    assert result.http_status == status
    assert result.error.startswith(f"HTTP {status} {label}: {message}")
    assert message in result.error
    assert "\n" not in result.error
    assert (result.attempts, len(loopback.requests)) == (1, 1)
    no_key_anywhere(result, events, loopback)
    assert "[redacted]" in result.error


@pytest.mark.parametrize(
    ("status", "body", "retry_after"),
    [
        (429, anthropic_error("rate_limit_error", "Number of requests exceeded"), "0.03"),
        (529, anthropic_error("overloaded_error", "Overloaded"), "0.02"),
        (500, anthropic_error("api_error", "Internal server error"), None),
    ],
)
async def test_retried_before_the_first_token(loopback, config, status, body, retry_after):
    loopback.script([Reply.error(status, body, retry_after=retry_after), anthropic_sse(["fine"])])
    events = Events()
    result = await stream_summary(config(), compaction_request(), events)
    assert (result.status, result.summary, result.attempts) == ("complete", "fine", 2)
    (retry,) = [e for e in events if e.kind == "retry"]
    assert f"HTTP {status}" in retry.text and body["error"]["message"] in retry.text
    if retry_after is not None:
        assert retry.delay == float(retry_after)  # what the server asked (under the cap)
    assert len(loopback.requests) == 2
    assert all(r.headers["x-api-key"] == FAKE_KEY for r in loopback.requests)


async def test_overloaded_every_time_fails_after_the_tries(loopback, config):
    loopback.script([Reply.error(529, anthropic_error("overloaded_error", "Overloaded"))] * 3)
    result = await stream_summary(config(), compaction_request())
    assert result.status == "failed"
    assert result.error == "HTTP 529 overloaded: Overloaded"
    assert len(loopback.requests) == 3


# ----------------------------------------------------------------------------- configuration


async def test_anthropic_base_url_is_honoured_when_none_is_configured(loopback, monkeypatch):
    loopback.script([anthropic_sse(["via env"]), anthropic_sse(["via config"])])
    monkeypatch.setenv("ANTHROPIC_BASE_URL", loopback.root_url + "/")
    cfg = provider_config_from(
        {"kind": "anthropic", "model": "m", "api_key_env": "KCT_ANTHROPIC_KEY"}
    )
    assert cfg.effective_base_url == loopback.root_url
    assert (await stream_summary(cfg, compaction_request())).summary == "via env"
    with LoopbackServer(lifetime=30) as other:
        other.script([anthropic_sse(["via config"])])
        cfg = provider_config_from(
            {"kind": "anthropic", "model": "m", "base_url": other.root_url + "/v1"}
        )
        assert (await stream_summary(cfg, compaction_request())).summary == "via config"
        assert other.requests[0].path == "/v1/messages"
    assert len(loopback.requests) == 1


async def test_max_tokens_precedence(loopback, config):
    loopback.script([anthropic_sse(["a"]), anthropic_sse(["b"]), anthropic_sse(["c"])])
    await stream_summary(config(max_tokens=1234), compaction_request())
    await stream_summary(config(max_tokens=1234), compaction_request({"max_tokens": 77}))
    await stream_summary(config(), compaction_request({"max_completion_tokens": 55, "stop": "X"}))
    sent = [r.json for r in loopback.requests]
    assert [s["max_tokens"] for s in sent] == [1234, 77, 55]
    assert "max_completion_tokens" not in sent[2] and sent[2]["stop_sequences"] == ["X"]


@pytest.mark.parametrize("value", [0, -5, True, 2.5, "8k", 10**20])
def test_max_tokens_setting_is_validated(value):
    with pytest.raises(ConfigError) as info:
        provider_config_from({"kind": "anthropic", "max_tokens": value})
    assert str(info.value).startswith("provider.max_tokens: must be a whole number of tokens")


def test_max_tokens_belongs_to_anthropic():
    assert provider_config_from({"kind": "anthropic", "max_tokens": 4096}).max_tokens == 4096
    with pytest.raises(ConfigError, match="^provider.max_tokens: only for kind anthropic"):
        provider_config_from({"kind": "openai", "max_tokens": 4096})
    cfg = provider_config_from({"kind": "anthropic", "max_tokens": 4096}, provider="openai")
    assert (cfg.kind, cfg.max_tokens) == ("openai", None)


def test_the_kind_is_registered():
    cfg = provider_config_from(None, provider="anthropic")
    assert (cfg.kind, cfg.effective_base_url, cfg.effective_key_env) == (
        "anthropic",
        "https://api.anthropic.com",
        "ANTHROPIC_API_KEY",
    )
    provider = create_provider(cfg)
    assert isinstance(provider, HttpProvider) and isinstance(provider.protocol, AnthropicMessages)


def test_text_blocks_keep_the_text_and_refuse_no_empty_block():
    parts = ["## Message 1\n", "", "\n", "body", "   ", "\nprompt"]
    blocks = text_blocks([{"type": "text", "text": p} for p in parts])
    assert "".join(b["text"] for b in blocks) == "".join(parts)
    assert all(b["type"] == "text" and b["text"].strip() for b in blocks)
    assert text_blocks("plain") == [{"type": "text", "text": "plain"}]


# ----------------------------------------------------------------------------- the CLI


@pytest.fixture
def anthropic_cli(loopback, cli_main, monkeypatch, tmp_path):
    session = write_openai_json(
        tmp_path / "session.json",
        [
            {"role": "user", "content": "Fix the crash in app/main.py"},
            {"role": "assistant", "content": "Fixed: run() checks its input."},
            {"role": "user", "content": "Now add logging."},
            {"role": "assistant", "content": "Added logging."},
            {"role": "user", "content": "And a test?"},
            {"role": "assistant", "content": "Added tests/test_main.py."},
        ],
        model="m",
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", loopback.root_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("NO_COLOR", "1")
    out = tmp_path / "out.json"

    def run(*extra: str):
        args = ["compact", session, "--provider", "anthropic", "--model", "M", "-o", out]
        return cli_main(*args, *extra), out

    return run


def test_cli_compact_with_anthropic(anthropic_cli, loopback):
    loopback.script([anthropic_sse(["<current_focus>\n", "logging\n", "</current_focus>\n"])])
    proc, out = anthropic_cli()
    assert proc.code == 0, proc.stderr
    assert proc.stdout == "<current_focus>\nlogging\n</current_focus>\n"
    assert "logging" in out.read_text(encoding="utf-8")
    (req,) = loopback.requests
    assert req.json["model"] == "M" and "tools" not in req.json
    assert req.headers["x-api-key"] == FAKE_KEY
    assert FAKE_KEY not in proc.stdout + proc.stderr + out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        pytest.param(
            anthropic_sse(["part"], error=anthropic_error("overloaded_error", "Overloaded")),
            "overloaded_error: Overloaded",
            id="error-event",
        ),
        pytest.param(anthropic_sse(["part"], stop=False), "message_stop", id="cut"),
        pytest.param(
            Reply.error(401, anthropic_error("authentication_error", "invalid x-api-key")),
            "HTTP 401 bad or missing API key (from ANTHROPIC_API_KEY): invalid x-api-key",
            id="401",
        ),
    ],
)
def test_cli_failure_exits_3_and_writes_nothing(anthropic_cli, loopback, reply, words):
    loopback.script([reply])
    proc, out = anthropic_cli()
    assert proc.code == 3, proc.stderr
    assert not out.exists()
    assert "Traceback" not in proc.stderr
    (line,) = proc.error_lines
    assert words in line
    assert "nothing written" in proc.stderr
    assert FAKE_KEY not in proc.stdout + proc.stderr

"""The spec's integration item: the plugin facade's ``execute_action`` with a
real provider (Ollama native and OpenAI-compatible, on the loopback server)
builds the new request shape, honours enablement and returns the compacted
native messages."""

from __future__ import annotations

import asyncio

from kimi_compact_tui.compaction.request import COMPACTOR_SYSTEM_PROMPT
from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job.feature import KimiCompactionFeature
from kimi_compact_tui.providers import stream_summary
from tests.core_helpers import SAMPLES
from tests.loopback_server import ollama_ndjson, openai_sse

ENABLED = {"compaction": {"enabled": True, "type": "kimi", "max_preserved_messages": 2}}


def summarizer(config):
    def summarize(request) -> str:
        result = asyncio.run(stream_summary(config, request.body))
        assert result.status == "complete", result.error
        return result.summary

    return summarize


def test_execute_action_against_ollama_native(loopback, provider_config):
    session = load_session(SAMPLES / "openai-retry-refactor.json")
    loopback.script([ollama_ndjson(["<current_focus>\n", "retry tests\n", "</current_focus>"])])
    result = KimiCompactionFeature().execute_action(
        "compact_conversation",
        session=session,
        config=ENABLED,
        summarize=summarizer(provider_config("ollama")),
        base_model="qwen3:8b",
    )
    assert result["ok"] and not result["noop"]
    sent = loopback.requests[-1]
    assert sent.path == "/api/chat"
    body = sent.json
    assert "tools" not in body and "tool_choice" not in body
    assert body["truncate"] is False and body["options"]["num_ctx"] > 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == COMPACTOR_SYSTEM_PROMPT
    assert body["messages"][1]["content"].startswith("## Message 1\nRole: system\nContent:\n")
    native = result["native_messages"]
    assert [m["role"] for m in native[:2]] == ["system", "system"]  # leading system kept
    assert native[2]["content"] == build_compact_summary_text(
        "<current_focus>\nretry tests\n</current_focus>"
    )
    assert native[3:] == [session.messages[i].data for i in range(len(session.messages) - 2, 10)]


def test_compact_up_to_here_against_openai_compatible(loopback, provider_config):
    session = load_session(SAMPLES / "kimi-debugging-session")
    loopback.script([openai_sse(["S1 ", "S2"])])
    result = KimiCompactionFeature().execute_action(
        "compact_up_to_here",
        session=session,
        config={**ENABLED, "compaction_model": "session-model"},
        summarize=summarizer(provider_config("openai")),
        message_number=3,
    )
    body = loopback.requests[-1].json
    assert body["model"] == "session-model"  # the per-session override reached the wire
    headers = [p["text"] for p in body["messages"][1]["content"] if p["text"].startswith("## ")]
    assert len(headers) == 3  # exactly messages 1..3, no tail preservation
    assert len(result["native_messages"]) == 1 + len(session.messages) - 3
    assert result["native_messages"][0]["content"][1]["text"] == "S1 S2"  # kimi shape


def test_disabled_config_sends_nothing(loopback, provider_config):
    session = load_session(SAMPLES / "openai-retry-refactor.json")
    result = KimiCompactionFeature().execute_action(
        "compact_conversation",
        session=session,
        config={"compaction": {"enabled": False, "type": "kimi"}},
        summarize=summarizer(provider_config("ollama")),
    )
    assert result["error"]["type"] == "disabled"
    assert loopback.requests == []

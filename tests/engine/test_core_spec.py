"""The spec's "Verification / Unit tests" list, one or more tests per item. The golden
cases made by running kimi-cli's own code are in tests/agents/test_kimi_cli_golden.py."""

from __future__ import annotations

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.compaction.prompts import resolve_prompt
from kimi_compact_tui.compaction.request import (
    COMPACTOR_SYSTEM_PROMPT,
    build_compaction_input_parts,
    build_http_body,
    build_kimi_compaction_request_session,
    merged_request_config,
)
from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.config import (
    AppConfig,
    _get_compaction_config,
    compaction_enablement,
    effective_compaction_model,
)
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.job import build_compacted_session, prepare_compaction
from kimi_compact_tui.job.feature import KimiCompactionFeature
from kimi_compact_tui.model import Message
from tests.core_helpers import (
    UPSTREAM_SHA,
    any_kimi_cli_compact_md,
    kimi_cli_compact_md_file,
    msgs,
)

PROMPT = "PROMPT BODY"
ENABLED = {"compaction": {"enabled": True, "type": "kimi"}}


def session_of(messages: list[Message], fmt: str = "openai-json") -> Session:
    return registry.get(fmt).from_messages(messages)


def user_parts(request: list[dict]) -> list[str]:
    return [p["text"] for p in request[1]["content"]]


# --- request shape --------------------------------------------------------------------------


def test_synthetic_single_user_message_with_message_blocks():
    m = msgs(("user", "first"), ("assistant", "second"), ("user", "third"), ("assistant", "fourth"))
    plan = make_plan(m)
    request = build_kimi_compaction_request_session(m, plan.request_indices, PROMPT)
    assert len(request) == 2
    assert [r["role"] for r in request] == ["system", "user"]
    assert all(p["type"] == "text" for p in request[1]["content"])
    assert user_parts(request) == [
        "## Message 1\nRole: user\nContent:\n",
        "first",
        "## Message 2\nRole: assistant\nContent:\n",
        "second",
        "\n" + PROMPT,
    ]


def test_generic_compactor_system_prompt_leads_the_request():
    m = msgs(("user", "a"), ("assistant", "b"), ("user", "c"), ("assistant", "d"))
    request = build_kimi_compaction_request_session(m, range(2), PROMPT)
    assert request[0] == {
        "role": "system",
        "content": "You are a helpful assistant that compacts conversation context.",
    }
    assert COMPACTOR_SYSTEM_PROMPT == request[0]["content"]


def test_text_only_filter_multipart_text_image_think():
    m = msgs(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}},
                {"type": "think", "think": "secret reasoning", "encrypted": None},
                {"type": "text", "text": " and this"},
                {"type": "audio_url", "audio_url": {"url": "data:audio/mp3;base64,BBB"}},
                {"type": "something_new", "text": "not a text part"},
            ],
        },
        ("assistant", "ok"),
    )
    parts = build_compaction_input_parts(m, range(2), PROMPT)
    assert parts[:2] == ["## Message 1\nRole: user\nContent:\n", "look:"]
    assert parts[2] == " and this"
    joined = "".join(parts)
    for dropped in ("secret reasoning", "base64", "not a text part"):
        assert dropped not in joined


def test_leading_system_numbered_in_request_but_kept_in_session():
    m = msgs(
        ("system", "agent system prompt"),
        ("user", "old q"),
        ("assistant", "old a"),
        ("user", "new q"),
        ("assistant", "new a"),
    )
    plan = make_plan(m)
    assert list(plan.leading_system_indices) == [0]
    assert list(plan.request_indices) == [0, 1, 2]
    assert list(plan.compact_indices) == [1, 2]
    assert 0 not in plan.compact_indices
    parts = build_compaction_input_parts(m, plan.request_indices, PROMPT)
    assert parts[0] == "## Message 1\nRole: system\nContent:\n"
    assert parts[1] == "agent system prompt"
    compacted = build_compacted_session(session_of(m), plan, "SUMMARY")
    assert compacted.messages[0].data == {"role": "system", "content": "agent system prompt"}
    assert [x.data for x in compacted.messages[2:]] == [m[3].data, m[4].data]


def test_tool_message_text_kept_structured_fields_dropped():
    m = msgs(
        ("user", "run it"),
        {
            "role": "assistant",
            "content": "calling",
            "tool_calls": [
                {"type": "function", "id": "c1", "function": {"name": "Shell", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "content": "exit 0, 3 passed", "tool_call_id": "c1"},
        ("user", "thanks"),
        ("assistant", "welcome"),
    )
    plan = make_plan(m)
    request = build_kimi_compaction_request_session(m, plan.request_indices, PROMPT)
    parts = user_parts(request)
    assert "## Message 3\nRole: tool\nContent:\n" in parts
    assert "exit 0, 3 passed" in parts
    flat = repr(request)
    assert "tool_calls" not in flat and "tool_call_id" not in flat and "Shell" not in flat


# --- tools are always disabled ----------------------------------------------------------------


def test_merged_request_config_disables_all_tools():
    config = merged_request_config({"settings_overrides": {"temperature": 0.1}}, None, "m1")
    assert config["disable_all_tools"] is True
    assert config["temperature"] == 0.1
    assert config["model"] == "m1"


def test_settings_overrides_cannot_reenable_tools():
    overrides = {
        "disable_all_tools": False,
        "tools": [{"type": "function", "function": {"name": "x"}}],
        "tool_choice": "auto",
        "max_tokens": 900,
    }
    config = merged_request_config({"settings_overrides": overrides}, None, "m1")
    assert config["disable_all_tools"] is True
    body = build_http_body([{"role": "system", "content": "x"}], config)
    assert "tools" not in body and "tool_choice" not in body
    assert "disable_all_tools" not in body
    assert body["max_tokens"] == 900
    assert body["stream"] is True


# --- preserved tail and no-ops ------------------------------------------------------------------


def test_preserved_tail_default_two_user_assistant_messages():
    m = msgs(
        ("user", "1"),
        ("assistant", "2"),
        ("user", "3"),
        {"role": "tool", "content": "t", "tool_call_id": "x"},
        ("assistant", "4"),
        {"role": "tool", "content": "t2", "tool_call_id": "y"},
    )
    plan = make_plan(m)
    assert plan.mode == "tail"
    assert list(plan.compact_indices) == [0, 1]
    assert list(plan.preserved_indices) == [2, 3, 4, 5]


def test_noop_when_fewer_user_assistant_messages_than_preserved():
    m = msgs(("system", "s"), ("user", "only one"), {"role": "tool", "content": "t"})
    plan = make_plan(m)
    assert plan.noop and "only 1 user/assistant message" in plan.noop
    assert list(plan.compact_indices) == [] and list(plan.request_indices) == []


@pytest.mark.parametrize("value", [0, -3])
def test_noop_when_max_preserved_is_not_positive(value):
    m = msgs(("user", "a"), ("assistant", "b"), ("user", "c"))
    plan = make_plan(m, max_preserved_messages=value)
    assert plan.noop and "<= 0" in plan.noop


def test_noop_when_nothing_left_to_delete():
    m = msgs(("system", "s"), ("user", "q"), ("assistant", "a"))
    plan = make_plan(m)
    assert plan.noop and "nothing to compact" in plan.noop


def test_explicit_end_compacts_exactly_the_range_without_tail():
    m = msgs(("system", "s"), ("user", "1"), ("assistant", "2"), ("user", "3"), ("assistant", "4"))
    plan = make_plan(m, up_to=5)  # the whole session: no tail preserved (Decision 2)
    assert plan.mode == "explicit"
    assert list(plan.request_indices) == [0, 1, 2, 3, 4]
    assert list(plan.compact_indices) == [1, 2, 3, 4]
    assert list(plan.preserved_indices) == []
    plan = make_plan(m, up_to=3)
    assert list(plan.compact_indices) == [1, 2]
    assert list(plan.preserved_indices) == [3, 4]
    assert plan.region_of(3) == "after_boundary"


def test_explicit_end_on_leading_system_only_is_a_noop_and_out_of_range_is_an_error():
    m = msgs(("system", "s"), ("user", "1"), ("assistant", "2"))
    assert make_plan(m, up_to=1).noop
    with pytest.raises(UserError, match="out of range"):
        make_plan(m, up_to=4)
    with pytest.raises(UserError, match="out of range"):
        make_plan(m, up_to=0)


# --- summary injection ---------------------------------------------------------------------------


def test_build_compact_summary_text_wraps_notice_in_system_tags():
    text = build_compact_summary_text("<current_focus>\nX\n</current_focus>")
    assert text == (
        "<system>Previous context has been compacted. Here is the compaction output:</system>\n"
        "<current_focus>\nX\n</current_focus>"
    )


def test_compacted_session_is_leading_system_summary_and_tail_without_ack():
    m = msgs(("system", "s"), ("user", "1"), ("assistant", "2"), ("user", "3"), ("assistant", "4"))
    plan = make_plan(m)
    out = build_compacted_session(session_of(m), plan, "BODY")
    roles = [x.role for x in out.messages]
    assert roles == ["system", "user", "user", "assistant"]
    assert out.messages[1].content == build_compact_summary_text("BODY")
    assert sum(1 for x in out.messages if x.role == "assistant") == 1  # no acknowledgment


# --- prompt -------------------------------------------------------------------------------------------


def test_exact_prompt_body_matches_kimi_cli_compact_md(monkeypatch):
    compact_md = kimi_cli_compact_md_file()
    monkeypatch.setenv("KIMI_CLI_COMPACT_MD", str(compact_md))
    prompt = resolve_prompt({})
    assert prompt.source == "kimi-cli"
    assert prompt.text.encode("utf-8") == compact_md.read_bytes()
    assert prompt.sha256 == UPSTREAM_SHA and prompt.upstream_exact
    m = msgs(("user", "a"), ("assistant", "b"), ("user", "c"), ("assistant", "d"))
    parts = build_compaction_input_parts(m, range(2), prompt.text)
    assert parts[-1] == "\n" + compact_md.read_text(encoding="utf-8")
    assert parts[-1].startswith("\n\n---\n\n")
    assert "CRITICAL: TEXT ONLY" not in parts[-1] and "REMINDER" not in parts[-1]


def test_bundled_prompt_is_our_own_and_follows_the_contract(monkeypatch):
    monkeypatch.delenv("KIMI_CLI_COMPACT_MD", raising=False)
    prompt = resolve_prompt({}, use_kimi_cli=False)
    assert prompt.source == "bundled" and not prompt.upstream_exact
    for tag in (
        "current_focus",
        "environment",
        "completed_tasks",
        "active_issues",
        "code_state",
        "important_context",
    ):
        assert f"<{tag}>" in prompt.text and f"</{tag}>" in prompt.text
    for rule in ("MUST KEEP", "MERGE", "REMOVE", "CONDENSE", "20 lines"):
        assert rule in prompt.text
    compact_md = any_kimi_cli_compact_md()
    if compact_md is not None:  # not a copy of kimi-cli's text
        theirs = set(compact_md.read_text(encoding="utf-8").splitlines()) - {""}
        ours = set(prompt.text.splitlines()) - {""}
        shared = {line for line in ours & theirs if len(line) > 30}
        assert not shared, shared


def test_custom_instruction_appended_in_the_same_text_part():
    m = msgs(("user", "a"), ("assistant", "b"), ("user", "c"), ("assistant", "d"))
    parts = build_compaction_input_parts(m, range(2), PROMPT, "Keep the DB notes")
    assert len(parts) == 5  # two messages (header + text) + one final part
    final = parts[-1]
    assert final.startswith("\n" + PROMPT)
    assert final.endswith("Keep the DB notes")
    assert "**User's Custom Compaction Instruction:**" in final
    assert "You MUST prioritize this instruction" in final


# --- enablement and config -----------------------------------------------------------------


def test_ui_gating_empty_elements_when_disabled_all_when_config_none():
    feature = KimiCompactionFeature()
    assert feature.get_ui_elements({"compaction": {"enabled": False, "type": "kimi"}}) == []
    assert feature.get_ui_elements({"compaction": {"enabled": True, "type": "gemini"}}) == []
    assert feature.get_ui_elements({}) == []
    ids = {e["id"] for e in feature.get_ui_elements(None)}
    assert ids == {"compact_conversation", "compact_up_to_here", "compaction_model"}
    assert {e["id"] for e in feature.get_ui_elements(ENABLED)} == ids


def test_execute_gating_returns_disabled_error():
    feature = KimiCompactionFeature()
    s = session_of(msgs(("user", "a"), ("assistant", "b"), ("user", "c"), ("assistant", "d")))
    called = []
    result = feature.execute_action(
        "compact_conversation",
        session=s,
        config={"compaction": {"enabled": False, "type": "kimi"}},
        summarize=lambda r: called.append(r) or "S",
    )
    assert result["ok"] is False and result["error"]["type"] == "disabled"
    assert called == []


def test_execute_action_compacts_and_compact_up_to_here_uses_explicit_end():
    feature = KimiCompactionFeature()
    m = msgs(("user", "a"), ("assistant", "b"), ("user", "c"), ("assistant", "d"), ("user", "e"))
    seen = []

    def summarize(request):
        seen.append(request)
        return "SUM"

    full = feature.execute_action(
        "compact_conversation", session=session_of(m), config=ENABLED, summarize=summarize
    )
    assert full["plan"]["compact_indices"] == [0, 1, 2]
    assert full["native_messages"][0]["content"] == build_compact_summary_text("SUM")
    assert [x["content"] for x in full["native_messages"][1:]] == ["d", "e"]
    here = feature.execute_action(
        "compact_up_to_here",
        session=session_of(m),
        config=ENABLED,
        summarize=summarize,
        message_number=4,
    )
    assert here["plan"]["compact_indices"] == [0, 1, 2, 3]
    assert [x["content"] for x in here["native_messages"][1:]] == ["e"]
    assert seen[1].body["messages"][1]["content"][-2]["text"] == "d"
    noop = feature.execute_action(
        "compact_conversation", session=session_of(m[:1]), config=ENABLED, summarize=summarize
    )
    assert noop["noop"] is True and noop["reason"]
    assert len(seen) == 2


def test_config_read_from_compaction_block():
    cfg = {
        "compaction": {
            "enabled": True,
            "type": "kimi",
            "max_preserved_messages": 5,
            "compaction_model": "kimi-k2",
            "prompt": "P",
            "settings_overrides": {"temperature": 0},
        },
        "max_preserved_messages": 99,  # root-level value is not read
    }
    got = _get_compaction_config(cfg)
    assert got["max_preserved_messages"] == 5
    assert got["compaction_model"] == "kimi-k2"
    assert got["prompt"] == "P"
    assert got["settings_overrides"] == {"temperature": 0}
    assert _get_compaction_config({"compaction": {}})["max_preserved_messages"] == 2
    assert compaction_enablement(cfg) == (True, None)
    enabled, reason = compaction_enablement({"agent": {"compaction": ENABLED["compaction"]}})
    assert not enabled and "compaction" in reason


def test_top_level_per_session_compaction_model_wins():
    cfg = {"compaction": {"enabled": True, "type": "kimi", "compaction_model": "block-model"}}
    assert effective_compaction_model(cfg) == "block-model"
    cfg["compaction_model"] = "session-model"
    assert effective_compaction_model(cfg) == "session-model"
    s = session_of(msgs(("user", "a"), ("assistant", "b"), ("user", "c"), ("assistant", "d")))
    prep = prepare_compaction(s, AppConfig(raw=cfg), base_model="provider-model")
    assert prep.request.body["model"] == "session-model"
    cfg.pop("compaction_model")
    prep = prepare_compaction(s, AppConfig(raw=cfg), base_model="provider-model")
    assert prep.request.body["model"] == "block-model"
    cfg["compaction"].pop("compaction_model")
    prep = prepare_compaction(s, AppConfig(raw=cfg), base_model="provider-model")
    assert prep.request.body["model"] == "provider-model"

"""The Codex format: reading a rollout as Codex 0.171 resumes it, on rollouts shaped like
Codex's (tests/factories/codex.py) and on the reference files Codex itself wrote;
tests/agents/test_codex_resume.py checks the same against the real agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.compaction.pairs import nearest_safe_up_to, splits_at, tool_exchanges
from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.formats import load_session, registry
from kimi_compact_tui.formats.codex import write_refusal
from tests.factories.codex import (
    BASE,
    FMT,
    NAME,
    Rollout,
    codex_state,
    conversation,
    parse,
    summary,
    text_item,
)

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "agents"
if not REFERENCE.is_dir():
    REFERENCE = Path("/work/shared/reference/agents")


def test_calls_results_reasoning_and_codexs_own_context_as_messages():
    s = parse(conversation().bytes())
    assert summary(s) == [
        ("user", "run echo hello", [], None),
        ("assistant", "", ["call_1"], None),
        ("tool", "hello\n", [], "call_1"),
        ("assistant", "It printed hello.", [], None),
        ("user", "two plus two?", [], None),
        ("assistant", "Four.", [], None),
        ("user", "run echo world", [], None),
        ("assistant", "", ["call_2"], None),
        ("tool", "world\n", [], "call_2"),
        ("assistant", "It printed world.", [], None),
    ]
    call = s.messages[1].tool_calls[0]
    assert call == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "exec_command", "arguments": '{"cmd": "echo hello"}'},
    }
    assert s.messages[5].has_think() and s.messages[5].parts()[0]["think"] == "2 + 2"
    state = codex_state(s)
    # Codex's developer message and environment context: its prefix, not history
    assert state.prefix == 2 and s.meta.system_prompt == BASE
    assert state.session_id == NAME[28:-6] and state.cwd == "/work"
    assert s.meta.recorded_tokens == 300 and s.warnings == [] and write_refusal(s) is None
    assert tool_exchanges(s.messages) == [("call_1", 1, (2,)), ("call_2", 7, (8,))]
    assert splits_at(s.messages, 2) and nearest_safe_up_to(s.messages, 2, 0) == 3


def test_dump_of_a_loaded_rollout_is_the_bytes_read():
    for data in (conversation().bytes(), conversation(paginated=False).bytes()):
        assert FMT.dump(parse(data)) == data


def test_registry_detects_a_rollout_and_no_longer_calls_it_unsupported(tmp_path):
    path = conversation().write(tmp_path)
    s = load_session(path)
    assert s.format.name == "codex" and len(s.messages) == 10
    assert registry.detect(tmp_path / "x.jsonl", path.read_bytes()[:200]).name == "codex"
    minimal = b'{"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {}}\n'
    (tmp_path / "min.jsonl").write_bytes(minimal)
    empty = load_session(tmp_path / "min.jsonl")
    assert empty.format.name == "codex" and empty.messages == []
    assert make_plan(empty.messages).noop


def test_a_first_line_longer_than_the_head_is_still_recognised(tmp_path):
    r = Rollout()
    r.records[0]["payload"]["base_instructions"] = {"text": "x" * 100_000}
    path = r.turn("hi").write(tmp_path)
    head = path.read_bytes()[: registry.HEAD_BYTES]
    assert b"\n" not in head and FMT.recognise(path, head)
    assert load_session(path).meta.system_prompt == "x" * 100_000


def test_mid_history_developer_and_agent_context_are_system_messages():
    r = conversation()
    r.item(text_item("developer", "<model_switch>\nnew model\n</model_switch>"))
    r.item(text_item("user", "<environment_context>\n  <cwd>/other</cwd>\n</environment_context>"))
    r.turn("and now?")
    s = parse(r.bytes())
    assert [m.role for m in s.messages[-4:]] == ["system", "system", "user", "assistant"]
    assert s.messages[-4].data["codex"] == {"role": "developer"}
    plan = make_plan(s.messages)
    assert plan.leading == 0 and plan.boundary == len(s.messages) - 2


def test_parallel_calls_are_one_assistant_message():
    r = Rollout().turn("two at once", reply=None)
    r.call("echo a")
    r.call("echo b")
    r.item({"type": "function_call_output", "call_id": "call_1", "output": "a"})
    r.item({"type": "function_call_output", "call_id": "call_2", "output": "b"})
    r.item(text_item("assistant", "both done"))
    s = parse(r.bytes())
    assert summary(s)[1:] == [
        ("assistant", "", ["call_1", "call_2"], None),
        ("tool", "a", [], "call_1"),
        ("tool", "b", [], "call_2"),
        ("assistant", "both done", [], None),
    ]


def test_a_call_codex_never_ran_gets_codexs_aborted_output_and_a_trailing_one_blocks_writing():
    r = Rollout().turn("slow", reply=None, complete=False)
    r.call("sleep 60")
    r.event("turn_aborted", turn_id="turn-1")
    r.turn("next")
    s = parse(r.bytes())
    assert summary(s)[:3] == [
        ("user", "slow", [], None),
        ("assistant", "", ["call_1"], None),
        ("tool", "aborted", [], "call_1"),
    ]
    assert s.messages[2].data["codex"] == {"synthetic": True}
    assert write_refusal(s) is None
    open_turn = Rollout().turn("slow", reply=None, complete=False)
    open_turn.call("sleep 60")
    refused = parse(open_turn.bytes())
    assert "mid-turn" in write_refusal(refused) and "turn-1" in write_refusal(refused)
    ended = Rollout().turn("slow", reply=None)
    ended.call("sleep 60")
    assert "has no output" in write_refusal(parse(ended.bytes()))


def test_an_output_whose_call_is_gone_is_not_sent():
    r = Rollout().turn("hi")
    r.item({"type": "function_call_output", "call_id": "call_gone", "output": "x"})
    r.turn("again")
    assert "tool" not in [m.role for m in parse(r.bytes()).messages]


def test_rollback_drops_the_last_user_turns():
    r = conversation().event("thread_rolled_back", num_turns=2)
    s = parse(r.bytes())
    assert [m.text() for m in s.messages] == ["run echo hello", "", "hello\n", "It printed hello."]


def test_an_earlier_compaction_replaces_the_history():
    r = conversation()
    r.add(
        "compacted",
        {
            "message": "SUMMARY",
            "replacement_history": [text_item("user", "SUMMARY"), text_item("user", "kept")],
        },
    )
    r.turn("after")
    s = parse(r.bytes())
    assert [m.text() for m in s.messages] == ["SUMMARY", "kept", "after", "ok"]
    assert codex_state(s).prefix == 0 and codex_state(s).compactions == 1
    # without replacement_history: every real user message, then the message
    r = conversation().add("compacted", {"message": "SUMMARY"}).turn("after")
    texts = [m.text() for m in parse(r.bytes()).messages]
    assert texts == ["run echo hello", "two plus two?", "run echo world", "SUMMARY", "after", "ok"]


def test_an_image_is_a_reference_never_the_data():
    data_url = "data:image/png;base64," + "iVBORw0KGgo" * 50
    r = Rollout().turn("look", reply="a picture")
    r.item(
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "<image>"},
                {"type": "input_image", "image_url": data_url},
                {"type": "input_text", "text": "</image> what is it?"},
            ],
        }
    )
    s = parse(r.bytes())
    (user,) = [m for m in s.messages if m.media_types()]
    assert user.media_types() == ["image_url"]
    url = user.parts()[1]["image_url"]["url"]
    assert url.startswith("codex-image:image/png;sha256=") and "iVBOR" not in url
    assert "iVBOR" not in json.dumps([m.data for m in s.messages])
    assert user.text() == "<image></image> what is it?"


def test_lines_codex_skips_are_skipped_with_a_warning_naming_the_line(tmp_path):
    lines = conversation().bytes().split(b"\n")
    lines.insert(3, b"{not json")
    lines.insert(5, b'{"timestamp":"t","type":"brand_new","payload":{}}')
    lines.insert(
        7,
        b'{"type":"response_item","payload":' + json.dumps(text_item("user", "x")).encode() + b"}",
    )
    path = tmp_path / NAME
    path.write_bytes(b"\n".join(lines))
    s = load_session(path)
    assert len(s.messages) == 10  # the record with no timestamp is not read either
    assert [w.split(": ", 1)[0] for w in s.warnings] == [f"{path}:4", f"{path}:6", f"{path}:8"]
    assert "not JSON" in s.warnings[0] and "brand_new" in s.warnings[1]
    assert "no timestamp" in s.warnings[2]


def test_a_torn_last_line_is_ignored_with_a_warning():
    data = conversation().bytes() + b'{"timestamp":"2026-12-01T15:36:00.000Z","ordi'
    s = parse(data)
    assert len(s.messages) == 10 and "torn" in s.warnings[-1]
    assert FMT.dump(s) == data


# --- the reference files Codex 0.171.0 wrote, before and after its own compaction ----------


def _reference(name: str) -> Path:
    path = REFERENCE / name
    if not path.is_file():
        pytest.skip(f"reference file {path} is not here (../shared/reference/agents/)")
    return path


def test_reference_before_codexs_compaction():
    path = _reference("codex-session-before-compact.jsonl")
    s = load_session(path)
    assert s.format.name == "codex" and s.warnings == []
    assert [(m.role, m.text()) for m in s.messages] == [
        ("user", "hello"),
        ("assistant", "FAKE-REPLY-2"),
        ("user", "second turn"),
        ("assistant", "FAKE-REPLY-3"),
        ("user", "third turn"),
        ("assistant", "FAKE-REPLY-4"),
    ]
    assert codex_state(s).prefix == 2 and FMT.dump(s) == path.read_bytes()


def test_reference_after_codexs_compaction_is_its_replacement_history_and_after():
    path = _reference("codex-session-after-compact.jsonl")
    s = load_session(path)
    records = [json.loads(x) for x in path.read_bytes().splitlines()]
    (compacted,) = [r["payload"] for r in records if r["type"] == "compacted"]
    replacement = compacted["replacement_history"]
    assert len(s.messages) == len(replacement) + 2
    roles = [m.role for m in s.messages]
    assert roles == ["user", "user", "system", "system", "user", "user", "user", "assistant"]
    assert s.messages[5].text() == compacted["message"]  # its summary, as a user message
    assert [m.text() for m in s.messages[-2:]] == ["fourth turn", "FAKE-REPLY-7"]
    assert "FAKE-SUMMARY-6" in s.messages[5].text() and codex_state(s).prefix == 0
    assert codex_state(s).compactions == 1 and FMT.dump(s) == path.read_bytes()

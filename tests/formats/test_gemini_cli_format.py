"""Reading Gemini CLI sessions as Gemini CLI 0.61 resumes them: built files for the
cases a short agent run does not produce, and the reference files the agent wrote
(the real-agent tests in tests/agents are the proof of the common cases)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import dump_session, load_session, parse_bytes
from kimi_compact_tui.formats.base import SessionMeta, state_of
from kimi_compact_tui.formats.gemini_cli import FORMAT as FMT
from kimi_compact_tui.formats.gemini_cli.history import PREFIX_ID, stable_id
from kimi_compact_tui.formats.gemini_cli.js import lines
from kimi_compact_tui.formats.gemini_cli.state import GeminiState
from kimi_compact_tui.job import CompactionJob
from tests.factories import gemini_cli as g

# ../shared/reference beside the repository (or beside the folder of worktrees)
REFERENCE = next(
    (
        p / "shared" / "reference" / "agents"
        for p in Path(__file__).resolve().parents[3:5]
        if (p / "shared" / "reference" / "agents").is_dir()
    ),
    Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "agents",
)


def parse(tmp_path: Path, records: list, name: str = "session-2026-01-01T10-00-5f0c3a52.jsonl"):
    return load_session(g.write(tmp_path / "chats" / name, records))


def roles(session) -> list[str]:
    return [m.role for m in session.messages]


def texts(session) -> list[str]:
    return [m.text() for m in session.messages]


def test_the_built_conversation_reads_as_gemini_resumes_it(tmp_path):
    session = parse(tmp_path, g.conversation())
    assert session.format is FMT and session.warnings == []
    # the context message is Gemini's prefix; m2 was replaced in place by its later line;
    # the result is sent twice (from the reply's toolCalls and from its own record)
    assert roles(session) == ["user", "assistant", "tool", "tool", "assistant", "user", "assistant"]
    call = session.messages[1].tool_calls[0]
    assert call["id"] == "c1"  # sent without its "<tool name>__" prefix
    assert json.loads(call["function"]["arguments"]) == {"command": "echo hi"}
    assert [m.tool_call_id for m in session.messages[2:4]] == ["c1", "c1"]
    assert texts(session)[2:4] == ["hi", "hi"]
    think = [p for p in session.messages[4].parts() if p["type"] == "think"]
    assert think == [{"type": "think", "think": "**Plan** say it"}]
    state = state_of(session, GeminiState)
    assert session.meta == SessionMeta(recorded_tokens=105)
    assert (
        state.title == "run echo hi" and state.session_id == g.SID and state.recorded_tokens == 105
    )
    assert dump_session(session) == session.path.read_bytes()


def test_rewind_drops_the_message_and_everything_after_it(tmp_path):
    records = g.conversation() + [{"$rewindTo": "m5"}, g.user("m7", "again")]
    assert texts(parse(tmp_path, records))[-2:] == ["It printed hi.", "again"]
    unknown = g.conversation() + [{"$rewindTo": "nope"}, g.user("m7", "only this")]
    assert texts(parse(tmp_path, unknown)) == ["only this"]


def test_set_messages_replaces_the_list_and_a_header_mid_file_does_not(tmp_path):
    reset = {"$set": {"messages": [g.user("ctx", g.CTX), g.user("m9", "fresh start")]}}
    assert texts(parse(tmp_path, g.conversation() + [reset])) == ["fresh start"]
    again = g.conversation() + [g.header(when="2026-01-01T11:00:00.000Z"), g.user("m9", "next")]
    session = parse(tmp_path, again)
    assert texts(session)[-1] == "next" and len(session.messages) == 8
    assert state_of(session, GeminiState).metadata["startTime"] == "2026-01-01T11:00:00.000Z"


def test_ignored_messages_are_not_history(tmp_path):
    records = g.conversation()[:3] + [
        g.user("a", "/stats"),
        g.user("b", "  ?help"),
        g.user("c", "<hook_context>x</hook_context>"),
        g.user("d", "\ufeff/compress"),  # JavaScript's trim() removes U+FEFF
        g.user("e", "\x1c/kept"),  # ... and not U+001C (Python's strip() would)
        g.user("f", ""),
        {"id": "i", "type": "info", "content": "note"},
        {"id": "w", "type": "warning", "content": "careful"},
        {"id": "x", "type": "error", "content": "failed"},
        g.gemini("m2", "ok"),
    ]
    assert texts(parse(tmp_path, records)) == ["run echo hi", "\x1c/kept", "ok"]


def test_lines_split_as_nodes_readline_does(tmp_path):
    odd = "a\u2028b\u0085c"
    data = (g.js(g.header()) + "\r\n" + g.js(g.user("m1", odd)) + "\n").encode()
    assert [raw for _, _, raw in lines(b"x\ry\r\nz\nw")] == [b"x", b"y", b"z", b"w"]
    session = parse_bytes(data, tmp_path / "s.jsonl")
    assert texts(session) == [odd]


def test_unparsable_lines_are_skipped_with_a_warning_naming_the_line(tmp_path):
    records = g.conversation()
    path = g.write(tmp_path / "chats" / "session-x.jsonl", records)
    data = path.read_bytes().replace(
        b'{"$set":{"lastUpdated"', b'{"$set":NaN,"x":{"lastUpdated"', 1
    )
    path.write_bytes(data + b"{not json\n")
    session = load_session(path)
    assert len(session.messages) == 7
    assert [w.split(": ")[0] for w in session.warnings] == [f"{path}:4", f"{path}:12"]
    assert all("Gemini CLI skips this line" in w for w in session.warnings)


def test_calls_without_ids_get_gemini_clis_stable_ids(tmp_path):
    reply = g.gemini("m2", [{"functionCall": {"name": "run_shell_command", "args": {}}}])
    result = {"functionResponse": {"name": "run_shell_command", "response": {"output": "x"}}}
    records = g.conversation()[:3] + [reply, g.user("m3", [result]), g.gemini("m4", "done")]
    session = parse(tmp_path, records)
    call_id = session.messages[1].tool_calls[0]["id"]
    # turn 2 of the history: Gemini's prefix is turn 0, the prompt turn 1
    assert call_id == f"synth_run_shell_command_{stable_id('m2', '2', '0')}"
    assert session.messages[2].tool_call_id == call_id
    assert PREFIX_ID == stable_id("environment-context")


def test_a_run_of_model_turns_with_an_empty_text_is_not_sent(tmp_path):
    records = g.conversation()[:3] + [
        g.gemini("m2", [{"text": ""}]),
        g.gemini("m3", "dropped with it"),
        g.user("m4", "next"),
        g.gemini("m5", "kept"),
    ]
    assert texts(parse(tmp_path, records)) == ["run echo hi", "next", "kept"]


def test_images_are_references_never_the_data(tmp_path):
    data = base64.b64encode(b"\x89PNG fake image bytes" * 50).decode()
    image = {"inlineData": {"mimeType": "image/png", "data": data}}
    records = g.conversation()[:3] + [
        g.user("m1", [{"text": "what is in this image?"}, image]),
        g.gemini("m2", "a cat"),
        g.user("m3", "thanks"),
        g.gemini("m4", "welcome"),
    ]
    session = parse(tmp_path, records)
    (part,) = [p for p in session.messages[0].parts() if p["type"] == "image_url"]
    assert part["image_url"]["url"].startswith("gemini-inline:image/png;sha256=")
    prep = CompactionJob.load(session.path, AppConfig()).prepare()
    assert prep.plan.boundary == 2
    body = json.dumps(prep.request.body, ensure_ascii=False)
    assert data[:40] not in body and "what is in this image?" in body


def test_a_legacy_json_session_is_read_and_not_written(tmp_path):
    legacy = dict(g.header(), messages=[g.user("m1", "old prompt"), g.gemini("m2", "old reply")])
    path = tmp_path / "chats" / "session-2025-01-01T10-00-5f0c3a52.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(legacy, indent=2), encoding="utf-8")
    session = load_session(path)
    assert texts(session) == ["old prompt", "old reply"]
    assert "rewrites it as a .jsonl" in FMT.write_refusal(session)


def test_refusals(tmp_path):
    sub = parse(tmp_path, [g.header(kind="subagent"), *g.conversation()[2:]])
    assert "sub-agent" in FMT.write_refusal(sub)
    open_call = parse(
        tmp_path, [*g.conversation()[:4], g.gemini("m2", "", [g.call("c", "x", None)])]
    )
    assert "mid-turn" in FMT.write_refusal(open_call)
    unanswered = parse(tmp_path, g.conversation()[:7])  # the results, no reply yet
    assert "no reply from the model" in FMT.write_refusal(unanswered)
    assert FMT.write_refusal(parse(tmp_path, g.conversation())) is None


def test_recognised_by_its_header_only(tmp_path):
    assert FMT.recognise(tmp_path / "a.jsonl", (g.js(g.header()) + "\n").encode())
    claude = {"type": "user", "sessionId": "x", "uuid": "u", "parentUuid": None}
    assert not FMT.recognise(tmp_path / "a.jsonl", (g.js(claude) + "\n").encode())
    openai = {"role": "user", "content": "hi"}
    assert not FMT.recognise(tmp_path / "a.jsonl", (g.js(openai) + "\n").encode())
    with pytest.raises(SessionFormatError, match="no Gemini CLI session header"):
        parse_bytes(b'{"$set":{"a":1}}\n', tmp_path / "x.jsonl", FMT)


def _reference(name: str) -> Path:
    path = REFERENCE / name
    if not path.is_file():
        pytest.skip(f"reference file {path} is absent (the shared reference data is not here)")
    return path


def test_the_reference_session_after_geminis_compression(tmp_path):
    session = load_session(_reference("gemini-session-after-compress.jsonl"))
    # what Gemini CLI resumes: its snapshot as a user message, its acknowledgement, the
    # turn after; the /compress command and everything before the snapshot are gone
    assert roles(session) == ["user", "assistant", "user", "assistant"]
    assert session.messages[0].text().startswith("FAKE-SUMMARY-")
    assert texts(session)[2:] == ["sixth turn", "FAKE-REPLY-14"]
    assert session.warnings == [] and FMT.write_refusal(session) is None


def test_the_reference_stray_file_holds_no_conversation():
    session = load_session(_reference("gemini-session-before-compress.jsonl"))
    state = state_of(session, GeminiState)
    assert session.messages == [] and not state.resumable() and state.session_id

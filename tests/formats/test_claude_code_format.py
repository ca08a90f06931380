"""Reading Claude Code transcripts as the agent resumes them (the real agent's own
check is tests/agents/test_claude_code_resume.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kimi_compact_tui.compaction.pairs import find_splits
from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import SessionMeta, dump_session, load_session, registry
from kimi_compact_tui.formats.base import state_of
from kimi_compact_tui.formats.claude_code import FORMAT as FMT
from kimi_compact_tui.formats.claude_code import ClaudeState
from tests.factories.claude_code import (
    SID,
    Transcript,
    image,
    text,
    tool_use,
    two_turns,
)

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "agents"
if not REFERENCE.is_dir():
    REFERENCE = Path("/work/shared/reference/agents")


def parse(t: Transcript, tmp_path: Path):
    return load_session(t.write(tmp_path))


def view(session) -> list[tuple]:
    return [
        (m.role, m.text(), [c["function"]["name"] for c in m.tool_calls], m.tool_call_id)
        for m in session.messages
    ]


def _reference(name: str) -> Path:
    path = REFERENCE / name
    if not path.is_file():
        pytest.skip(f"the reference transcript {path} is not on this machine")
    return path


def test_reference_transcript_before_the_agents_compaction():
    path = _reference("claude-session-before-compact.jsonl")
    session = load_session(path)
    assert session.format is FMT and FMT.name == "claude-code" and session.warnings == []
    roles = [m.role for m in session.messages]
    # the prompt, the agent's two attachments (sent as system), then three turns
    assert roles == ["user", "system", "system", "assistant"] + ["user", "assistant"] * 2
    assert [m.text() for m in session.messages if m.role == "assistant"] == [
        "FAKE-REPLY-3",
        "FAKE-REPLY-5",
        "FAKE-REPLY-7",
    ]
    assert dump_session(session) == path.read_bytes()


def test_reference_transcript_after_the_agents_compaction():
    """The preserved segment (the last reply) is re-linked after the summary and
    everything before the boundary is left out, as the agent resumes it."""
    session = load_session(_reference("claude-session-after-compact.jsonl"))
    got = view(session)
    assert [r for r, *_ in got] == ["user", "assistant", "user", "user", "user", "system"]
    assert session.messages[0].data["claude"] == {"compact_summary": True}
    assert "FAKE-SUMMARY-9" in got[0][1] and got[1][1] == "FAKE-REPLY-7"
    assert got[2][1].startswith("<local-command-caveat>")
    assert not any("FAKE-REPLY-3" in m.text() or "hello" == m.text() for m in session.messages)


def test_replies_tool_calls_results_and_thinking(tmp_path):
    session = parse(two_turns(), tmp_path)
    assert view(session) == [
        ("user", "Run echo hi", [], None),
        ("system", "[attachment: skill_listing]\ncontent: - verify: check things", [], None),
        ("assistant", "Running it.", ["Bash"], None),
        ("tool", "hi", [], "toolu_1"),
        ("assistant", "It printed hi.", [], None),
        ("user", "What is 2 + 2?", [], None),
        ("assistant", "Four.", [], None),
    ]
    reply = session.messages[-1]
    assert reply.has_think() and "2 + 2 = 4" not in reply.text()
    call = session.messages[2].tool_calls[0]
    assert call == {
        "id": "toolu_1",
        "type": "function",
        "function": {"name": "Bash", "arguments": '{"command": "echo hi"}'},
    }
    # a boundary between the call and its result is a split the engine sees
    assert find_splits(session.messages, make_plan(session.messages, up_to=3))
    assert not find_splits(session.messages, make_plan(session.messages, up_to=4))
    assert (
        state_of(session, ClaudeState).title == "Run echo hi"
        and state_of(session, ClaudeState).cwd == "/work/project"
    )


def test_parallel_calls_merge_into_one_reply_across_their_results(tmp_path):
    t = Transcript()
    t.user("Run both")
    t.assistant([tool_use("toolu_a", "Bash", {"command": "echo a"})], mid="msg_x")
    t.result("toolu_a", "a")
    t.assistant([tool_use("toolu_b", "Bash", {"command": "echo b"})], mid="msg_x")
    t.result("toolu_b", "b")
    t.assistant([text("Both ran.")], mid="msg_y")
    session = parse(t, tmp_path)
    assert view(session) == [
        ("user", "Run both", [], None),
        ("assistant", "", ["Bash", "Bash"], None),
        ("tool", "a", [], "toolu_a"),
        ("tool", "b", [], "toolu_b"),
        ("assistant", "Both ran.", [], None),
    ]


def test_attachments_wait_for_the_next_reply(tmp_path):
    t = Transcript()
    t.user("Hi")
    t.attachment(
        {"type": "nested_memory", "content": {"path": "CLAUDE.md", "content": "Be brief."}}
    )
    t.user("<command-name>/x</command-name>", isMeta=True)
    t.assistant([text("Hello.")])
    session = parse(t, tmp_path)
    assert [(m.role, m.text().split("\n")[0]) for m in session.messages] == [
        ("user", "Hi"),
        ("user", "<command-name>/x</command-name>"),
        ("system", "[attachment: nested_memory]"),
        ("assistant", "Hello."),
    ]
    assert "content.content: Be brief." in session.messages[2].text()
    assert session.messages[1].data["claude"] == {"meta": True}


def test_images_are_references_never_data(tmp_path):
    t = Transcript()
    t.user([image("QUJDRA=="), text("What is this?")])
    t.assistant([text("A picture.")])
    session = parse(t, tmp_path)
    (part,) = [p for p in session.messages[0].parts() if p["type"] == "image_url"]
    assert part["image_url"]["url"].startswith("claude-image:image/png;sha256=")
    assert "QUJDRA==" not in str(session.messages[0].data)
    assert session.messages[0].media_types() == ["image_url"]


def test_progress_records_are_skipped_and_their_children_reparented(tmp_path):
    t = Transcript()
    first = t.user("Go")
    t.meta(type="progress", uuid="p-1", parentUuid=first, data={"type": "hook_progress"})
    t.assistant([text("Done.")])
    t.lines[-1]["parentUuid"] = "p-1"
    assert view(parse(t, tmp_path)) == [("user", "Go", [], None), ("assistant", "Done.", [], None)]


def test_the_last_prompt_leaf_wins_over_a_later_branch(tmp_path):
    """A rewind leaves two branches; the last-prompt record names the resumed one
    unless the last record descends from it."""
    t = Transcript()
    root = t.user("Start")
    kept = t.assistant([text("Branch one.")])[0]
    t.assistant([text("Branch two.")], parent=root)
    t.last_prompt(kept)
    assert [m.text() for m in parse(t, tmp_path).messages] == ["Start", "Branch one."]
    t.user("Go on", parent=kept)
    t.assistant([text("Continued.")])
    assert [m.text() for m in parse(t, tmp_path).messages][-2:] == ["Go on", "Continued."]


def test_sidechain_records_and_api_error_replies_are_not_the_history(tmp_path):
    t = Transcript()
    t.user("Main")
    t.assistant([text("Main reply.")])
    t.user("side prompt", isSidechain=True)
    t.assistant(
        [text("API Error: overloaded")], isApiErrorMessage=True, message_model="<synthetic>"
    )
    t.lines[-1]["message"]["model"] = "<synthetic>"
    assert [m.text() for m in parse(t, tmp_path).messages] == ["Main", "Main reply."]


def test_lines_the_agent_skips_are_warned_about_and_kept(tmp_path):
    t = two_turns()
    path = t.write(tmp_path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    lines.insert(2, b"{not json")
    path.write_bytes(b"\n".join(lines) + b'{"parentUuid":"x","type":"user","mes')
    session = load_session(path)
    assert len(session.messages) == 7
    assert [w.split(": ", 1)[0] for w in session.warnings] == [f"{path}:3", f"{path}:14"]
    assert dump_session(session) == path.read_bytes()
    assert "partial record" in FMT.write_refusal(session)


def test_an_unanswered_tool_call_at_the_end_is_refused(tmp_path):
    t = two_turns()
    t.user("Run the slow one")
    t.assistant([tool_use("toolu_slow", "Bash", {"command": "sleep 60"})])
    session = parse(t, tmp_path)
    assert "toolu_slow" in FMT.write_refusal(session) and "mid-turn" in FMT.write_refusal(session)
    t.result("toolu_slow", "interrupted", is_error=True)
    session = parse(t, tmp_path)
    assert FMT.write_refusal(session) is None
    assert session.messages[-1].data["claude"] == {"is_error": True}


def test_an_older_transcript_opens(tmp_path):
    """Claude Code 2.0.x (public record shapes): a summary line first, the envelope
    keys first in each record, no queue or last-prompt records, the same message
    records (with requestId, thinkingMetadata) and tool results."""
    t = Transcript(version="2.0.31")
    t.meta(type="summary", summary="Fixing the parser", leafUuid="00000000-aaaa")
    t.user("Fix the parser", thinkingMetadata={"level": "high", "disabled": False})
    t.assistant([tool_use("toolu_r", "Read", {"file_path": "/p.py"})], requestId="req_1")
    t.result("toolu_r", [{"type": "text", "text": "def parse(): ..."}])
    t.assistant([text("Fixed.")], requestId="req_2")
    path = t.write(tmp_path)
    assert (
        path.read_bytes()
        .split(b"\n")[1]
        .startswith(b'{"parentUuid":null,"isSidechain":false,"userType"')
    )
    assert registry.detect(path, path.read_bytes()[:65536]).name == "claude-code"
    session = load_session(path)
    assert view(session)[2] == ("tool", "def parse(): ...", [], "toolu_r")
    assert len(session.messages) == 4 and state_of(session, ClaudeState).title == "Fix the parser"


def test_recognised_by_its_records_not_by_other_jsonl(tmp_path):
    claude = two_turns().data()
    assert FMT.recognise(Path("x.jsonl"), claude)
    assert not FMT.recognise(Path("x.jsonl"), b'{"role": "user", "content": "hi"}\n')
    long_first = b'{"parentUuid":null,"sessionId":"' + SID.encode() + b'","x":"' + b"a" * 70000
    assert FMT.recognise(Path("x.jsonl"), long_first[:65536])
    snapshot = b'{"type":"file-history-snapshot","messageId":"m","snapshot":{}}\n'
    assert FMT.recognise(Path("x.jsonl"), snapshot + claude)


def test_the_session_on_the_format_contract(tmp_path):
    """No system prompt in a transcript; the recorded tokens are the last reply's
    usage (input + output); the state is a ClaudeState; a Claude Code session is
    never made from bare messages, and another format's session is not written."""
    session = parse(two_turns(), tmp_path)
    assert session.meta == SessionMeta(system_prompt=None, recorded_tokens=100 + 10)
    assert isinstance(session.format_state, ClaudeState)
    with pytest.raises(SessionFormatError, match="cannot be made from messages"):
        FMT.from_messages(session.messages)
    other = registry.get("openai-jsonl").from_messages(session.messages)
    assert FMT.write_refusal(other) == "not a loaded Claude Code session"

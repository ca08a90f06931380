"""The records a compaction appends to a kimi-code journal, and the append
and undo checks; and the journal builder the kimi-code format tests share.

Journals are built record by record in the shape kimi-code 2.1.0 writes (key
order, fields and the records around the history, as observed in journals the
real kimi-code wrote on this machine); tests/agents/ checks the same against the
real agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats.jsvalue import js_slice_start, js_stringify
from kimi_compact_tui.formats.kimi_code.plugin import (
    CLOSE_NOTE,
    KimiCodeFormat,
    append_allowed,
    undo_allowed,
)

FMT = KimiCodeFormat()
T0 = 1796115606402


class Journal:
    """A kimi-code 2.1 journal, record by record (see the module docstring)."""

    def __init__(self, agent: str = "main") -> None:
        self.agent = agent
        self.time = T0
        self.records: list[dict[str, Any]] = [
            {"type": "metadata", "protocol_version": "1.5", "created_at": T0}
        ]
        self.n = 0
        self.add("runtime.set_binding", workspaceId="wd_work_d7a539110fa4", runtimeId="local")
        self.add("profile.bind", modelAlias="fake", profileName="agent", systemPrompt="SYSTEM")

    def add(self, record_type: str, /, **payload: Any) -> dict[str, Any]:
        self.time += 7
        record = {"type": record_type, "agentId": self.agent, **payload, "time": self.time}
        self.records.append(record)
        return record

    def uid(self, prefix: str = "u") -> str:
        self.n += 1
        return f"{prefix}-{self.n:04d}"

    def append_message(self, message: dict[str, Any]) -> None:
        self.add("context.append_message", message=message)

    def prompt(self, text: str, content: list | None = None, owned: str | None = None) -> str:
        """A user prompt; ``owned``: a reminder injected just before it, owned by it."""
        pid = self.uid("msg")
        parts = content if content is not None else [{"type": "text", "text": text}]
        self.add("turn.prompt", input=parts, origin={"kind": "user"}, promptId=pid, turnId=self.n)
        if owned:
            self.reminder(owned, owner=pid)
        self.append_message(
            {
                "role": "user",
                "content": parts,
                "id": pid,
                "toolCalls": [],
                "origin": {"kind": "user"},
            }
        )
        # the UI record kimi-code writes beside it (no agentId, "kind": "event")
        self.records.append(
            {
                "message": {"message": {"role": "user", "content": parts}, "meta": {}},
                "type": "agent.message.appended",
                "time": self.time,
                "kind": "event",
            }
        )
        return pid

    def reminder(self, text: str, owner: str | None = None) -> None:
        origin: dict[str, Any] = {"kind": "injection", "variant": "permission_mode"}
        if owner:
            origin["ownerPromptId"] = owner
        self.append_message(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"<system-reminder>\n{text}\n</system-reminder>"}
                ],
                "toolCalls": [],
                "origin": origin,
            }
        )

    def loop(self, event: dict[str, Any]) -> None:
        self.add("context.append_loop_event", event=event)

    def begin(self) -> str:
        step = self.uid("step")
        self.loop({"type": "step.begin", "uuid": step, "turnId": "0", "step": 1})
        self.add("llm.request", kind="loop", provider="openai", model="fake-model")
        self.add("usage.record", model="fake", usage={"inputOther": 10, "output": 10})
        return step

    def part(self, step: str, part: dict[str, Any]) -> None:
        self.loop({"type": "content.part", "uuid": self.uid(), "stepUuid": step, "part": part})

    def call(self, step: str, call_id: str, command: str) -> None:
        self.loop(
            {
                "type": "tool.call",
                "uuid": self.uid(),
                "stepUuid": step,
                "toolCallId": call_id,
                "name": "Bash",
                "args": {"command": command},
                "display": {"kind": "command", "command": command},
            }
        )

    def result(self, call_id: str, output: Any, **extra: Any) -> None:
        self.loop(
            {
                "type": "tool.result",
                "parentUuid": self.uid(),
                "toolCallId": call_id,
                "result": {"output": output, **extra},
            }
        )

    def end(self, step: str, finish: str = "end_turn") -> None:
        self.loop(
            {"type": "step.end", "uuid": step, "turnId": "0", "step": 1, "finishReason": finish}
        )

    def answer(self, text: str, think: str | None = None) -> None:
        step = self.begin()
        if think:
            self.part(step, {"type": "think", "think": think, "reasoningKey": "reasoning_content"})
        self.part(step, {"type": "text", "text": text})
        self.end(step)
        self.add("turn.ended", turnId=self.n, reason="completed", durationMs=175)
        self.add("token_counting.turn_recorded", turnId=self.n, length=0, tokens=2396)

    def tool_turn(self, call_id: str, command: str, output: str) -> None:
        step = self.begin()
        self.part(step, {"type": "text", "text": "running"})
        self.call(step, call_id, command)
        self.result(call_id, output, durationMs=20)
        self.end(step, "tool_use")

    def bytes(self) -> bytes:
        return b"".join(
            json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for r in self.records
        )


def conversation() -> Journal:
    j = Journal()
    j.prompt("first prompt")
    j.reminder("Auto permission mode is active.")
    j.tool_turn("call_1", "echo hello", "hello\n")
    j.answer("done one", think="thinking a")
    j.prompt("second prompt")
    j.answer("answer two")
    return j


def parse(data: bytes, path: Path = Path("/s/agents/main/wire.jsonl")):
    return FMT.parse(data, path)


def summary(session) -> list[tuple[str, str]]:
    return [(m.role, m.text()) for m in session.messages]


NOW = 1796116006899


def compact(data: bytes, up_to: int | None = None, output_tokens: int | None = 7):
    session = parse(data)
    plan = make_plan(session.messages, up_to=up_to)
    compacted = FMT.compacted_session(session, plan, "OUR SUMMARY", output_tokens, time_ms=NOW)
    return session, plan, compacted, FMT.write_op(session, compacted)


def test_four_records_in_kimi_codes_shape():
    session, plan, compacted, op = compact(conversation().bytes(), up_to=5)
    assert op.policy == "append" and CLOSE_NOTE in compacted.format.write_notes
    assert "must not be running" in CLOSE_NOTE and CLOSE_NOTE in FMT.write_notes
    lines = op.data.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 5
    records = [json.loads(line) for line in lines[:-1]]
    assert [list(r) for r in records] == [
        ["type", "source", "agentId", "time"],
        [
            "type",
            "agentId",
            "summary",
            "contextSummary",
            "compactedCount",
            "tokensBefore",
            "tokensAfter",
            "summaryOutputTokens",
            "legacyTail",
            "time",
        ],
        ["type", "agentId", "length", "tokens", "measured", "time"],
        ["type", "agentId", "time"],
    ]
    begin, apply, rebased, complete = records
    assert begin == {
        "type": "full_compaction.begin",
        "source": "manual",
        "agentId": "main",
        "time": NOW,
    }
    assert apply["summary"] == "OUR SUMMARY"
    assert apply["contextSummary"] == build_compact_summary_text("OUR SUMMARY")
    assert apply["compactedCount"] == 5 == plan.boundary
    assert apply["legacyTail"] is True and "keptUserMessageCount" not in apply
    assert (
        apply["summaryOutputTokens"] == 7 and apply["tokensBefore"] == session.meta.recorded_tokens
    )
    assert rebased == {
        "type": "token_counting.rebased",
        "agentId": "main",
        "length": 3,  # the summary and the two kept messages
        "tokens": apply["tokensAfter"],
        "measured": False,
        "time": NOW,
    }
    assert complete["type"] == "full_compaction.complete"
    # kimi-code's JSON.stringify: compact, non-ASCII as it is
    assert lines[1].startswith(b'{"type":"context.apply_compaction","agentId":"main",')


def test_the_journal_after_our_records_folds_to_summary_and_kept_messages():
    data = conversation().bytes()
    session, plan, compacted, op = compact(data, up_to=5)
    after = parse(data + op.data)
    assert summary(after) == [
        ("user", build_compact_summary_text("OUR SUMMARY")),
        ("user", "second prompt"),
        ("assistant", "answer two"),
    ]
    assert after.messages == compacted.messages
    assert FMT.dump(compacted) == data + op.data
    assert after.messages[0] == FMT.summary_message("OUR SUMMARY")


def test_default_tail_counts_tool_results_and_reminders_as_context_messages():
    j = conversation()
    j.prompt("third")
    j.tool_turn("call_2", "echo world", "world\n")
    j.answer("printed world")
    data = j.bytes()
    session, plan, compacted, op = compact(data)
    apply = json.loads(op.data.split(b"\n")[1])
    # the preserved tail: the last two user/assistant messages and what follows them
    assert apply["compactedCount"] == plan.boundary == len(session.messages) - 3
    kept = [m.role for m in parse(data + op.data).messages[1:]]
    assert kept == ["assistant", "tool", "assistant"]


def test_a_lone_surrogate_in_the_summary_is_written_as_javascript_escapes_it():
    session = parse(conversation().bytes())
    plan = make_plan(session.messages, up_to=3)
    compacted = FMT.compacted_session(session, plan, "half \ud83d pair é", None, time_ms=NOW)
    data = FMT.write_op(session, compacted).data
    assert b'"summary":"half \\ud83d pair \xc3\xa9"' in data
    assert parse(conversation().bytes() + data).messages[0].text().endswith("half \ud83d pair é")


def test_without_output_tokens_no_summary_output_field_and_an_estimate():
    _, _, compacted, op = compact(conversation().bytes(), up_to=3, output_tokens=None)
    apply = json.loads(op.data.split(b"\n")[1])
    assert "summaryOutputTokens" not in apply and apply["tokensAfter"] > 0


def test_an_unterminated_last_record_gets_its_newline_first():
    data = conversation().bytes().rstrip(b"\n")
    _, _, _, op = compact(data, up_to=5)
    assert op.data.startswith(b"\n{")
    assert len(parse(data + op.data).messages) == 3


def test_writing_is_refused_mid_turn_and_after_a_torn_line():
    j = conversation()
    step = j.begin()
    j.call(step, "c9", "sleep 9")
    with pytest.raises(ApplyError, match="mid-turn"):
        compact(j.bytes(), up_to=3)
    with pytest.raises(ApplyError, match="partial record"):
        compact(conversation().bytes() + b'{"type":"conte', up_to=3)


def test_a_sub_agent_journal_writes_its_own_agent_id(tmp_path):
    j = Journal(agent="agent-0")
    j.prompt("sub task")
    j.answer("sub answer")
    j.prompt("more")
    j.answer("done")
    path = tmp_path / "agents" / "agent-0" / "wire.jsonl"
    session = FMT.parse(j.bytes(), path)
    assert len(session.messages) == 4
    plan = make_plan(session.messages, up_to=2)
    compacted = FMT.compacted_session(session, plan, "S", None, time_ms=NOW)
    op = FMT.write_op(session, compacted)
    assert all(json.loads(x)["agentId"] == "agent-0" for x in op.data.split(b"\n")[:-1])


def test_append_allowed():
    loaded = conversation().bytes()
    assert append_allowed(loaded, loaded) is None
    assert "grew by 5 bytes" in append_allowed(loaded + b"{...}", loaded)
    assert "kimi-code is writing" in append_allowed(loaded + b"x", loaded)
    assert "shrank" in append_allowed(loaded[:-10], loaded)
    changed = loaded.replace(b"first prompt", b"FIRST prompt")
    assert "earlier bytes changed" in append_allowed(changed, loaded)


def test_undo_allowed_only_when_the_file_ends_with_exactly_our_bytes():
    original = conversation().bytes()
    _, _, _, op = compact(original, up_to=5)
    ours = original + op.data
    n = len(original)
    assert undo_allowed(ours, op.data, n) is None
    assert "appended after our compaction" in undo_allowed(ours + b'{"type":"x"}\n', op.data, n)
    assert "shorter" in undo_allowed(ours[:-3], op.data, n)
    assert "no longer holds" in undo_allowed(ours[:-3] + b"XYZ", op.data, n)
    assert undo_allowed(ours, op.data, n - 1) is not None
    # truncating to the original length gives back the original history
    assert parse(ours[:n]).messages == parse(original).messages


async def test_the_tui_appends_our_records_and_undo_cuts_them_off(tmp_path):
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.providers import ProviderConfig
    from kimi_compact_tui.tui.app import ReviewApp
    from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
    from kimi_compact_tui.tui.state import ReviewState
    from tests.tui_support import settle

    folder = tmp_path / "sessions" / "wd_work_d7a539110fa4" / "session_1"
    wire = folder / "agents" / "main" / "wire.jsonl"
    wire.parent.mkdir(parents=True)
    original = conversation().bytes()
    wire.write_bytes(original)
    app = ReviewApp(
        ReviewState(config=AppConfig(), provider=ProviderConfig(kind="offline")), folder
    )

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.state.session.format.name == "kimi-code"
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("escape")
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmWriteScreen)
        await pilot.press("y")
        await settle(pilot)
        data = wire.read_bytes()
        assert data.startswith(original) and data != original
        types = [json.loads(x)["type"] for x in data[len(original) :].split(b"\n") if x]
        assert types[1] == "context.apply_compaction" and len(types) == 4
        assert parse(data).messages[0].text().startswith(build_compact_summary_text(""))
        await pilot.press("u")  # asks first, naming what happens
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert wire.read_bytes() == original


@pytest.mark.parametrize(
    ("value", "js"),
    [
        ({"b": 1, "2": [1.0, 2.5], "1": None, "a": "é"}, '{"1":null,"2":[1,2.5],"b":1,"a":"é"}'),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (123456789012345678901234567890, "1.2345678901234568e+29"),
        (-0.0, "0"),
        (True, "true"),
    ],
)
def test_js_stringify_matches_javascript(value, js):
    assert js_stringify(value) == js


def test_js_slice_start():
    assert [js_slice_start(n, 5) for n in (0, 2, 2.7, 9, -1, -9)] == [0, 2, 2, 5, 4, 0]

"""The records a compaction appends to a kimi-code journal, and the append
and undo checks. Journals come from tests/factories/kimi_code.py (``Journal``,
``conversation`` are re-exported here for the tests that import them from this
module); tests/agents/ checks the same against the real agent."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats.base import Current
from kimi_compact_tui.formats.jsvalue import js_slice_start, js_stringify
from kimi_compact_tui.formats.kimi_code.plugin import CLOSE_NOTE
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.formats.strategies import fingerprint_of
from tests.factories.kimi_code import FMT, Journal, conversation, parse, summary

NOW = 1796116006899
AT = datetime.fromtimestamp(NOW / 1000, UTC)


def compact(data: bytes, up_to: int | None = None, output_tokens: int | None = 7):
    session = parse(data)
    plan = make_plan(session.messages, up_to=up_to)
    compacted = FMT.compacted_session(session, plan, "OUR SUMMARY", output_tokens, now=AT)
    return session, plan, compacted, FMT.write_op(session, compacted)


def test_four_records_in_kimi_codes_shape():
    session, plan, compacted, op = compact(conversation().bytes(), up_to=5)
    assert FMT.storage.name == "append" and CLOSE_NOTE in compacted.format.write_notes
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


def test_default_tail_counts_tool_results_and_reminders_as_agent_context():
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
    compacted = FMT.compacted_session(session, plan, "half \ud83d pair é", None, now=AT)
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
    compacted = FMT.compacted_session(session, plan, "S", None, now=AT)
    op = FMT.write_op(session, compacted)
    assert all(json.loads(x)["agentId"] == "agent-0" for x in op.data.split(b"\n")[:-1])


def conflict(now: bytes, loaded: bytes) -> str:
    """The append strategy's refusal for a journal loaded as ``loaded``, now ``now``."""
    ref = SessionRef(Path("wire.jsonl"))
    return FMT.storage.conflict(ref, fingerprint_of(loaded), Current(now, fingerprint_of(now), 0))


def changed_since(now: bytes, appended: bytes, offset: int) -> str:
    """The append strategy's undo refusal for our records at ``offset``."""
    digest = fingerprint_of(appended).sha256
    record = {"time": "T", "appended": {"offset": offset, "size": len(appended), "sha256": digest}}
    return FMT.storage.changed_since(record, Current(now, fingerprint_of(now), 0))


def test_the_append_strategy_says_how_a_journal_changed_since_it_was_loaded():
    loaded = conversation().bytes()
    assert "grew by 5 bytes" in conflict(loaded + b"{...}", loaded)
    assert "kimi-code is writing" in conflict(loaded + b"x", loaded)
    assert "shrank" in conflict(loaded[:-10], loaded)
    changed = loaded.replace(b"first prompt", b"FIRST prompt")
    assert "earlier bytes changed" in conflict(changed, loaded)


def test_the_append_strategy_says_why_our_records_cannot_be_cut_off():
    original = conversation().bytes()
    _, _, _, op = compact(original, up_to=5)
    ours = original + op.data
    n = len(original)
    grown = changed_since(ours + b'{"type":"x"}\n', op.data, n)
    assert "13 bytes were appended after our compaction records (kimi-code resumed" in grown
    assert "shorter" in changed_since(ours[:-3], op.data, n)
    assert "no longer holds" in changed_since(ours[:-3] + b"XYZ", op.data, n)
    assert "no longer holds" in changed_since(ours + b"x", op.data, n - 1)
    # truncating to the original length gives back the original history
    assert parse(ours[:n]).messages == parse(original).messages


async def test_the_tui_appends_our_records_and_undo_cuts_them_off(tmp_path, review_app):
    from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
    from tests import tui_support
    from tests.tui_support import settle

    folder = tmp_path / "sessions" / "wd_work_d7a539110fa4" / "session_1"
    wire = folder / "agents" / "main" / "wire.jsonl"
    wire.parent.mkdir(parents=True)
    original = conversation().bytes()
    wire.write_bytes(original)
    app = review_app(folder)

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.state.session.format.name == "kimi-code"
        await tui_support.compact(pilot, back=True)
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

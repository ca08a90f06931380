"""The kimi-code format: reading wire.jsonl as kimi-code 2.1 resumes it, on
journals shaped like kimi-code 2.1.0's (the builder is in
tests/formats/test_kimi_code_records.py); tests/agents/ checks the same against the
real agent."""

from __future__ import annotations

import json

import pytest

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import load_session, registry
from kimi_compact_tui.formats.kimi_code.convert import media_urls, parse_blobref
from kimi_compact_tui.formats.kimi_code.plugin import FORMAT
from kimi_compact_tui.formats.storage import SessionRef
from tests.factories.kimi_code import FMT, Journal, conversation, parse, summary


def test_fold_text_think_tool_calls_results_and_reminders():
    s = parse(conversation().bytes())
    assert summary(s) == [
        ("user", "first prompt"),
        ("user", "<system-reminder>\nAuto permission mode is active.\n</system-reminder>"),
        ("assistant", "running"),
        ("tool", "hello\n"),
        ("assistant", "done one"),
        ("user", "second prompt"),
        ("assistant", "answer two"),
    ]
    call = s.messages[2].data["tool_calls"][0]
    # kimi-code stores JSON.stringify(args): compact
    assert call == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "Bash", "arguments": '{"command":"echo hello"}'},
    }
    assert s.messages[3].tool_call_id == "call_1"
    assert s.messages[4].has_think() and s.messages[4].parts()[0]["think"] == "thinking a"
    assert s.messages[1].data["kimi_code"]["origin"]["kind"] == "injection"
    assert s.meta.system_prompt == "SYSTEM"
    assert s.meta.recorded_tokens == 2396
    assert s.warnings == [] and s.format_state.open_turn is None


def test_dump_of_a_loaded_session_is_the_bytes_read():
    data = conversation().bytes()
    assert FMT.dump(parse(data)) == data


def test_registry_detects_and_resolves_a_session_folder(tmp_path):
    folder = tmp_path / "sessions" / "wd_x_0123456789ab" / "session_1"
    wire = folder / "agents" / "main" / "wire.jsonl"
    wire.parent.mkdir(parents=True)
    wire.write_bytes(conversation().bytes())
    s = load_session(folder)
    assert s.format.name == "kimi-code" and s.path == wire and len(s.messages) == 7
    assert registry.detect(tmp_path / "x.jsonl", wire.read_bytes()[:100]).name == "kimi-code"
    spaced = b'{"type": "metadata", "created_at": 1, "protocol_version": "1.5"}\n'
    assert FMT.recognise(tmp_path / "x.jsonl", spaced)
    assert not FMT.recognise(
        tmp_path / "wire.jsonl", b'{"type": "metadata", "protocol_version": "1"}'
    )
    # a kimi-cli session folder's wire.jsonl is not taken for a kimi-code journal
    cli = tmp_path / "cli"
    cli.mkdir()
    (cli / "wire.jsonl").write_text('{"timestamp": 1, "message": {"type": "TurnBegin"}}\n')
    assert FMT.resolve_folder(cli) is None


def test_messages_appended_while_a_call_is_pending_wait_for_its_result():
    j = Journal()
    j.prompt("go")
    step = j.begin()
    j.call(step, "c1", "sleep 1")
    j.reminder("late reminder")  # arrives before the result
    j.result("c1", "done")
    j.end(step, "tool_use")
    assert [m.role for m in parse(j.bytes()).messages] == ["user", "assistant", "tool", "user"]


def test_an_interrupted_call_gets_an_error_result_at_the_next_step():
    j = Journal()
    j.prompt("go")
    step = j.begin()
    j.call(step, "c1", "sleep 30")
    j.end(step, "interrupted")  # leaves the step open
    j.prompt("next")  # waits: c1 is still pending
    j.answer("ok")
    s = parse(j.bytes())
    assert [(m.role, m.tool_call_id) for m in s.messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", "c1"),
        ("user", None),
        ("assistant", None),
    ]
    assert s.messages[2].data["kimi_code"]["isError"] is True
    assert s.messages[2].data["kimi_code"]["synthetic"] == "interrupted"
    assert s.format_state.open_turn is None and FORMAT.write_refusal(s) is None


def test_a_journal_ending_mid_turn_is_shown_settled_and_refused_for_writing():
    j = Journal()
    j.prompt("go")
    step = j.begin()
    j.call(step, "c1", "sleep 30")
    s = parse(j.bytes())
    assert [m.role for m in s.messages] == ["user", "assistant", "tool"]
    assert "no result" in s.format_state.open_turn
    assert "mid-turn" in FORMAT.write_refusal(s)
    # an interrupted step end leaves the step open: later parts of it still count
    j2 = Journal()
    j2.prompt("go")
    step = j2.begin()
    j2.part(step, {"type": "text", "text": "half"})
    j2.end(step, "interrupted")
    assert "not finished" in parse(j2.bytes()).format_state.open_turn
    j2.part(step, {"type": "text", "text": " more"})
    assert summary(parse(j2.bytes()))[-1] == ("assistant", "half more")
    j2.end(step, "end_turn")
    j2.part(step, {"type": "text", "text": " ignored"})
    s2 = parse(j2.bytes())
    assert summary(s2)[-1] == ("assistant", "half more") and s2.format_state.open_turn is None


def test_a_blank_assistant_step_is_dropped_and_a_stale_partial_kept():
    j = Journal()
    j.prompt("go")
    step = j.begin()
    j.part(step, {"type": "text", "text": "  \n"})
    j.end(step)
    j.answer("real")
    assert summary(parse(j.bytes())) == [("user", "go"), ("assistant", "real")]
    # parts of a step that is not the open one are ignored
    j2 = Journal()
    j2.prompt("go")
    s1 = j2.begin()
    j2.part("other-step", {"type": "text", "text": "ignored"})
    j2.part(s1, {"type": "text", "text": "kept"})
    j2.end(s1)
    assert summary(parse(j2.bytes())) == [("user", "go"), ("assistant", "kept")]


def test_clear_and_unpaired_undo():
    j = conversation()
    j.add("context.undo", count=1)  # removes "second prompt" and what followed
    assert summary(parse(j.bytes()))[-1] == ("assistant", "done one")
    j.add("context.undo", count=5)  # more turns than there are: kimi-code changes nothing
    assert len(parse(j.bytes()).messages) == 5
    j.add("context.clear")
    j.prompt("fresh")
    assert summary(parse(j.bytes())) == [("user", "fresh")]
    # undo also removes the reminders injected for the prompt it takes back
    j.answer("fine")
    j.prompt("again", owned="owned by 'again'")
    j.answer("sure")
    assert len(parse(j.bytes()).messages) == 5
    j.add("context.undo", count=1)
    assert summary(parse(j.bytes())) == [("user", "fresh"), ("assistant", "fine")]


def test_undo_by_branch_switch_as_kimi_code_writes_it():
    j = conversation()
    second = next(
        r for r in j.records if r.get("promptId") and r["input"][0]["text"] == "second prompt"
    )
    j.reminder("owned by the undone prompt", owner=second["promptId"])
    j.reminder("a mode change, owned by no prompt")
    lines_before = len(j.records)  # record line of the last record
    # kimi-code's undo of one turn: the fork is the line before "second prompt"'s message
    fork = next(
        i
        for i, r in enumerate(j.records, 1)
        if r["type"] == "context.append_message"
        and r["message"]["content"][0]["text"] == "second prompt"
    )
    j.add(
        "agent.switched",
        branch="b1",
        reason="undo",
        base={"branch": "main", "line": fork - 1},
        turns=1,
        legacyUndoLine=lines_before + 2,
    )
    j.add("context.undo", count=1)
    j.add("context.undone", turns=1, fromTurnId=1)
    s = parse(j.bytes())
    # the undone turn is gone; an injection of the abandoned branch is kept when no
    # prompt owns it, dropped when the undone prompt owned it
    assert summary(s)[-2:] == [
        ("assistant", "done one"),
        ("user", "<system-reminder>\na mode change, owned by no prompt\n</system-reminder>"),
    ]
    assert len(s.messages) == 6
    j.prompt("instead")
    j.answer("new answer")
    assert summary(parse(j.bytes()))[-2:] == [("user", "instead"), ("assistant", "new answer")]


def test_earlier_compaction_legacy_tail_form():
    j = conversation()
    j.add("full_compaction.begin", source="manual")
    j.add(
        "context.apply_compaction",
        summary="S",
        contextSummary="CTX",
        compactedCount=5,
        tokensBefore=100,
        tokensAfter=20,
        legacyTail=True,
    )
    j.add("token_counting.rebased", length=3, tokens=20, measured=False)
    j.add("full_compaction.complete")
    s = parse(j.bytes())
    assert summary(s) == [("user", "CTX"), ("user", "second prompt"), ("assistant", "answer two")]
    assert s.messages[0].data["kimi_code"]["origin"] == {"kind": "compaction_summary"}


def test_earlier_compaction_kept_user_form_reselects_user_messages():
    j = conversation()
    j.add(
        "context.apply_compaction",
        summary="S",
        contextSummary="CTX",
        compactedCount=7,
        tokensBefore=100,
        tokensAfter=20,
        summaryOutputTokens=5,
        keptUserMessageCount=2,
    )
    s = parse(j.bytes())
    # real user messages (not reminders), then the summary, then kimi-code's continuation note
    assert [m.text() for m in s.messages[:3]] == ["first prompt", "second prompt", "CTX"]
    assert len(s.messages) == 4 and s.messages[3].data["kimi_code"]["synthetic"]


def test_kept_user_form_elides_the_middle_of_long_user_input():
    j = Journal()
    for i in range(30):
        j.prompt(f"{i:02d} " + "x" * 4000)  # 1,000+ tokens each: more than 20,000 in all
        j.answer("ok")
    j.add("context.apply_compaction", summary="S", compactedCount=60, keptUserMessageCount=3)
    msgs = parse(j.bytes()).messages
    texts = [m.text() for m in msgs]
    assert texts[0].startswith("00 ") and texts[-2] == "S"
    notes = [m for m in msgs if (m.data.get("kimi_code") or {}).get("synthetic")]
    assert len(notes) == 2  # the elision note and the continuation note
    assert sum(len(t) for t in texts) < 30 * 4003


def test_unknown_and_malformed_records_are_skipped_with_a_warning_naming_the_line():
    j = conversation()
    j.records.insert(4, {"type": "context.append_message", "agentId": "main", "message": 7})
    j.records.insert(5, [1, 2])
    j.records.insert(6, {"type": "context.undo", "agentId": "main", "count": -1})
    j.records.insert(
        7,
        {
            "type": "context.append_message",
            "agentId": "agent-0",
            "message": {"role": "user", "content": []},
        },
    )
    s = parse(j.bytes())
    assert len(s.messages) == 7
    warnings = "\n".join(s.warnings)
    for line in (5, 6, 7, 8):
        assert f"wire.jsonl:{line}:" in warnings


def test_a_bad_line_in_the_middle_is_one_error_naming_file_and_line():
    data = conversation().bytes().split(b"\n")
    data[6] = data[6][:-5]
    with pytest.raises(SessionFormatError) as err:
        parse(b"\n".join(data))
    assert str(err.value).startswith("/s/agents/main/wire.jsonl:7: invalid JSON")
    assert "\n" not in str(err.value)
    # JSON.parse has no NaN: kimi-code cuts the journal there too
    data[6] = b'{"type":"usage.record","agentId":"main","usage":NaN,"time":1}'
    with pytest.raises(SessionFormatError, match="wire.jsonl:7: invalid JSON"):
        parse(b"\n".join(data))


def test_a_truncated_last_line_is_ignored_with_a_warning_and_blocks_writing():
    data = conversation().bytes()
    torn = data + b'{"type":"context.append_message","agentId":"main","mess'
    s = parse(torn)
    assert summary(s) == summary(parse(data))
    assert any("partial record" in w for w in s.warnings)
    assert "partial record" in FORMAT.write_refusal(s)
    assert FMT.dump(s) == torn
    # a whole last record without its newline is read (and appending starts a new line)
    s2 = parse(data.rstrip(b"\n"))
    assert s2.format_state.tail == "unterminated" and FORMAT.write_refusal(s2) is None


@pytest.mark.parametrize(
    ("first", "message"),
    [
        (b'{"type":"metadata","protocol_version":"1.4","created_at":1}', "wire protocol 1.4"),
        (b'{"type":"metadata","protocol_version":"2.0","created_at":1}', "wire protocol 2.0"),
        (b'{"type":"metadata","protocol_version":"1.5"}', "malformed metadata"),
        (b'{"type":"turn.prompt","agentId":"main"}', "no metadata record first"),
    ],
)
def test_journals_of_other_protocols_are_refused(first, message):
    data = conversation().bytes().split(b"\n", 1)[1]
    with pytest.raises(SessionFormatError, match=message):
        parse(first + b"\n" + data)


def test_media_keeps_the_blob_reference_and_resolves_it_for_display():
    ref = "blobref:image/png;985f63e58841ab888f7526d26a2831b0fe4e34127934b648533cf025e45b64d8"
    j = Journal()
    j.prompt(
        "look",
        content=[{"type": "image_url", "imageUrl": {"url": ref}}, {"type": "text", "text": "look"}],
    )
    j.answer("a picture")
    s = parse(j.bytes())
    user = s.messages[0]
    assert user.media_types() == ["image_url"] and user.text() == "look"
    assert media_urls(user) == [ref]
    assert parse_blobref(ref) == ("image/png", ref.rsplit(";", 1)[1])
    assert parse_blobref("data:image/png;base64,xx") is None


def test_discover_lists_sessions_from_the_index_and_state_json(tmp_path):
    root = tmp_path / "kch"
    keep = root / "sessions" / "wd_work_d7a539110fa4" / "session_a"
    gone = root / "sessions" / "wd_work_d7a539110fa4" / "session_b"
    stray = root / "sessions" / "wd_other_000000000000" / "session_c"
    for folder, state in (
        (keep, {"cwd": "/w", "updatedAt": 1796115608034, "archived": False}),
        (gone, {"cwd": "/w", "updatedAt": 1}),
        (stray, {"cwd": "/o", "title": "Named", "updatedAt": 2000, "archived": False}),
    ):
        (folder / "agents" / "main").mkdir(parents=True)
        (folder / "agents" / "main" / "wire.jsonl").write_bytes(conversation().bytes())
        (folder / "state.json").write_text(json.dumps({"id": folder.name, **state}))
    index = [
        {"sessionId": "session_gone", "sessionDir": str(root / "nowhere"), "workDir": "/w"},
        {"sessionId": "session_a", "sessionDir": str(keep), "workDir": "/w"},
        {"sessionId": "session_b", "sessionDir": str(gone), "workDir": "/w"},
        {"sessionId": "session_b", "deleted": True},
    ]
    (root / "session_index.jsonl").write_text("".join(json.dumps(x) + "\n" for x in index))
    infos = FMT.discover({"KIMI_CODE_HOME": str(root)}, tmp_path / "home")
    assert [(i.session_id, i.title, i.work_dir, i.message_count) for i in infos] == [
        ("session_a", "first prompt", "/w", 7),
        ("session_c", "Named", "/o", 7),
    ]
    assert infos[0].updated == pytest.approx(1796115608.034) and infos[0].path == keep
    assert FMT.find_session("session_a", {"KIMI_CODE_HOME": str(root)}, tmp_path) == SessionRef(
        keep
    )
    assert FMT.find_session("session_b", {"KIMI_CODE_HOME": str(root)}, tmp_path) is None
    # without KIMI_CODE_HOME the root is ~/.kimi-code
    assert FMT.discover({}, tmp_path / "nobody") == []


def test_discover_reports_a_session_it_cannot_read(tmp_path):
    folder = tmp_path / ".kimi-code" / "sessions" / "wd_x_000000000000" / "session_x"
    (folder / "agents" / "main").mkdir(parents=True)
    (folder / "state.json").write_text("{}")
    (folder / "agents" / "main" / "wire.jsonl").write_bytes(b'{"type":"metadata"}\n{bad\n{}\n')
    (info,) = FMT.discover({}, tmp_path)
    assert info.error and "wire.jsonl:" in info.error

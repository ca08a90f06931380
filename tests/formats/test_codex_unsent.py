"""Codex prompts the rollout holds only as UI events (issue 32 item 8).

Codex Desktop writes a person's prompts as ``event_msg`` records only
(``user_message``), with no ``response_item`` of role user. Codex rebuilds the
model's history from response items alone, so on resume it never sends them
(checked against the real Codex in tests/agents/test_codex_unsent.py). They are
read as user requests marked "seen by the user, not sent to the model": in the
messages, the plan, the picker's title, retention and the offline summary; never
sent, never written back.
"""

from __future__ import annotations

import json
from pathlib import Path

from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.formats.codex.history import as_sent
from kimi_compact_tui.retention import retention_report
from kimi_compact_tui.specifics import extract, kinds
from tests.factories.cli import run_cli
from tests.factories.codex import FMT, Rollout, codex_state, parse, text_item

FIX = "Please fix the parser bug in ledger/parse.py"
RULE = "Never touch the vendored folder"
TEST = "Now add a test for it"
UNSENT_STATUS = "seen by the user, not sent to the model"  # how they are marked


def desktop() -> Rollout:
    """Three turns whose prompts are UI events only, as Codex Desktop writes them."""
    return (
        Rollout()
        .turn(FIX, sent=False, reply="Fixed the parser.")
        .turn(RULE, sent=False, reply="Noted.")
        .turn(TEST, sent=False, call=("pytest -q", "1 passed\n"), reply="Added the test.")
    )


def unsent(message) -> bool:
    meta = message.data.get("codex")
    return isinstance(meta, dict) and meta.get("unsent") is True


def test_prompts_only_a_ui_event_holds_are_user_messages_marked_unsent():
    session = parse(desktop().bytes())
    users = [m for m in session.messages if m.role == "user"]
    assert [m.text() for m in users] == [FIX, RULE, TEST]
    assert all(unsent(m) for m in users)
    # each in its place: before the reply it got
    roles = [m.role for m in session.messages]
    assert roles[:4] == ["user", "assistant", "user", "assistant"]
    # what Codex sends on resume holds none of them
    state = codex_state(session)
    sent = [h.item for _, h in as_sent(state.history)]
    assert not any(i.get("role") == "user" and FIX in json.dumps(i) for i in sent)
    assert FMT.bookkeeping(users[0]) == "unsent"


def test_the_echo_of_a_sent_prompt_is_not_a_second_message():
    r = (
        Rollout()
        .turn("continue", ui="user_message", reply="Done one.")
        .turn("continue", ui="item_completed", reply="Done two.")
        .turn(FIX, sent=False, reply="Fixed.")
        .turn("continue", ui="user_message", reply="Done three.")
    )
    session = parse(r.bytes())
    users = [(m.text(), unsent(m)) for m in session.messages if m.role == "user"]
    assert users == [("continue", False), ("continue", False), (FIX, True), ("continue", False)]


def test_a_codex_writing_both_ui_events_of_one_prompt_shows_it_once():
    r = Rollout().ui_prompt(FIX).ui_prompt(FIX, "item_completed")  # nothing between them
    r.item(text_item("assistant", "Fixed."))
    users = [m for m in parse(r.bytes()).messages if m.role == "user"]
    assert [m.text() for m in users] == [FIX]


def test_the_picker_title_says_the_first_prompt_was_not_sent(tmp_path: Path):
    path = desktop().write(tmp_path)
    info = FMT.describe(path)
    assert info.title is not None and info.title.startswith("(not sent) ")
    assert FIX in info.title
    assert info.message_count == len(parse(desktop().bytes()).messages)


def test_retention_counts_them_as_requests_seen_not_sent_instead_of_0_of_0():
    session = parse(desktop().bytes())
    plan = make_plan(session.messages, up_to=4)
    specifics = extract(session.messages, plan.compact_indices, FMT.vocabulary())
    requests = specifics.of(kinds.USER_REQUESTS)
    assert [i.text for i in requests] == [FIX, RULE]
    assert {i.status for i in requests} == {UNSENT_STATUS}
    report = retention_report(session, plan, f"The user asked: {FIX}")
    users = report.categories[kinds.USER_REQUESTS]
    assert (users.kept_count, users.total, users.unsent) == (1, 2, 2)
    text = report.to_text()
    assert "(2 seen by the user, not sent to the model)" in text
    assert f"{RULE} [{UNSENT_STATUS}]" in text
    assert report.to_json()["categories"][kinds.USER_REQUESTS]["unsent"] == 2


def test_plan_retention_and_the_offline_summary_mark_them(tmp_path: Path):
    path = desktop().write(tmp_path / "codex")
    env = {"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "codex")}
    plan = run_cli("plan", str(path), cwd=tmp_path, env=env)
    assert plan.returncode == 0, plan.stderr
    lines = [x for x in plan.stdout.split("\n") if FIX[:30] in x]
    assert len(lines) == 1 and "not sent" in lines[0]
    summary = tmp_path / "summary.txt"
    summary.write_text(f"The user asked: {FIX}\n", encoding="utf-8")
    ret = run_cli("retention", str(path), "--summary", str(summary), cwd=tmp_path, env=env)
    assert ret.returncode == 0, ret.stderr
    assert "seen by the user, not sent to the model" in ret.stdout
    assert "nothing is compacted" not in ret.stdout
    out = tmp_path / "compacted.jsonl"
    compact = run_cli("compact", str(path), "--output", str(out), cwd=tmp_path, env=env)
    assert compact.returncode == 0, compact.stderr
    assert f"(message 1; {UNSENT_STATUS}): {FIX}" in compact.stdout
    assert "No user request appears" not in compact.stdout


def test_a_compaction_never_writes_an_unsent_prompt():
    # the last prompt (unsent) lies in the kept tail
    session = parse(desktop().bytes())
    plan = make_plan(session.messages, up_to=2)
    kept = [m for i, m in enumerate(session.messages) if i >= 2]
    assert any(unsent(m) for m in kept)
    compacted = FMT.compacted_session(session, plan, "SUMMARY", None)
    record = json.loads(codex_state(compacted).appended)
    written = json.dumps(record["payload"]["replacement_history"])
    assert RULE not in written and TEST not in written  # never sent, so never written
    assert "Added the test." in written
    # what the written rollout reads as is the compacted session
    data = codex_state(session).data + codex_state(compacted).appended
    reread = parse(data)
    assert [m.data for m in reread.messages] == [m.data for m in compacted.messages]


def test_the_echo_of_a_prompt_with_an_image_is_not_a_second_message():
    # Codex 0.171 wraps an image in text parts of its own; its UI event has the prompt only
    prompt = {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": '<image name=[Image #1] path="/work/pic.png">'},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
            {"type": "input_text", "text": "</image>"},
            {"type": "input_text", "text": "What is in this picture?"},
        ],
    }
    r = Rollout().item(prompt)
    item = {"type": "UserMessage", "id": "u1"}
    item["content"] = [
        {"type": "local_image", "path": "/work/pic.png"},
        {"type": "text", "text": "What is in this picture?", "text_elements": []},
    ]
    r.event("item_completed", item=item).item(text_item("assistant", "A gradient."))
    users = [m for m in parse(r.bytes()).messages if m.role == "user"]
    assert len(users) == 1 and not unsent(users[0])


def test_odd_ui_events_are_read_as_codex_reads_them_or_left_out():
    r = Rollout()
    r.event("user_message", message=7, images=5)  # nothing Codex could show
    older = {"type": "user_message", "message": "context", "kind": "environment_context"}
    r.add("event_msg", older)  # older Codex's own context, marked as such
    r.event("item_completed", item={"type": "UserMessage", "content": 3})
    r.event("item_completed", item="UserMessage")
    r.event("user_message", message="<environment_context>\n</environment_context>")
    r.event("user_message", message="look", images={"data:image/png;base64,AAAA": 1})
    r.item(text_item("assistant", "Looked."))
    session = parse(r.bytes())
    users = [m for m in session.messages if m.role == "user"]
    assert [m.text() for m in users] == ["look"] and unsent(users[0])
    assert users[0].media_types() == []  # images that are not a list are not images
    assert session.warnings == []

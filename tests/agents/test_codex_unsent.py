"""What Codex CLI 0.171.0 sends for prompts its rollout holds only as UI events.

Codex Desktop writes a person's prompts as ``event_msg`` records only
(``user_message``), with no ``response_item`` of role user. Here a session the real
Codex wrote (4 turns, 2 real shell calls) is made so: each prompt's response item is
replaced by a ``user_message`` event at its place (Codex 0.171's own ``item_completed``
event of the prompt stays beside it), Codex's UI projection is dropped (it rebuilds it
from the rollout) and Codex resumes it with ``codex exec resume ID PROMPT``.

Found: the request holds the replies, the tool calls and their outputs, but none of the
prompts. Our reading shows each prompt in its place marked "unsent", and the messages
it does not mark are exactly the history Codex sends. After our (offline) compaction
Codex resumes the summary (naming the compacted prompts as not sent) and the kept items
it sent before; the kept prompts are not written.
"""

from __future__ import annotations

import json

import pytest

from kimi_compact_tui.formats.codex import FORMAT as FMT
from kimi_compact_tui.formats.codex.history import as_sent, is_user_turn
from tests.agents.codex_runner import CONVERSATION, Codex, codex_installed, shared_codex_template
from tests.agents.fake_responses import FakeResponses
from tests.agents.harness import require_agent, run_ours
from tests.agents.test_codex_resume import RESUME_PROMPT, _text, ours, sent_messages, split_request
from tests.factories.codex import codex_state

pytestmark = pytest.mark.agents

PROMPTS = [prompt for prompt, _ in CONVERSATION]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    require_agent(codex_installed(), "Codex")
    return shared_codex_template(tmp_path_factory)


def desktop_shaped(codex: Codex, sid: str) -> None:
    """Rewrite the rollout as Codex Desktop writes it: each real prompt only as a
    ``user_message`` event, in the place (and with the ordinal) of its response item."""
    path = codex.rollout_file(sid)
    lines = []
    for raw in path.read_bytes().split(b"\n"):
        if not raw:
            continue
        record = json.loads(raw)
        if record["type"] == "response_item" and is_user_turn(record["payload"]):
            text = _text(record["payload"])
            payload = {"type": "user_message", "message": text, "images": []}
            payload.update(local_images=[], text_elements=[])
            record = {k: v for k, v in record.items() if k != "payload"}
            record.update(type="event_msg", payload=payload)
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    for db in codex.state.glob("thread_history_1.sqlite*"):
        db.unlink()  # its offsets are of the old bytes: Codex rebuilds it from the rollout


def test_codex_never_sends_prompts_only_its_ui_events_hold(template):
    runner, sid = template
    with FakeResponses(lifetime=300) as responses:
        codex = runner.clone(responses)
        desktop_shaped(codex, sid)
        path = codex.rollout_file(sid)
        session = FMT.parse(path.read_bytes(), path)
        body = codex.resume(sid, RESUME_PROMPT)
    marked = [m for m in session.messages if (m.data.get("codex") or {}).get("unsent")]
    assert [m.text() for m in marked] == PROMPTS  # each once, in order, marked
    assert all(m.role == "user" for m in marked)
    # Codex sends none of them ...
    sent_texts = [_text(i) for i in body["input"] if i.get("type") == "message"]
    assert not any(p in t for p in PROMPTS for t in sent_texts)
    # ... and what our reading sends (every item but the marked prompts) is exactly
    # the history it sends
    state = codex_state(session)
    _, history, new_turn = split_request(body)
    ours_sent = [h.item for _, h in as_sent(state.history)]
    assert sent_messages(ours_sent) == sent_messages(history)
    assert [role for role, *_ in sent_messages(history)].count("user") == 0
    # every message we do not mark is sent: the replies, the calls and their outputs
    rest, theirs = ours([m for m in session.messages if m not in marked]), sent_messages(history)
    assert [m for m in rest if m[0] == "tool"] == [m for m in theirs if m[0] == "tool"]
    assert len([m for m in rest if m[0] == "tool"]) == 2
    replies = ["".join(m[1] for m in ms if m[0] == "assistant") for ms in (rest, theirs)]
    assert replies[0] == replies[1] and "It printed world." in replies[0]
    assert [_text(i) for i in new_turn if i.get("type") == "message"][-1] == RESUME_PROMPT


def test_codex_resumes_our_compaction_of_such_a_rollout(template):
    """Compacted offline up to the third prompt: the summary names the first two
    prompts as not sent; the kept prompts (never sent) are not written, so Codex
    resumes the summary, then the kept replies and tool outputs, as before."""
    runner, sid = template
    with FakeResponses(lifetime=300) as responses:
        codex = runner.clone(responses)
        desktop_shaped(codex, sid)
        path = codex.rollout_file(sid)
        data = path.read_bytes()
        session = FMT.parse(data, path)
        third = next(i for i, m in enumerate(session.messages) if m.text() == PROMPTS[2])
        status, out, err = run_ours(
            ["compact", str(path), "--in-place", "--yes", "--up-to", str(third)], codex.root
        )
        assert status == 0, err[-2000:]
        after = path.read_bytes()
        assert after.startswith(data)  # appended: the prompts' events stay as they were
        reread = FMT.parse(after, path)
        body = codex.resume(sid, RESUME_PROMPT)
    _, history, _ = split_request(body)
    summary = _text(history[0])
    for prompt in PROMPTS[:2]:
        assert f"seen by the user, not sent to the model): {prompt}" in summary
    assert ours(reread.messages) == sent_messages(history)
    # the kept items are the ones Codex sent before, exactly as read
    state = codex_state(session)
    kept = [h.item for h in state.history[state.starts[third] :] if not h.unsent]
    assert [h.item for h in codex_state(reread).history[1:]] == kept
    assert len(kept) == 4  # echo world, its output, its reply, the last reply
    sent = json.dumps(history[1:], ensure_ascii=False)
    assert not any(p in sent for p in PROMPTS)

"""Injected context and the preserved tail.

kimi-code puts context it injects (the date reminder, the permission-mode reminder) into
the history as user messages (``origin.kind: "injection"``). Counted like prompts, the
default tail can be ``[reminder, answer]``: the user's own prompt is compacted away from
the answer that follows it. For a format that marks injected context
(``SessionFormat.injected``), the plan counts only real prompts and assistant messages,
and the boundary never lands between a prompt and its reminders. Formats that mark none
(kimi-cli) keep kimi-cli's counting exactly. An explicit boundary stays exact.
"""

from __future__ import annotations

import itertools

import pytest

from kimi_compact_tui.compaction.pairs import nearest_safe_up_to, splits_at
from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import registry
from kimi_compact_tui.job import CompactionJob, prepare_compaction
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers import StreamResult
from tests.factories.kimi_code import Journal, conversation, parse


def _injected(message: Message) -> bool:
    return message.data.get("injected") is True


def _seq(kinds: str) -> list[Message]:
    """P: a prompt, I: an injected reminder, A: an assistant message, T: a tool result."""
    out = []
    for i, k in enumerate(kinds):
        if k == "P":
            out.append(Message.make("user", f"prompt {i}"))
        elif k == "I":
            out.append(Message({"role": "user", "content": f"reminder {i}", "injected": True}))
        elif k == "A":
            out.append(Message.make("assistant", f"answer {i}"))
        else:
            out.append(Message({"role": "tool", "content": "ok", "tool_call_id": f"c{i}"}))
    return out


def _boundary(kinds: str, keep: int = 2, injected=_injected) -> int | None:
    plan = make_plan(_seq(kinds), max_preserved_messages=keep, injected=injected)
    return None if plan.noop else plan.boundary


def test_the_tail_counts_real_prompts_and_answers_not_injected_reminders():
    # kimi-cli's counting (no predicate): the tail is [reminder, answer]
    assert _boundary("PAPIA", injected=None) == 3
    # with the format's predicate: the prompt is kept with its reminder and answer
    assert _boundary("PAPIA") == 2
    assert _boundary("PAPIIA") == 2
    assert _boundary("PAPIIA", keep=3) == 1
    # tool results are not counted either way; the turn's steps stay together
    assert _boundary("PAPIATA") == 4 == _boundary("PAPIATA", injected=None)


def test_a_reminder_right_before_its_prompt_is_kept_with_it():
    # kimi-code can inject a reminder owned by the prompt that follows it
    assert _boundary("PAIPA") == 2
    assert _boundary("PAIIPIA") == 2
    assert _boundary("PAIPA", injected=None) == 3


def test_a_turn_that_is_all_tail_is_a_no_op_not_a_prompt_cut_off():
    plan = make_plan(_seq("PIA"), injected=_injected)
    assert plan.noop and "nothing to compact before the preserved tail" in plan.noop
    # kimi-cli's counting compacts the prompt alone, away from its answer
    assert make_plan(_seq("PIA")).boundary == 1
    only = make_plan(_seq("IIA"), injected=_injected)
    assert only.noop and only.noop.startswith("only 1 user/assistant message (not counting 2 ")


def test_an_explicit_boundary_is_exact_even_at_an_injected_message():
    # --up-to N compacts messages 1..N exactly (the spec's Decision 2)
    for up_to in (3, 4):
        plan = make_plan(_seq("PAPIA"), up_to=up_to, injected=_injected)
        assert plan.mode == "explicit" and plan.boundary == up_to


@pytest.mark.parametrize("keep", [1, 2, 3])
def test_every_default_tail_starts_a_turn_and_keeps_exactly_n_counted_messages(keep):
    for kinds in map("".join, itertools.product("PIAT", repeat=7)):
        messages = _seq(kinds)
        plan = make_plan(messages, max_preserved_messages=keep, injected=_injected)
        if plan.noop:
            continue
        b = plan.boundary
        kept = kinds[b:]
        assert sum(k in "PA" for k in kept) == keep, kinds
        # the kept range starts at a counted message, or at reminders right before a prompt
        head = kept.lstrip("I")
        assert head[:1] in ("P", "A"), kinds
        assert kept[0] != "I" or head[0] == "P", kinds
        # a kept prompt keeps the reminders right before it
        assert not (kept[0] == "P" and kinds[b - 1] == "I"), kinds


def _with_tools(kinds: str) -> list[Message]:
    """P, I, A as in ``_seq``; C: an assistant message calling a tool, R: a result of the
    latest call (an orphan result when there is none)."""
    out: list[Message] = []
    call = "orphan"
    for i, k in enumerate(kinds):
        if k == "C":
            call = f"c{i}"
            tool_call = {"id": call, "type": "function", "function": {"name": "f"}}
            out.append(Message({"role": "assistant", "content": "", "tool_calls": [tool_call]}))
        elif k == "R":
            out.append(Message({"role": "tool", "content": "ok", "tool_call_id": call}))
        else:
            out.extend(_seq(k))
    return out


def test_the_nearest_safe_boundary_never_separates_a_prompt_from_its_reminders():
    """The TUI's ``s`` and the refusal's hint (``nearest_safe_up_to``) move a boundary that
    splits a tool exchange to an end of the exchanges around it: a tool call, or the
    message right after a result. So it never lands between a prompt and the context
    injected with it (the predicate is not needed there); an explicit boundary itself
    is exact (above)."""
    moved = 0
    for kinds in map("".join, itertools.product("PIACR", repeat=6)):
        messages = _with_tools(kinds)
        for boundary in range(1, len(messages)):
            if not splits_at(messages, boundary):
                continue
            safe = nearest_safe_up_to(messages, boundary, 0)
            if safe is None or safe == len(messages):
                continue
            moved += 1
            assert not splits_at(messages, safe), (kinds, boundary)
            assert kinds[safe] == "C" or kinds[safe - 1] == "R", (kinds, boundary, safe)
            assert not (kinds[safe - 1] in "PI" and kinds[safe] in "PI"), (kinds, boundary)
    assert moved > 1000


def _thanks_journal() -> Journal:
    j = conversation()
    j.prompt("thanks")
    j.reminder("Auto permission mode is active.")
    j.answer("You're welcome.")
    return j


def _config() -> AppConfig:
    return AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})


def test_a_kimi_code_session_keeps_the_prompt_with_its_answer():
    session = parse(_thanks_journal().bytes())
    texts = [m.text() for m in session.messages]
    prompt = texts.index("thanks")
    assert session.format.bookkeeping(session.messages[prompt + 1]) == "reminder"
    plan = prepare_compaction(session, _config()).plan
    assert plan.boundary == prompt
    kept = [session.messages[i].text() for i in plan.preserved_indices]
    assert kept[0] == "thanks" and kept[-1] == "You're welcome."


def test_the_same_messages_as_a_kimi_cli_session_keep_kimi_clis_counting():
    session = parse(_thanks_journal().bytes())
    kimi = registry.get("kimi").from_messages(
        [Message({k: v for k, v in m.data.items() if k != "kimi_code"}) for m in session.messages]
    )
    assert not any(kimi.format.tail_bookkeeping(m) for m in kimi.messages)
    plan = prepare_compaction(kimi, _config()).plan
    texts = [m.text() for m in kimi.messages]
    assert plan.boundary == texts.index("thanks") + 1  # kimi-cli keeps [reminder, answer]


def test_the_kimi_code_write_compacts_up_to_the_prompt(tmp_path):
    wire = tmp_path / "s" / "agents" / "main" / "wire.jsonl"
    wire.parent.mkdir(parents=True)
    wire.write_bytes(_thanks_journal().bytes())
    job = CompactionJob.load(wire, _config())
    prep = job.prepare()
    draft = job.draft(prep, StreamResult(status="complete", summary="SUMMARY"))
    assert [m.text() for m in draft.compacted.messages[1:]] == [
        "thanks",
        "<system-reminder>\nAuto permission mode is active.\n</system-reminder>",
        "You're welcome.",
    ]

"""kimi-cli sessions with checkpoint messages (the D-Mail tool).

Files here are written line by line the way kimi-cli 1.51 writes them (special records
with ``json.dumps`` defaults, messages as compact JSON); tests/agents/test_kimi_cli_dmail.py
checks the same against kimi-cli itself (``--agent okabe`` and a real D-Mail).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.diff import diff_sessions
from kimi_compact_tui.formats import dump_session, load_session
from kimi_compact_tui.job import CompactionJob, build_compacted_session
from kimi_compact_tui.providers import StreamResult

SUMMARY = "SUMMARY — 摘要"
NOTICE = "<system>Previous context has been compacted. Here is the compaction output:</system>"


def special(role: str, **fields) -> str:
    return json.dumps({"role": role, **fields})


def message(role: str, content) -> str:
    return json.dumps({"role": role, "content": content}, ensure_ascii=False, separators=(",", ":"))


def checkpoint(n: int, with_message: bool = True) -> list[str]:
    lines = [special("_checkpoint", id=n)]
    if with_message:
        lines.append(message("user", f"<system>CHECKPOINT {n}</system>"))
    return lines


def dmail_lines(*, leading_system: int = 0) -> list[str]:
    """Two turns of a D-Mail session: a checkpoint at each turn and at each step."""
    lines = [special("_system_prompt", content="SYS")]
    lines += [message("system", f"rule {i}") for i in range(leading_system)]
    lines += checkpoint(0) + [message("user", "run echo hello")]
    lines += checkpoint(1) + [special("_usage", token_count=100), message("assistant", "hello")]
    lines += [special("_usage", token_count=110)]
    lines += checkpoint(2) + [message("user", "thanks")]
    lines += checkpoint(3) + [special("_usage", token_count=120), message("assistant", "welcome")]
    lines += [special("_usage", token_count=130)]
    return lines


def write(tmp_path: Path, lines: list[str], name: str = "context.jsonl") -> Path:
    folder = tmp_path / "session"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def compact(path: Path, up_to: int | None = None, output_tokens: int | None = 7):
    session = load_session(path)
    plan = make_plan(session.messages, up_to=up_to)
    return (
        session,
        plan,
        build_compacted_session(session, plan, SUMMARY, output_tokens=output_tokens),
    )


def test_a_d_mail_session_is_recognised_and_round_trips(tmp_path):
    path = write(tmp_path, dmail_lines())
    session = load_session(path)
    assert session.format_state.checkpoint_messages
    # the checkpoint messages are history: kimi-cli sends them and counts them
    assert [m.text() for m in session.messages][:2] == [
        "<system>CHECKPOINT 0</system>",
        "run echo hello",
    ]
    assert dump_session(session) == path.read_bytes()


def test_the_compacted_file_has_checkpoint_0_and_its_message_before_the_summary(tmp_path):
    session, plan, compacted = compact(write(tmp_path, dmail_lines()))
    # kimi-cli's own counting: the tail is [CHECKPOINT 3, welcome]
    assert [session.messages[i].text() for i in plan.preserved_indices] == [
        "<system>CHECKPOINT 3</system>",
        "welcome",
    ]
    lines = dump_session(compacted).decode("utf-8").splitlines()
    summary = {
        "role": "user",
        "content": [{"type": "text", "text": NOTICE}, {"type": "text", "text": SUMMARY}],
    }
    assert lines == [
        special("_system_prompt", content="SYS"),
        special("_checkpoint", id=0),
        message("user", "<system>CHECKPOINT 0</system>"),
        json.dumps(summary, ensure_ascii=False, separators=(",", ":")),
        message("user", "<system>CHECKPOINT 3</system>"),
        message("assistant", "welcome"),
        # kimi-cli's estimate: the output tokens plus the kept messages' characters // 4,
        # not the checkpoint message written before the summary
        special("_usage", token_count=7 + (len("<system>CHECKPOINT 3</system>") + 7) // 4),
    ]
    # the compacted session is what the agent resumes: written and read back, the same
    again = write(tmp_path, lines, "again.jsonl")
    reread = load_session(again)
    assert [m.data for m in reread.messages] == [m.data for m in compacted.messages]
    assert reread.format_state.checkpoint_messages


def test_without_output_tokens_the_estimate_counts_the_summary_not_the_checkpoint(tmp_path):
    _, _, compacted = compact(write(tmp_path, dmail_lines()), output_tokens=None)
    kept_chars = len("<system>CHECKPOINT 3</system>") + len("welcome")
    assert compacted.meta.recorded_tokens == (len(NOTICE) + len(SUMMARY) + kept_chars) // 4


def test_leading_system_messages_stay_leading_before_the_checkpoint(tmp_path):
    session, plan, compacted = compact(write(tmp_path, dmail_lines(leading_system=2)))
    assert plan.leading == 2
    lines = dump_session(compacted).decode("utf-8").splitlines()
    assert lines[:5] == [
        special("_system_prompt", content="SYS"),
        message("system", "rule 0"),
        message("system", "rule 1"),
        special("_checkpoint", id=0),
        message("user", "<system>CHECKPOINT 0</system>"),
    ]
    reread = load_session(write(tmp_path, lines, "again.jsonl"))
    assert reread.format_state.checkpoint_messages
    assert make_plan(reread.messages).leading == 2


def test_an_explicit_boundary_gets_the_same_layout(tmp_path):
    session, _, compacted = compact(write(tmp_path, dmail_lines()), up_to=3)
    lines = dump_session(compacted).decode("utf-8").splitlines()
    assert lines[1:3] == [
        special("_checkpoint", id=0),
        message("user", "<system>CHECKPOINT 0</system>"),
    ]
    assert [m.data for m in compacted.messages[2:]] == [m.data for m in session.messages[3:]]


def _without(lines: list[str], drop: str) -> list[str]:
    out = list(lines)
    out.remove(drop)
    return out


@pytest.mark.parametrize(
    "change",
    ["no-checkpoint-messages", "one-missing", "wrong-number", "as-a-list", "last-one-open"],
)
def test_recognised_only_when_every_checkpoint_has_its_message(tmp_path, change):
    lines = dmail_lines()
    expected = False
    if change == "no-checkpoint-messages":
        lines = [x for x in lines if "CHECKPOINT" not in x]
    elif change == "one-missing":
        lines = _without(lines, message("user", "<system>CHECKPOINT 2</system>"))
    elif change == "wrong-number":
        at = lines.index(message("user", "<system>CHECKPOINT 2</system>"))
        lines[at] = message("user", "<system>CHECKPOINT 7</system>")
    elif change == "as-a-list":  # one text part written as a list: still kimi-cli's message
        at = lines.index(message("user", "<system>CHECKPOINT 2</system>"))
        lines[at] = message("user", [{"type": "text", "text": "<system>CHECKPOINT 2</system>"}])
        expected = True
    else:  # a checkpoint record with nothing after it yet does not count against
        lines = lines + checkpoint(4, with_message=False)
        expected = True
    session = load_session(write(tmp_path, lines))
    assert session.format_state.checkpoint_messages is expected
    _, _, compacted = compact(session.path)
    third = dump_session(compacted).decode("utf-8").splitlines()[2]
    assert ("CHECKPOINT 0" in third) is expected


def test_the_write_and_its_diff_show_the_checkpoint_message(tmp_path):
    path = write(tmp_path, dmail_lines())
    job = CompactionJob.load(path, AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}}))
    prep = job.prepare()
    draft = job.draft(
        prep, StreamResult(status="complete", summary=SUMMARY, usage={"completion_tokens": 7})
    )
    expected = dump_session(draft.compacted)  # before the write: kept lines are read back
    result = job.commit(draft, None)
    assert path.read_bytes() == expected
    assert (path.parent / "context_1.jsonl").read_text(
        encoding="utf-8"
    ).splitlines() == dmail_lines()
    assert result.messages_after == len(draft.compacted.messages) == 4
    rows = diff_sessions(job.session, load_session(path)).rows
    # CHECKPOINT 0 was there before and is again; the summary is the one message added
    assert [(r.kind, r.message.text()[:24]) for r in rows if r.kind != "removed"] == [
        ("kept", "<system>CHECKPOINT 0</sy"),
        ("added", NOTICE[:24]),
        ("kept", "<system>CHECKPOINT 3</sy"),
        ("kept", "welcome"),
    ]

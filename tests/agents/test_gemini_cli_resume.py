"""Gemini CLI 0.61.0 resumes what we write.

Every session here was written by the real Gemini CLI (4 turns, 2 real shell calls:
``echo hello`` and ``echo world``, replies with thoughts) against a fake Gemini API.
Our tool runs as a user runs it (``kimi-compact-tui compact FILE --in-place --yes
--provider openai ...`` against a fake OpenAI-compatible model, and
``kimi-compact-tui restore``). Gemini CLI is then resumed with ``gemini --resume ID
-p PROMPT`` and the request it sends is compared with our reading of the file
(:mod:`tests.agents.gemini_compare`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.formats.base import state_of
from kimi_compact_tui.formats.gemini_cli import FORMAT as FMT
from kimi_compact_tui.formats.gemini_cli.state import GeminiState
from kimi_compact_tui.model import Message
from tests.agents.fake_gemini import FakeGemini
from tests.agents.fake_model import FakeModel, Turn
from tests.agents.gemini_cli import GeminiCli, gemini_cli_installed, gemini_template
from tests.agents.gemini_compare import ours, sent, split_request
from tests.agents.harness import require_agent, run_ours

pytestmark = pytest.mark.agents

SUMMARY = "FAKE SUMMARY: the user ran echo hello and echo world and asked two questions."
GEMINI_SUMMARY = "FAKE-GEMINI-SNAPSHOT of the session"
RESUME_PROMPT = "Where were we?"
RESTORE = "kimi-compact-tui-restore-points"
GROWTH = b'{"$set":{"lastUpdated":"2030-01-01T00:00:00.000Z"}}\n'


class AppendingModel(FakeModel):
    """A fake OpenAI-compatible model that appends a record to ``target`` when asked
    for a compaction (as Gemini CLI would while our summary streams)."""

    target: Path | None = None

    def _next_turn(self, body: dict[str, Any]) -> tuple[str, Turn]:
        kind, turn = super()._next_turn(body)
        if kind == "compaction" and self.target is not None:
            with open(self.target, "ab") as fh:
                fh.write(GROWTH)
        return kind, turn


@pytest.fixture(scope="module")
def model():
    with AppendingModel(summary=SUMMARY, lifetime=900) as fm:
        yield fm


@pytest.fixture(scope="module")
def fake():
    with FakeGemini(summary=GEMINI_SUMMARY, lifetime=900) as fg:
        yield fg


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    require_agent(bool(gemini_cli_installed()), "Gemini CLI")
    return gemini_template(tmp_path_factory)


def _load(gemini: GeminiCli, sid: str):
    path = gemini.session_file(sid)
    return FMT.parse(path.read_bytes(), path)


def _before_prompt(session, prompt: str = RESUME_PROMPT) -> list[Message]:
    """Our messages of a file read after a resume, up to that resume's prompt."""
    messages = session.messages
    start = max(i for i, m in enumerate(messages) if m.role == "user" and m.text() == prompt)
    return messages[:start]


def _our_compact(gemini: GeminiCli, model: FakeModel, sid: str, *extra: str):
    return run_ours(
        ["compact", str(gemini.session_file(sid)), "--in-place", "--yes"]
        + ["--provider", "openai", "--base-url", model.base_url, "--model", model.model, *extra],
        gemini.root,
    )


def _names(folder: Path) -> set[str]:
    return set(os.listdir(folder))


@pytest.fixture(scope="module")
def original(template, tmp_path_factory, fake):
    """An untouched copy: our reading of it, its bytes (the copy's: its folder names are
    in them) and Gemini CLI's resume request."""
    runner, sid = template
    gemini = runner.clone(tmp_path_factory.mktemp("original") / "gemini", fake)
    session = _load(gemini, sid)
    data = gemini.session_file(sid).read_bytes()
    body = gemini.resume(sid, RESUME_PROMPT)
    return sid, session, data, body, _load(gemini, sid)


def test_our_messages_equal_the_history_gemini_sends_on_resume(original):
    _, session, _, body, after = original
    history, new_turn = split_request(body, RESUME_PROMPT)
    assert ours(session.messages) == sent(history)
    assert sent(new_turn) == [("user", (("text", RESUME_PROMPT),))]
    # real shell calls and their results (Gemini sends each result more than once)
    tools = [m for m in session.messages if m.role == "tool"]
    assert {m.text().split("Output: ")[1].split("\n")[0] for m in tools} == {"hello", "world"}
    assert any(p.get("type") == "think" for m in session.messages for p in m.parts())
    state = state_of(session, GeminiState)
    assert state.open_turn is None and session.warnings == [] and state.session_id
    # the resume rewrote the file (calls as parts, <id>_response records): read alike
    assert ours(_before_prompt(after)) == sent(history)


def _user_prompt_up_to(session) -> int:
    """An --up-to whose next message is a prompt of the user."""
    prompts = [i for i, m in enumerate(session.messages) if m.role == "user" and i > 2]
    return prompts[0]  # 1-based up_to == the 0-based index of the prompt


@pytest.mark.parametrize("cut", ["tail", "user-prompt"])
def test_gemini_resumes_our_write_as_summary_then_the_kept_messages(
    cut, template, original, tmp_path, fake, model
):
    runner, sid = template
    _, session, _, _, _ = original
    gemini = runner.clone(tmp_path / "gemini", fake)
    data = gemini.session_file(sid).read_bytes()  # each copy has its own folder names
    chats = gemini.chats()
    files = _names(chats)
    up_to = None if cut == "tail" else _user_prompt_up_to(session)
    status, _, err = _our_compact(
        gemini, model, sid, *([] if up_to is None else ["--up-to", str(up_to)])
    )
    assert status == 0, err[-2000:]
    assert _names(chats) == files  # restore points and the audit log live elsewhere
    assert any(n.startswith(gemini.session_file(sid).name) for n in _names(chats.parent / RESTORE))
    written = gemini.session_file(sid).read_bytes()
    assert written.startswith(data)  # appended: earlier bytes unchanged
    (record,) = [json.loads(x) for x in written[len(data) :].split(b"\n") if x]
    assert list(record["$set"]) == ["messages", "lastUpdated"]
    compacted = _load(gemini, sid)
    kept_count = len(compacted.messages) - 1
    kept = session.messages[len(session.messages) - kept_count :]
    assert compacted.messages[0].text() == build_compact_summary_text(SUMMARY)
    assert compacted.messages[1:] == kept
    if up_to is not None:
        assert kept[0].role == "user" and kept[0].text() == session.messages[up_to].text()
    after = gemini.resume(sid, RESUME_PROMPT)
    history, new_turn = split_request(after, RESUME_PROMPT)
    summary = Message.make("user", build_compact_summary_text(SUMMARY))
    assert sent(history) == ours([summary, *kept])
    assert sent(new_turn) == [("user", (("text", RESUME_PROMPT),))]
    dropped = session.messages[: len(session.messages) - kept_count]
    text = json.dumps(history, ensure_ascii=False)
    for m in dropped:
        for call in m.tool_calls:
            assert call["id"] not in text
        if m.role == "user" and m.text():
            assert m.text() not in text
    # and our reading of the file after that resume is what it sent
    assert ours(_before_prompt(_load(gemini, sid))) == sent(history)


def test_after_restore_gemini_resumes_the_original_history(
    template, original, tmp_path, fake, model
):
    runner, sid = template
    _, session, _, before, _ = original
    gemini = runner.clone(tmp_path / "gemini", fake)
    path = gemini.session_file(sid)
    data = path.read_bytes()
    files = _names(path.parent)
    status, _, err = _our_compact(gemini, model, sid, "--up-to", str(_user_prompt_up_to(session)))
    assert status == 0, err[-2000:]
    assert path.read_bytes() != data
    status, _, err = run_ours(["restore", str(path), "--yes"], gemini.root)
    assert status == 0, err[-2000:]
    assert path.read_bytes() == data and _names(path.parent) == files  # before any resume
    after = gemini.resume(sid, RESUME_PROMPT)
    assert sent(split_request(after, RESUME_PROMPT)[0]) == sent(
        split_request(before, RESUME_PROMPT)[0]
    )


def test_after_geminis_own_compression_we_read_what_it_resumes_then_ours(
    template, tmp_path, fake, model
):
    runner, sid = template
    gemini = runner.clone(tmp_path / "gemini", fake)
    start = len(fake.requests)
    gemini.compress(sid, "Please go on.")
    kinds = [r.kind for r in fake.requests[start:]]
    assert kinds.count("compression") == 2, kinds  # the snapshot and its check
    own = _load(gemini, sid)
    assert own.messages[0].role == "user" and GEMINI_SUMMARY in own.messages[0].text()
    body = gemini.resume(sid, RESUME_PROMPT)
    history = split_request(body, RESUME_PROMPT)[0]
    assert ours(own.messages) == sent(history)
    assert ours(_before_prompt(_load(gemini, sid))) == sent(history)
    # then ours on top of its compression
    status, _, err = _our_compact(gemini, model, sid)
    assert status == 0, err[-2000:]
    again = _load(gemini, sid)
    assert again.messages[0].text() == build_compact_summary_text(SUMMARY)
    prompt2 = "And now?"
    body2 = gemini.resume(sid, prompt2)
    assert sent(split_request(body2, prompt2)[0]) == ours(again.messages)


def test_a_file_appended_to_while_we_stream_is_refused(template, tmp_path, fake, model):
    runner, sid = template
    gemini = runner.clone(tmp_path / "gemini", fake)
    path = gemini.session_file(sid)
    data = path.read_bytes()
    model.target = path
    try:
        status, _, err = _our_compact(gemini, model, sid)
    finally:
        model.target = None
    assert status == 2
    (error,) = [line for line in err.splitlines() if line.startswith("kimi-compact-tui: error:")]
    assert str(path) in error
    assert path.read_bytes() == data + GROWTH
    assert not (path.parent.parent / RESTORE).exists() or not any(
        ".bak-" in n for n in _names(path.parent.parent / RESTORE)
    )


def test_geminis_clean_up_keeps_the_session_and_our_restore_points(template, tmp_path, fake, model):
    """Retention ON: Gemini CLI's start-up clean-up deletes every ``session-*.json[l]``
    file in ``chats/`` holding no conversation (a stray, as a resume in another minute
    leaves; the audit log would be one), with every file of its id but the running
    session's; our restore points and audit log are not in that folder. Once Gemini
    has resumed, undo refuses and says why."""
    runner, sid = template
    gemini = runner.clone(tmp_path / "gemini", fake)
    path = gemini.session_file(sid)
    status, _, err = _our_compact(gemini, model, sid)
    assert status == 0, err[-2000:]
    restore_points = _names(path.parent.parent / RESTORE)
    assert any(".bak-" in n for n in restore_points)
    assert any(n.endswith(".compact-audit.jsonl") for n in restore_points)
    # another session's stray file: a header and no conversation
    other = "0badc0de-0000-4000-8000-000000000000"
    header = json.loads(path.read_bytes().split(b"\n", 1)[0])
    stray = path.parent / f"session-2000-01-01T00-00-{other[:8]}.jsonl"
    stray.write_text(json.dumps(dict(header, sessionId=other)) + "\n", encoding="utf-8")
    gemini.resume(sid, RESUME_PROMPT, retention=True)
    assert not stray.exists()  # the clean-up ran
    assert path.is_file() and _names(path.parent.parent / RESTORE) == restore_points
    status, _, err = run_ours(["restore", str(path), "--yes"], gemini.root)
    assert status == 2 and "changed since" in err and str(path) in err

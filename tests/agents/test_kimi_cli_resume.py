"""kimi-cli 1.51.0 resumes what we write.

Every session here was written by the real kimi-cli (4 turns, 2 real shell tool calls:
``echo hello`` and ``echo world``), against the fake model. Our tool is run as a user
runs it: ``kimi-compact-tui compact SESSION --in-place --yes --provider openai
--base-url ... --model ...`` and ``kimi-compact-tui restore SESSION --yes``. Both
kimi-cli's own ``/compact`` and ours get the same summary from the fake model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agents.fake_model import FakeModel, message_text, text_turn, tool_turn
from tests.agents.harness import KimiCli, kimi_cli_compact_md, run_ours

pytestmark = pytest.mark.agents

SUMMARY = (
    "FAKE SUMMARY: the user ran echo hello and echo world and asked two questions "
    '(deux questions — 两个问题) ✓\n\n<current_focus>\n"quoted" \\ back\n</current_focus>'
)
RESUME_PROMPT = "Where were we?"
COMPACTED_PREFIX = (
    "<system>Previous context has been compacted. Here is the compaction output:</system>"
)


def _our_compact(cli: KimiCli, sid: str, *extra: str, env: dict | None = None):
    session = cli.session_dir(sid)
    code, out, err = run_ours(
        ["compact", str(session), "--in-place", "--yes", "--provider", "openai"]
        + ["--base-url", cli.fake.base_url, "--model", cli.fake.model, *extra],
        cli.root,
        env,
    )
    assert code == 0, f"our compact exited {code}: {err[-2000:]}"
    return out, err


def _summary_message() -> dict:
    """The summary message as kimi-cli sends it, built from the spec's two text parts."""
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": COMPACTED_PREFIX},
            {"type": "text", "text": SUMMARY},
        ],
    }


@pytest.fixture(scope="module")
def model():
    with FakeModel(summary=SUMMARY, lifetime=1800) as fm:
        yield fm


@pytest.fixture(scope="module")
def original(kimi_cli_session_template, tmp_path_factory, model):
    """An untouched copy: its context.jsonl bytes and kimi-cli's resume request."""
    template, sid = kimi_cli_session_template
    cli = template.clone(tmp_path_factory.mktemp("original") / "cli", model)
    context = cli.context_file(sid).read_bytes()
    body = cli.resume(sid, RESUME_PROMPT)
    # kimi-cli really ran its shell tool: both outputs are in the history it sends
    outputs = [json.dumps(m["content"]) for m in body["messages"] if m["role"] == "tool"]
    assert len(outputs) == 2 and "hello\\n" in outputs[0] and "world\\n" in outputs[1]
    return sid, context, body


@pytest.fixture(scope="module")
def pair(kimi_cli_session_template, tmp_path_factory, model):
    """Two copies of one kimi-cli session: ``ours`` compacted by our CLI, ``theirs`` by
    kimi-cli's own /compact; with the compaction request each sent."""
    template, sid = kimi_cli_session_template
    root = tmp_path_factory.mktemp("pair")
    ours, theirs = template.clone(root / "ours", model), template.clone(root / "theirs", model)
    start = len(model.requests)
    _our_compact(ours, sid)
    our_requests = [r.json for r in model.requests[start:] if r.kind == "compaction"]
    their_requests = theirs.compact(sid).compaction_bodies()
    assert len(our_requests) == 1 and len(their_requests) == 1
    return sid, ours, theirs, our_requests[0], their_requests[0]


def test_our_in_place_write_equals_kimi_clis_own_compact(pair):
    sid, ours, theirs, _, _ = pair
    assert ours.context_file(sid).read_bytes() == theirs.context_file(sid).read_bytes()
    # both kept the pre-compaction file as the first rotation, unchanged
    assert (ours.session_dir(sid) / "context_1.jsonl").read_bytes() == (
        theirs.session_dir(sid) / "context_1.jsonl"
    ).read_bytes()


def test_kimi_cli_resumes_our_write_as_its_own(pair, original, tmp_path):
    sid, ours, theirs, _, _ = pair
    # on copies, so the shared pair stays as compacted whatever runs first
    ours, theirs = ours.clone(tmp_path / "ours"), theirs.clone(tmp_path / "theirs")
    after_ours = ours.resume(sid, RESUME_PROMPT)
    after_theirs = theirs.resume(sid, RESUME_PROMPT)
    assert after_ours == after_theirs
    # and it is a real compaction: the summary is sent, the shell outputs are gone
    _, _, before = original
    assert after_ours["messages"][0] == before["messages"][0]  # kimi-cli's system prompt
    assert {"type": "text", "text": SUMMARY} in after_ours["messages"][1]["content"]
    assert len(after_ours["messages"]) < len(before["messages"])
    assert not [m for m in after_ours["messages"] if m["role"] == "tool"]


# Boundaries where the first kept message is the assistant's, so kimi-cli sends the
# summary as its own user message (it merges adjacent user messages on the wire):
# 3 keeps "It printed hello." onwards; 7 keeps the echo world tool call with its result.
@pytest.mark.parametrize("up_to", [3, 7])
def test_explicit_boundary_kimi_cli_resumes_summary_then_messages_after_n(
    up_to, kimi_cli_session_template, original, tmp_path, model
):
    template, sid = kimi_cli_session_template
    _, _, before = original
    history = before["messages"][1:-1]  # the 12 messages kimi-cli sent, as it sends them
    assert len(history) == 12 and history[up_to]["role"] == "assistant"
    cli = template.clone(tmp_path / "cli", model)
    _our_compact(cli, sid, "--up-to", str(up_to))
    after = cli.resume(sid, RESUME_PROMPT)
    expected = [before["messages"][0], _summary_message(), *history[up_to:]]
    assert after["messages"][:-1] == expected
    assert after["messages"][-1] == before["messages"][-1]  # the new turn


def test_after_restore_kimi_cli_resumes_the_original_history(
    kimi_cli_session_template, original, tmp_path, model
):
    template, sid = kimi_cli_session_template
    _, context, before = original
    cli = template.clone(tmp_path / "cli", model)
    _our_compact(cli, sid)
    assert cli.context_file(sid).read_bytes() != context
    code, _, err = run_ours(["restore", str(cli.session_dir(sid)), "--yes"], cli.root)
    assert code == 0, err
    assert cli.context_file(sid).read_bytes() == context
    assert cli.resume(sid, RESUME_PROMPT) == before


def test_a_second_compaction_matches_kimi_clis_second_compact(
    kimi_cli_session_template, tmp_path, model
):
    """Compact, talk on, compact again: ours twice and kimi-cli's own twice write the same
    file and the same rotations (kimi-cli resumes from context.jsonl alone)."""
    template, sid = kimi_cli_session_template
    ours = template.clone(tmp_path / "ours", model)
    theirs = template.clone(tmp_path / "theirs", model)
    _our_compact(ours, sid)
    theirs.compact(sid)
    for cli in (ours, theirs):
        cli.fake.script(tool_turn("echo again"), text_turn("It printed again."))
        cli.run("Run echo again", sid).check()
    _our_compact(ours, sid)
    theirs.compact(sid)
    for name in ("context.jsonl", "context_1.jsonl", "context_2.jsonl"):
        mine = (ours.session_dir(sid) / name).read_bytes()
        assert mine == (theirs.session_dir(sid) / name).read_bytes(), name


def test_too_short_to_compact_writes_nothing_and_resumes_as_kimi_clis_no_op(kimi_cli, tmp_path):
    """One exchange: nothing before the preserved tail. Our compact is the spec's no-op
    (nothing written, no request); kimi-cli's own /compact sends no request either but
    rewrites the file (a rotation, a new _usage). kimi-cli resumes both the same way."""
    sid = kimi_cli.create_session([("hi", [text_turn("hello")])])
    context = kimi_cli.context_file(sid).read_bytes()
    theirs = kimi_cli.clone(tmp_path / "theirs")
    start = len(kimi_cli.fake.requests)
    out, err = _our_compact(kimi_cli, sid)
    assert "nothing to compact" in out + err
    assert kimi_cli.fake.requests[start:] == []
    assert kimi_cli.context_file(sid).read_bytes() == context
    assert not (kimi_cli.session_dir(sid) / "context_1.jsonl").exists()
    assert theirs.compact(sid).compaction_bodies() == []
    assert kimi_cli.resume(sid, RESUME_PROMPT) == theirs.resume(sid, RESUME_PROMPT)


def _user_parts(body: dict) -> list:
    users = [m for m in body["messages"] if m["role"] == "user"]
    assert len(users) == 1
    return users[0]["content"]


def test_with_kimi_clis_prompt_our_request_equals_kimi_clis_compaction_request(
    pair, kimi_cli_session_template, tmp_path, model
):
    _, _, _, default_request, their_request = pair
    compact_md = kimi_cli_compact_md()
    assert compact_md is not None, "the installed kimi-cli has no prompts/compact.md"
    template, sid = kimi_cli_session_template
    cli = template.clone(tmp_path / "cli", model)
    start = len(model.requests)
    _our_compact(cli, sid, env={"KIMI_CLI_COMPACT_MD": str(compact_md)})
    ours = [r.json for r in model.requests[start:] if r.kind == "compaction"]
    assert len(ours) == 1
    assert _user_parts(ours[0]) == _user_parts(their_request)
    assert [m for m in ours[0]["messages"] if m["role"] == "system"] == [
        m for m in their_request["messages"] if m["role"] == "system"
    ]
    # without kimi-cli's prompt (the bundled one) the last part differs, the transcript not
    assert _user_parts(default_request)[:-1] == _user_parts(their_request)[:-1]
    assert message_text({"content": _user_parts(default_request)[-1:]}) != message_text(
        {"content": _user_parts(their_request)[-1:]}
    )


def test_custom_instructions_reach_the_request_as_kimi_clis_own_do(
    kimi_cli_session_template, tmp_path, model
):
    """``--instructions TEXT`` and kimi-cli's ``/compact TEXT`` send the same user parts."""
    compact_md = kimi_cli_compact_md()
    assert compact_md is not None
    template, sid = kimi_cli_session_template
    focus = "Keep the shell outputs — 保留输出."
    theirs = template.clone(tmp_path / "theirs", model)
    run = theirs.run(f"/compact {focus}", sid).check()
    their_requests = run.compaction_bodies()
    ours = template.clone(tmp_path / "ours", model)
    start = len(model.requests)
    _our_compact(ours, sid, "--instructions", focus, env={"KIMI_CLI_COMPACT_MD": str(compact_md)})
    our_requests = [r.json for r in model.requests[start:] if r.kind == "compaction"]
    assert len(their_requests) == 1 and len(our_requests) == 1
    assert focus in _user_parts(their_requests[0])[-1]["text"]
    assert _user_parts(our_requests[0]) == _user_parts(their_requests[0])
    assert ours.context_file(sid).read_bytes() == theirs.context_file(sid).read_bytes()


def test_our_write_left_an_audit_record_and_no_key(pair):
    sid, ours, _, _, _ = pair
    audit = ours.session_dir(sid) / "context.jsonl.compact-audit.jsonl"
    lines = [json.loads(x) for x in audit.read_bytes().split(b"\n") if x]
    assert lines, "no audit record"
    for path in Path(ours.root).rglob("*"):
        if path.is_file():
            assert b"sk-fake-test-key" not in path.read_bytes(), path

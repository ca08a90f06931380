"""kimi-cli sessions with D-Mail checkpoints.

With the D-Mail tool (``SendDMail``: kimi-cli's built-in ``--agent okabe``) every
``{"role": "_checkpoint", "id": N}`` record kimi-cli writes is followed by a user message
``<system>CHECKPOINT N</system>``, which kimi-cli sends to the model (so that it can name a
checkpoint in a D-Mail). After its own ``/compact`` the new file holds that message for
checkpoint 0 before the summary; ours must too.

The session here is written by kimi-cli itself: three turns, two real shell calls, and a
D-Mail the fake model sends back to checkpoint 4 (before ``echo world`` ran), so kimi-cli
reverts its context and rotates the file (``context_1.jsonl``). Then our compaction and
kimi-cli's own ``/compact`` are run on copies of it and compared: the file and its
rotations byte for byte, the compaction request, and what kimi-cli sends when it resumes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.formats import dump_session, load_session
from tests.agents.fake_model import FakeModel, Turn, message_text, text_turn, tool_turn
from tests.agents.harness import (
    KimiCli,
    KimiCliOkabe,
    kimi_cli_compact_md,
    kimi_cli_installed,
    require_agent,
    run_ours,
    shared_template,
)

pytestmark = pytest.mark.agents

SUMMARY = "FAKE SUMMARY: echo hello, then a D-Mail after echo world — 摘要 ✓"
RESUME_PROMPT = "Where were we?"
DMAIL_NOTE = "I already ran echo world; it printed world. Do not run it again."
# kimi-cli 1.51 numbers a checkpoint at each turn and at each step: 0 turn 1, 1 and 2 its
# steps, 3 turn 2, 4 its first step (the echo world call). The D-Mail goes back to 4.
DMAIL_CHECKPOINT = 4
DMAIL_CONVERSATION = [
    ("Please run echo hello", [tool_turn("echo hello"), text_turn("It printed hello.")]),
    (
        "Now run echo world",
        [
            tool_turn("echo world"),
            Turn(
                tool_names=("SendDMail",),
                tool_args={"message": DMAIL_NOTE, "checkpoint_id": DMAIL_CHECKPOINT},
            ),
            text_turn("Done: world."),
        ],
    ),
    ("thanks", [text_turn("You're welcome.")]),
]


def checkpoint_line(n: int) -> str:
    """The message line kimi-cli writes after ``_checkpoint`` N (compact JSON)."""
    message = {"role": "user", "content": f"<system>CHECKPOINT {n}</system>"}
    return json.dumps(message, separators=(",", ":"))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def dmail_template(tmp_path_factory):
    """kimi-cli's own D-Mail session, made once per test run."""
    require_agent(kimi_cli_installed(), "kimi-cli")
    return shared_template(
        tmp_path_factory, "kimi-cli-dmail", KimiCliOkabe, conversation=DMAIL_CONVERSATION
    )


@pytest.fixture(scope="module")
def model():
    with FakeModel(summary=SUMMARY, lifetime=600) as fm:
        yield fm


def _our_compact(cli: KimiCli, sid: str, *extra: str) -> None:
    compact_md = kimi_cli_compact_md()
    assert compact_md is not None, "the installed kimi-cli has no prompts/compact.md"
    code, _, err = run_ours(
        ["compact", str(cli.session_dir(sid)), "--in-place", "--yes", "--provider", "openai"]
        + ["--base-url", cli.fake.base_url, "--model", cli.fake.model, *extra],
        cli.root,
        {"KIMI_CLI_COMPACT_MD": str(compact_md)},
    )
    assert code == 0, f"our compact exited {code}: {err[-2000:]}"


@pytest.fixture(scope="module")
def pair(dmail_template, tmp_path_factory, model):
    """Two copies of the D-Mail session: ``ours`` compacted by our CLI (with kimi-cli's
    compact.md as the prompt), ``theirs`` by kimi-cli's own /compact (okabe agent); with
    the compaction request each sent."""
    template, sid = dmail_template
    root = tmp_path_factory.mktemp("dmail-pair")
    ours, theirs = template.clone(root / "ours", model), template.clone(root / "theirs", model)
    start = len(model.requests)
    _our_compact(ours, sid)
    our_requests = [r.json for r in model.requests[start:] if r.kind == "compaction"]
    their_requests = theirs.compact(sid).compaction_bodies()
    assert len(our_requests) == 1 and len(their_requests) == 1
    return sid, ours, theirs, our_requests[0], their_requests[0]


def test_the_session_is_kimi_clis_own_d_mail_session(dmail_template, tmp_path):
    """The fixture is what the issue describes: kimi-cli reverted its context on the
    D-Mail (the old file is its rotation), and every checkpoint carries its message.
    We read it back byte for byte."""
    template, sid = dmail_template
    folder = template.session_dir(sid)
    context, rotated = folder / "context.jsonl", folder / "context_1.jsonl"
    assert rotated.is_file(), "kimi-cli did not revert (no rotation)"
    assert "world\\n" in rotated.read_text() and "world\\n" not in context.read_text()
    assert DMAIL_NOTE in context.read_text()
    lines = _lines(context)
    ids = [json.loads(x)["id"] for x in lines if json.loads(x)["role"] == "_checkpoint"]
    assert len(ids) > DMAIL_CHECKPOINT + 1 and ids == sorted(ids)
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record["role"] == "_checkpoint":
            assert lines[i + 1] == checkpoint_line(record["id"]), f"line {i + 2}"
    assert dump_session(load_session(folder)) == context.read_bytes()


def test_our_compaction_writes_the_checkpoint_line_as_kimi_clis_own_compact(pair):
    sid, ours, theirs, our_request, their_request = pair
    mine, want = ours.context_file(sid), theirs.context_file(sid)
    assert _lines(want)[1:3] == [
        json.dumps({"role": "_checkpoint", "id": 0}),
        checkpoint_line(0),
    ]
    assert _lines(mine) == _lines(want)
    assert mine.read_bytes() == want.read_bytes()
    # the same rotations: kimi-cli's D-Mail one, and the file before the compaction
    for name in ("context_1.jsonl", "context_2.jsonl"):
        assert (ours.session_dir(sid) / name).read_bytes() == (
            theirs.session_dir(sid) / name
        ).read_bytes(), name
    # the same compaction request (kimi-cli's prompt on both sides), checkpoints included
    assert our_request["messages"] == their_request["messages"]
    assert "<system>CHECKPOINT 0</system>" in message_text(our_request["messages"][-1])


def test_kimi_cli_resumes_our_write_as_its_own(pair, tmp_path):
    sid, ours, theirs, _, _ = pair
    ours, theirs = ours.clone(tmp_path / "ours"), theirs.clone(tmp_path / "theirs")
    after_ours = ours.resume(sid, RESUME_PROMPT)
    after_theirs = theirs.resume(sid, RESUME_PROMPT)
    assert after_ours == after_theirs
    # the model is told checkpoint 0 exists, before the summary
    texts = [message_text(m) for m in after_ours["messages"]]
    first = next(i for i, t in enumerate(texts) if "<system>CHECKPOINT 0</system>" in t)
    assert first <= next(i for i, t in enumerate(texts) if SUMMARY in t)


def test_an_explicit_boundary_keeps_the_checkpoint_line_and_kimi_cli_resumes_it(
    dmail_template, tmp_path, model
):
    """``--up-to`` on a D-Mail session: the same layout (checkpoint 0 and its message,
    the summary, the messages after N), and kimi-cli resumes it with checkpoint 0 seen."""
    template, sid = dmail_template
    cli = template.clone(tmp_path / "cli", model)
    before = load_session(cli.session_dir(sid))
    up_to = 6  # keeps "It printed hello." onwards (the echo hello exchange compacted)
    _our_compact(cli, sid, "--up-to", str(up_to))
    lines = _lines(cli.context_file(sid))
    assert lines[1:3] == [json.dumps({"role": "_checkpoint", "id": 0}), checkpoint_line(0)]
    assert SUMMARY in lines[3]
    after = load_session(cli.session_dir(sid))
    assert [m.data for m in after.messages[2:]] == [m.data for m in before.messages[up_to:]]
    body = cli.resume(sid, RESUME_PROMPT)
    assert any("<system>CHECKPOINT 0</system>" in message_text(m) for m in body["messages"])

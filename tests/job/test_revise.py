"""Revise a summary by feedback: the revision request, its
rounds and what does not fit, ``--from-summary`` alone, the usage errors, the
write with its backup and undo, and the offline provider's reading of the
feedback.

Requests go to a real HTTP server on 127.0.0.1 that records them: what was
sent, and that nothing was, is read from its record.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kimi_compact_tui.commands.jsonout import JSON_SCHEMA
from kimi_compact_tui.compaction.request import (
    RevisionRound,
    build_request,
    fit_rounds,
    revision_request,
)
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.job.revise import feedback_as_instruction, revise
from kimi_compact_tui.providers.base import ProviderConfig
from kimi_compact_tui.store import read_audit
from tests.factories import write_openai_json
from tests.loopback_server import LoopbackServer, openai_sse

MESSAGES = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Make the cache key include the tenant slug."},
    {
        "role": "assistant",
        "content": "The cache key is derived from the tenant slug and the request path now. "
        "I chose sha256 over md5 for the digest.",
    },
    {"role": "user", "content": "Run the tests."},
    {"role": "assistant", "content": "tests/test_cache.py::test_tenant_isolation fails."},
    {"role": "user", "content": "Fix it, then stop."},
    {"role": "assistant", "content": "Fixed; all tests pass."},
]
S1 = "<current_focus>\nCache keys.\n</current_focus>\n"
S2 = "<current_focus>\nCache keys per tenant.\n</current_focus>\n"
F1 = 'keep "sha256 over md5"'
F2 = "add the failing test name"


def config_file(tmp_path: Path, server: LoopbackServer, extra: str = "") -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        "compaction: {enabled: true, type: kimi" + extra + "}\n"
        f"provider: {{kind: openai, base_url: '{server.base_url}', model: m, api_key_env: ''}}\n",
        encoding="utf-8",
    )
    return path


def offline_config(tmp_path: Path) -> Path:
    path = tmp_path / "offline.yaml"
    path.write_text("compaction: {enabled: true, type: kimi}\nprovider: {kind: offline}\n")
    return path


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return write_openai_json(tmp_path / "s" / "chat.json", MESSAGES)


@pytest.fixture
def summaries(tmp_path: Path) -> tuple[Path, Path]:
    s1, s2 = tmp_path / "s1.md", tmp_path / "s2.md"
    s1.write_text(S1, encoding="utf-8")
    s2.write_text(S2, encoding="utf-8")
    return s1, s2


def one_line_exit_2(result) -> str:
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    return result.stderr


# ----------------------------------------------------------------------------- the request


def test_one_round_is_the_compaction_request_then_summary_then_feedback(
    cli_main, tmp_path, loopback, session, summaries
):
    s1, _ = summaries
    config = config_file(
        tmp_path, loopback, ", settings_overrides: {tool_choice: auto, temperature: 0.2}"
    )
    loopback.script([openai_sse(["plain"]), openai_sse(["REVISED ", "summary"])])
    plain = cli_main("compact", session, "--config", config)
    assert plain.code == 0, plain.stderr
    revised = cli_main("compact", session, "--config", config, "--from-summary", s1, "--revise", F1)
    assert revised.code == 0, revised.stderr
    assert revised.stdout == "REVISED summary\n"
    first, second = (r.json for r in loopback.requests)
    # The compaction request for the same range, unchanged, then the round.
    assert second["messages"][:2] == first["messages"]
    assert second["messages"][2:] == [
        {"role": "assistant", "content": S1},
        {"role": "user", "content": F1},
    ]
    assert len(second["messages"]) == 4
    # Toolless: an override cannot bring tools back; the other settings are the same.
    assert {k: v for k, v in second.items() if k != "messages"} == {
        k: v for k, v in first.items() if k != "messages"
    }
    assert "tools" not in second and "tool_choice" not in second
    assert second["temperature"] == 0.2
    assert "revising" in revised.stderr and str(s1) in revised.stderr


def test_chained_rounds_are_sent_in_order(cli_main, tmp_path, loopback, session, summaries):
    s1, s2 = summaries
    config = config_file(tmp_path, loopback)
    loopback.script([openai_sse(["R3"])])
    argv = ["--from-summary", s1, "--revise", F1, "--from-summary", s2, "--revise", F2]
    result = cli_main("compact", session, "--config", config, "--json", *argv)
    assert result.code == 0, result.stderr
    sent = loopback.requests[0].json["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in sent[2:]] == [S1, F1, S2, F2]
    report = json.loads(result.stdout)
    assert report["summary"] == "R3"
    assert report["revision"] == {
        "from_summary": str(s2),
        "rounds": 2,
        "rounds_sent": 2,
        "dropped": 0,
    }


def test_preview_shows_the_same_request_labelled_as_a_revision(
    cli_main, tmp_path, loopback, session, summaries
):
    s1, s2 = summaries
    config = config_file(tmp_path, loopback)
    argv = ["--from-summary", s1, "--revise", F1, "--from-summary", s2, "--revise", F2]
    shown = cli_main("preview", session, "--config", config, "--json", *argv)
    assert shown.code == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["schema"] == JSON_SCHEMA and data["kind"] == "revision"
    assert data["revision"]["rounds_sent"] == 2 and data["revision"]["dropped"] == 0
    loopback.script([openai_sse(["R"])])
    assert cli_main("compact", session, "--config", config, *argv).code == 0
    assert data["body"]["messages"] == loopback.requests[0].json["messages"]
    text = cli_main("preview", session, "--config", config, *argv)
    assert text.code == 0, text.stderr
    assert "REVISION of the summary in" in text.stdout and str(s2) in text.stdout
    assert "===== assistant (round 1: summary) =====\n" + S1 in text.stdout
    assert "===== user (round 2: feedback) =====\n" + F2 in text.stdout
    plain = json.loads(cli_main("preview", session, "--config", config, "--json").stdout)
    assert plain["kind"] == "compaction" and "revision" not in plain
    assert data["body"]["messages"][:2] == plain["body"]["messages"]


def test_the_oldest_rounds_go_first_when_the_history_would_not_fit():
    rounds = [RevisionRound("a" * 400, "f1"), RevisionRound("b" * 400, "f2")]
    rounds.append(RevisionRound("c" * 400, "f3"))
    cost = rounds[0].estimated_tokens()
    assert fit_rounds(50, rounds, 50 + 3 * cost) == (rounds, 0)
    assert fit_rounds(50, rounds, 50 + 3 * cost - 1) == (rounds[1:], 1)
    assert fit_rounds(50, rounds, 50 + cost) == (rounds[2:], 2)
    # The latest round is always sent, even over the budget.
    assert fit_rounds(50, rounds, 10) == (rounds[2:], 2)


def test_a_dropped_round_is_said_and_left_out_of_the_request(cli_main, tmp_path, loopback, session):
    """Three rounds of ~50k-token summaries against the 120k-token budget:
    the oldest round is left out, and both the preview and compact say so."""
    files = []
    for n in range(3):
        path = tmp_path / f"big{n}.md"
        path.write_text(f"round {n} " + "word " * 40_000, encoding="utf-8")
        files.append(path)
    argv = []
    for n, path in enumerate(files):
        argv += ["--from-summary", path, "--revise", f"feedback {n}"]
    config = config_file(tmp_path, loopback)
    loopback.script([openai_sse(["R"])])
    result = cli_main("compact", session, "--config", config, *argv)
    assert result.code == 0, result.stderr
    assert "the 1 oldest revision round left out" in result.stderr
    sent = loopback.requests[0].json["messages"]
    assert [m["content"] for m in sent[3::2]] == ["feedback 1", "feedback 2"]
    assert sent[2]["content"].startswith("round 1 ")
    shown = json.loads(cli_main("preview", session, "--config", config, "--json", *argv).stdout)
    assert shown["revision"] == {
        "from_summary": str(files[2]),
        "rounds": 3,
        "rounds_sent": 2,
        "dropped": 1,
    }
    text = cli_main("preview", session, "--config", config, *argv).stdout
    assert "NOTE     the 1 oldest revision round left out" in text
    assert "===== assistant (round 2: summary) =====" in text
    assert "(round 1: summary)" not in text


def test_a_stated_context_size_is_the_budget(tmp_path):
    session = write_openai_json(tmp_path / "chat.json", MESSAGES)
    job = CompactionJob.load(session, AppConfig(raw={"compaction": {"enabled": True}}))
    prep = job.prepare()
    rounds = [RevisionRound("x " * 3000, "f1"), RevisionRound("y " * 3000, "f2")]
    wide = revise(prep, rounds, ProviderConfig(kind="ollama", model="m", num_ctx=200_000))
    narrow = revise(prep, rounds, ProviderConfig(kind="ollama", model="m", num_ctx=4096 + 2000))
    assert wide.request is not None and narrow.request is not None
    assert len(wide.request.revisions) == 2 and wide.request.dropped_rounds == 0
    assert narrow.request.revisions == (rounds[1],) and narrow.request.dropped_rounds == 1
    # The estimate counts the rounds sent.
    assert wide.request.estimated_input_tokens() > prep.request.estimated_input_tokens() + 2000
    assert wide.request_estimated() == wide.request.estimated_input_tokens()


def test_a_revision_is_never_revised_again_and_needs_a_round(tmp_path):
    session = write_openai_json(tmp_path / "chat.json", MESSAGES)
    job = CompactionJob.load(session, AppConfig(raw={"compaction": {"enabled": True}}))
    base = job.prepare().request
    assert base is not None
    once = revision_request(base, [RevisionRound(S1, F1)])
    with pytest.raises(ValueError):
        revision_request(once, [RevisionRound(S2, F2)])
    with pytest.raises(ValueError):
        revision_request(base, [])


# ----------------------------------------------------------------------------- the write


def test_a_revision_is_written_with_a_backup_and_undone(
    cli_main, tmp_path, loopback, session, summaries
):
    s1, _ = summaries
    original = session.read_bytes()
    config = config_file(tmp_path, loopback)
    loopback.script([openai_sse(["<current_focus>REVISED-TEXT</current_focus>"])])
    result = cli_main(
        "compact", session, "--config", config, "--from-summary", s1, "--revise", F1,
        "--in-place", "--yes", "--json",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["written"] is True and report["revision"]["rounds"] == 1
    (record,) = read_audit(session)  # the audit record marks the revision as one
    assert record["revision"] == {"rounds": 1, "left_out": 0}
    backups = sorted(session.parent.glob("chat.json.bak-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == original
    written = load_session(session)
    texts = [m.text() for m in written.messages]
    assert any("REVISED-TEXT" in t for t in texts)
    assert not any("tenant slug" in t for t in texts)  # the range was compacted
    undo = cli_main("restore", session, "--yes")
    assert undo.code == 0, undo.stderr
    assert session.read_bytes() == original


def test_from_summary_alone_writes_it_as_it_is_with_no_request(
    cli_main, tmp_path, loopback, session, summaries
):
    s1, _ = summaries
    original = session.read_bytes()
    config = config_file(tmp_path, loopback)
    loopback.script([openai_sse(["never sent"])])
    result = cli_main(
        "compact", session, "--config", config, "--from-summary", s1, "--in-place", "--yes"
    )
    assert result.code == 0, result.stderr
    assert loopback.requests == []
    assert result.stdout == S1
    assert "no model call" in result.stderr
    texts = [m.text() for m in load_session(session).messages]
    assert any(S1 in t for t in texts)
    assert sorted(session.parent.glob("chat.json.bak-*"))
    # The audit record names no provider, model or prompt: none was used.
    (audit_file,) = session.parent.glob("*audit*")
    audit = json.loads(audit_file.read_text(encoding="utf-8").split("\n")[-2])
    assert audit["provider"] is None and audit["model"] is None
    assert "no model call" in audit["provider_detail"]
    assert cli_main("restore", session, "--yes").code == 0
    assert session.read_bytes() == original


def test_from_summary_reads_standard_input(cli_main, tmp_path, loopback, session, monkeypatch):
    config = config_file(tmp_path, loopback)
    out = tmp_path / "out.json"
    monkeypatch.setattr("sys.stdin", io.StringIO("FROM-STDIN summary\n"))
    result = cli_main("compact", session, "--config", config, "--from-summary", "-", "-o", out)
    assert result.code == 0, result.stderr
    assert loopback.requests == []
    assert "standard input" in result.stderr
    assert any("FROM-STDIN summary" in m.text() for m in load_session(out).messages)
    loopback.script([openai_sse(["R"])])
    monkeypatch.setattr("sys.stdin", io.StringIO("PIPED summary\n"))
    revised = cli_main(
        "compact", session, "--config", config, "--from-summary", "-", "--revise", F1
    )
    assert revised.code == 0, revised.stderr
    assert loopback.requests[0].json["messages"][2]["content"] == "PIPED summary\n"


def test_from_summary_goes_through_the_same_refusals(cli_main, tmp_path, loopback, summaries):
    """A file marked read-only is refused before anything, revision or not."""
    s1, _ = summaries
    session = write_openai_json(tmp_path / "ro" / "chat.json", MESSAGES)
    session.chmod(0o444)
    before = session.read_bytes()
    config = config_file(tmp_path, loopback)
    for extra in ([], ["--revise", F1]):
        result = cli_main(
            "compact", session, "--config", config, "--from-summary", s1, *extra,
            "--in-place", "--yes",
        )  # fmt: skip
        err = one_line_exit_2(result)
        assert "read-only" in err
    assert loopback.requests == [] and session.read_bytes() == before


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--revise", "keep X"], "--revise needs --from-summary"),
        (["--from-summary", "{s1}", "--from-summary", "{s2}"], "no --revise"),
        (["--from-summary", "{s1}", "--revise", "a", "--revise", "b"], "paired in the order"),
        (["--from-summary", "{s1}", "--revise", "  "], "--revise is empty"),
        (["--from-summary", "-", "--revise", "a", "--from-summary", "-", "--revise", "b"], "once"),
        (["--from-summary", "{missing}", "--revise", "a"], "summary file not found"),
        (["--from-summary", "{empty}", "--revise", "a"], "the summary is empty"),
        (["--from-summary", "{s1}", "--instructions", "keep X"], "--instructions needs a model"),
    ],
)
def test_bad_revise_options_are_one_line_and_send_nothing(
    cli_main, tmp_path, loopback, session, summaries, argv, words
):
    s1, s2 = summaries
    empty = tmp_path / "empty.md"
    empty.write_text("\n  \n", encoding="utf-8")
    names = {"s1": s1, "s2": s2, "missing": tmp_path / "nope.md", "empty": empty}
    argv = [a.format(**names) for a in argv]
    before = session.read_bytes()
    config = config_file(tmp_path, loopback)
    loopback.script([openai_sse(["never sent"])])
    err = one_line_exit_2(
        cli_main("compact", session, "--config", config, "--in-place", "--yes", *argv)
    )
    assert words in err, err
    assert loopback.requests == [] and session.read_bytes() == before


def test_preview_needs_revise_with_from_summary(cli_main, tmp_path, loopback, session, summaries):
    config = config_file(tmp_path, loopback)
    err = one_line_exit_2(
        cli_main("preview", session, "--config", config, "--from-summary", summaries[0])
    )
    assert "--from-summary needs --revise" in err
    err = one_line_exit_2(cli_main("preview", session, "--config", config, "--revise", "x"))
    assert "--revise needs --from-summary" in err


# ----------------------------------------------------------------------------- offline


def test_offline_keeps_what_the_feedback_names(cli_main, tmp_path, session, summaries):
    s1, s2 = summaries
    config = offline_config(tmp_path)
    plain = cli_main("compact", session, "--config", config)
    assert plain.code == 0, plain.stderr
    assert "sha256 over md5" not in plain.stdout
    once = cli_main("compact", session, "--config", config, "--from-summary", s1, "--revise", F1)
    assert once.code == 0, once.stderr
    assert "sha256 over md5" in once.stdout
    # A second round: what the first round's feedback kept stays kept.
    twice = cli_main(
        "compact", session, "--config", config,
        "--from-summary", s1, "--revise", F1,
        "--from-summary", s2, "--revise", "keep the request path",
    )  # fmt: skip
    assert twice.code == 0, twice.stderr
    assert "sha256 over md5" in twice.stdout and "the request path" in twice.stdout


def test_offline_is_sent_the_same_revision_request(tmp_path):
    """The offline provider is sent the request a model is (the compaction
    request unchanged, then the rounds): it keeps the last summary itself."""
    session = write_openai_json(tmp_path / "chat.json", MESSAGES)
    job = CompactionJob.load(session, AppConfig(raw={"compaction": {"enabled": True}}))
    prep = job.prepare(custom_instruction="focus on caching")
    rounds = [RevisionRound(S1, F1), RevisionRound(S2, F2)]
    offline = revise(prep, rounds, ProviderConfig(kind="offline")).request
    remote = revise(prep, rounds, ProviderConfig(kind="openai", model="m")).request
    assert offline is not None and remote is not None and prep.request is not None
    assert feedback_as_instruction("focus on caching", rounds) == f"focus on caching\n{F1}\n{F2}"
    assert offline.custom_instruction == remote.custom_instruction == "focus on caching"
    assert offline.messages == remote.messages
    assert remote.messages[:2] == prep.request.messages
    expected = build_request(
        job.session.messages,
        prep.plan,
        prep.prompt,
        {"settings_overrides": {}},
        custom_instruction="focus on caching",
    )
    assert remote.messages[:2] == expected.messages


# ----------------------------------------------------------------------------- the range guard


def test_a_revision_whose_range_changed_is_refused_before_any_request(tmp_path):
    """The TUI's guard: a summary is revised only for the range and the bytes
    it was made on."""
    from kimi_compact_tui.job.refusals import RefusalKind
    from kimi_compact_tui.job.revise import RevisionOrigin, origin_refusal

    session = write_openai_json(tmp_path / "chat.json", MESSAGES)
    config = AppConfig(raw={"compaction": {"enabled": True}})
    job = CompactionJob.load(session, config)
    prep = job.prepare()
    origin = RevisionOrigin.of(prep, job.fingerprint)
    assert origin_refusal(origin, prep, job.fingerprint) is None
    # The boundary moved.
    moved = job.prepare(up_to=4)
    refusal = origin_refusal(origin, moved, job.fingerprint)
    assert refusal is not None and refusal.kind is RefusalKind.REVISION_RANGE
    assert refusal.before_request
    assert "boundary moved" in refusal.message and "messages 2–5" in refusal.message
    assert "now 2–4" in refusal.message and str(session) in refusal.message
    # The file changed on disk since it was loaded.
    with session.open("a", encoding="utf-8") as fh:
        fh.write("\n")
    refusal = origin_refusal(origin, prep, job.fingerprint)
    assert refusal is not None and "changed on disk" in refusal.message
    # Reloaded: other bytes than the summary was made on.
    again = CompactionJob.load(session, config)
    refusal = origin_refusal(origin, again.prepare(), again.fingerprint)
    assert refusal is not None and "changed on disk" in refusal.message


def test_from_summary_alone_needs_no_prompt(cli_main, tmp_path, loopback, session, summaries):
    """No request is made, so an empty prompt file is no reason to refuse;
    with --revise it is (the request carries the prompt)."""
    prompt = tmp_path / "empty-prompt.md"
    prompt.write_text("", encoding="utf-8")
    config = config_file(tmp_path, loopback)
    out = tmp_path / "out.json"
    given = cli_main(
        "compact", session, "--config", config, "--prompt-file", prompt,
        "--from-summary", summaries[0], "-o", out,
    )  # fmt: skip
    assert given.code == 0, given.stderr
    revised = cli_main(
        "compact", session, "--config", config, "--prompt-file", prompt,
        "--from-summary", summaries[0], "--revise", F1,
    )  # fmt: skip
    assert "empty" in one_line_exit_2(revised)
    assert loopback.requests == []


def call(cid: str, name: str, **args) -> dict:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


FAILING = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Make the cache key include the tenant slug."},
    {
        "role": "assistant",
        "content": "Running.",
        "tool_calls": [call("c1", "Shell", command="pytest -q")],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "FAILED tests/test_cache.py::test_tenant_isolation - AssertionError: keys collide\n"
        "1 failed, 3 passed in 0.2s",
    },
    {
        "role": "assistant",
        "content": "Fixed.",
        "tool_calls": [call("c2", "Shell", command="pytest -q")],
    },
    {"role": "tool", "tool_call_id": "c2", "content": "4 passed in 0.2s"},
    {"role": "assistant", "content": "All green now."},
    {"role": "user", "content": "Good. Now the docs."},
    {"role": "assistant", "content": "Docs updated."},
]


def test_offline_adds_the_items_the_feedback_names(cli_main, tmp_path):
    """ "add the failing test name": no literal text to keep, but it names an
    item the extractor found; the offline summary keeps it, and says it did
    not follow the rest ("be brief")."""
    session = write_openai_json(tmp_path / "failing.json", FAILING)
    config = offline_config(tmp_path)
    plain = cli_main("compact", session, "--config", config)
    assert plain.code == 0, plain.stderr
    assert "test_tenant_isolation" not in plain.stdout
    first = tmp_path / "first.md"
    first.write_text(plain.stdout, encoding="utf-8")
    revised = cli_main(
        "compact", session, "--config", config, "--from-summary", first,
        "--revise", "Add the failing test name. Be brief.",
    )  # fmt: skip
    assert revised.code == 0, revised.stderr
    assert revised.stdout.startswith(plain.stdout.rstrip("\n").rsplit("</important_context>")[0])
    assert "tests/test_cache.py::test_tenant_isolation" in revised.stdout
    assert 'feedback not followed (it needs a model): "Be brief."' in revised.stderr


OFFLINE_EDIT = (
    "<current_focus>\nHAND-EDITED: the reviewer rewrote this line by hand.\n</current_focus>\n"
    "<important_context>\n- Deploy only after the tenant migration.\n</important_context>\n"
)


def test_offline_revise_keeps_the_given_summary_and_says_what_it_could_not_follow(
    cli_main, tmp_path, session
):
    """Issue 31 item 17: the summary in FILE (hand edits included) is kept;
    "keep X" adds X verbatim; the rest is named as not followed."""
    edited = tmp_path / "edited.md"
    edited.write_text(OFFLINE_EDIT, encoding="utf-8")
    config = offline_config(tmp_path)
    out = cli_main(
        "compact", session, "--config", config, "--from-summary", edited,
        "--revise", f"{F1}. Write it in French.",
    )  # fmt: skip
    assert out.code == 0, out.stderr
    text = out.stdout
    assert text.startswith("<current_focus>\nHAND-EDITED: the reviewer rewrote this line by hand.")
    assert "- Deploy only after the tenant migration." in text
    assert "sha256 over md5" in text
    assert text.count("<important_context>") == 1 and text.rstrip().endswith("</important_context>")
    assert "User requests, verbatim" not in text  # no summary written from the messages again
    err = out.stderr
    assert f"revising the summary in {edited} without a model (offline)" in err
    assert "a revision of the summary in" not in err
    assert 'feedback not followed (it needs a model): "Write it in French."' in err
    # Nothing to follow: the summary comes back exactly as given.
    same = cli_main(
        "compact", session, "--config", config, "--from-summary", edited,
        "--revise", "Be more concise.",
    )  # fmt: skip
    assert same.code == 0, same.stderr
    assert same.stdout == OFFLINE_EDIT


def test_named_items_need_every_word_of_what_is_named(tmp_path):
    from kimi_compact_tui.job.prepare import specifics_of
    from kimi_compact_tui.job.revise import named_items

    session = write_openai_json(tmp_path / "failing.json", FAILING)
    job = CompactionJob.load(session, AppConfig(raw={"compaction": {"enabled": True}}))
    prep = job.prepare()
    specifics = specifics_of(job.session, prep.plan)()
    texts = lambda feedback: [i.text for i in named_items(feedback, specifics)]  # noqa: E731
    assert texts("add the failing test name") == [
        "failing test tests/test_cache.py::test_tenant_isolation"
    ]
    assert texts("please keep the commands verbatim") == ["pytest -q"]
    assert texts("add the failing lint name") == []  # "lint" is in no item
    assert texts("the failing test is important") == []  # asks for nothing


def test_a_revision_goes_through_min_retention(cli_main, tmp_path, loopback, session, summaries):
    """Retention judges the revised summary like any other: too little kept,
    exit 4 and nothing written."""
    s1, _ = summaries
    before = session.read_bytes()
    config = config_file(tmp_path, loopback)
    loopback.script([openai_sse(["<current_focus>nothing of note</current_focus>"])])
    result = cli_main(
        "compact", session, "--config", config, "--from-summary", s1, "--revise", F1,
        "--in-place", "--yes", "--min-retention", "user_requests=100",
    )  # fmt: skip
    assert result.code == 4, result.stderr
    assert len(loopback.requests) == 1 and session.read_bytes() == before
    assert not list(session.parent.glob("chat.json.bak-*"))

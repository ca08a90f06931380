"""Secrets in session text are masked in the summary written into a session
and in the compaction request sent to a model (issue 32: the two gaps left
after the one masker).

Every corpus secret (tests/fixtures/secrets/corpus.json) sits in the
compacted range three times: in a user request, in a tool call's arguments and
in the tool's output. The kept tail holds none, so whatever secret the session
file holds after the write was written by the compaction. The model is a real
HTTP server on 127.0.0.1 that records what it is sent.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kimi_compact_tui import secrets
from kimi_compact_tui.compaction.request import build_kimi_compaction_request_session
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.providers.base import StreamResult
from kimi_compact_tui.secrets import MASK, mask_secrets, mask_texts
from kimi_compact_tui.tui.state import ReviewState
from tests.core_helpers import SAMPLES
from tests.factories import write_openai_json
from tests.loopback_server import LoopbackServer, openai_sse
from tests.providers.test_secrets_masker import (
    ALL_LOOKALIKES,
    ALL_SECRETS,
    LOSSY,
    SECRETS,
    remote,
    texts_sent,
)

TAIL = [
    {"role": "user", "content": "Thanks. What is left to do?"},
    {"role": "assistant", "content": "Only the release notes are left."},
]


def corpus_session(tmp_path: Path) -> Path:
    """Every corpus secret as a request, a tool argument and a tool output,
    in the compacted range; a kept tail without any."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for n, case in enumerate(SECRETS):
        call = f"call_{n}"
        messages += [
            {"role": "user", "content": f"Please run this: {case['text']}"},
            {
                "role": "assistant",
                "content": "Running it.",
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {
                            "name": "shell",
                            "arguments": json.dumps({"command": case["text"]}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call, "content": f"$ {case['text']}\nok"},
            {"role": "assistant", "content": f"Ran it: {case['text']}"},
        ]
    messages += TAIL
    return write_openai_json(tmp_path / "session.json", messages, model="m")


def strings_in(value: Any) -> list[str]:
    """Every string in a parsed JSON value (keys too)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings_in(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def leaked(texts: list[str]) -> list[str]:
    joined = "\n".join(texts)
    return [case["shape"] for case in SECRETS if case["secret"] in joined]


def written(path: Path) -> list[str]:
    """The session file's text and every string in it (escapes undone)."""
    raw = path.read_text(encoding="utf-8")
    return [raw, *strings_in(json.loads(raw))]


def test_offline_in_place_writes_no_corpus_secret(cli_main, tmp_path):
    session = corpus_session(tmp_path)
    assert len(leaked(written(session))) == len(SECRETS)  # the session holds them all
    result = cli_main("compact", session, "--provider", "offline", "--in-place", "--yes")
    assert result.code == 0, result.stderr
    texts = written(session)
    assert leaked(texts) == []
    summary = json.loads(session.read_text(encoding="utf-8"))["messages"][1]["content"]
    assert MASK in summary  # the requests were written back, masked
    assert "Please run this" in summary


def test_offline_output_file_holds_no_corpus_secret(cli_main, tmp_path):
    session = corpus_session(tmp_path)
    out = tmp_path / "out.json"
    result = cli_main("compact", session, "--provider", "offline", "--output", out)
    assert result.code == 0, result.stderr
    assert leaked(written(out)) == []
    assert leaked([result.stdout]) == []  # the summary streamed to the terminal too


def test_a_model_is_sent_no_corpus_secret_and_its_echo_is_not_written(
    cli_main, tmp_path, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    session = corpus_session(tmp_path)
    echo = LOSSY + "\n".join(case["text"] for case in SECRETS[:10]) + "\n"
    with LoopbackServer(lifetime=60) as server:
        server.script([openai_sse([echo[:50], echo[50:]])])
        result = cli_main("compact", session, *remote(server), "--in-place", "--yes")
        assert result.code == 0, result.stderr
        (recorded,) = server.requests
        sent = texts_sent(server)
    assert leaked(sent) == []
    assert leaked([json.dumps(recorded.json)]) == []
    assert MASK in "".join(sent)
    assert leaked(written(session)) == []


def test_preview_shows_the_masked_request(cli_main, tmp_path):
    session = corpus_session(tmp_path)
    result = cli_main("preview", session, "--json")
    assert result.code == 0, result.stderr
    assert leaked([result.stdout]) == []
    assert MASK in result.stdout


def test_the_job_masks_the_summary_of_every_run_and_every_draft(tmp_path):
    """What the TUI shows after a run (the job's result) and what any front
    end writes (the job's draft) are masked; an edit typed by hand too."""
    import asyncio

    job = CompactionJob.load(corpus_session(tmp_path), AppConfig())
    prep = job.prepare()
    result = asyncio.run(job.summarize(prep, ProviderConfig(kind="offline", chunk_delay=0)))
    assert result.status == "complete"
    assert leaked([result.summary]) == [] and MASK in result.summary
    echoed = StreamResult(status="complete", summary=LOSSY + SECRETS[0]["text"], provider="x")
    draft = job.draft(prep, echoed)
    assert leaked([draft.summary]) == [] and MASK in draft.summary
    assert leaked(strings_in([m.data for m in draft.compacted.messages])) == []
    edited = job.draft(prep, result, LOSSY + SECRETS[5]["text"])
    assert leaked([edited.summary]) == [] and edited.edited


def test_the_tui_writes_a_masked_summary(tmp_path):
    session = corpus_session(tmp_path)
    state = ReviewState.create()
    state.load(session)
    state.set_result(
        StreamResult(
            status="complete",
            summary=LOSSY + "\n".join(c["text"] for c in SECRETS[10:20]),
            provider="openai",
            finish_reason="stop",
        )
    )
    state.write()
    assert leaked(written(session)) == []


def test_a_session_without_secrets_sends_the_request_unchanged(tmp_path):
    """The kimi-cli request, byte for byte, when nothing is masked."""
    target = tmp_path / "chat.json"
    shutil.copy(SAMPLES / "openai-retry-refactor.json", target)
    job = CompactionJob.load(target, AppConfig())
    prep = job.prepare()
    request = prep.request
    assert request is not None
    plain = build_kimi_compaction_request_session(
        job.session.messages, prep.plan.request_indices, prep.prompt.text
    )
    assert json.dumps(request.messages) == json.dumps(plain)
    assert json.dumps(request.body["messages"]) == json.dumps(plain)


#: Short secrets, each let through by one entry of the prefilter only (no run
#: of 23 characters): the literals, the patterns, the folded letters.
NEAR_THE_PREFILTER = [
    "id AKIAQRSTUVWXYZABCDEF ok",
    "art AKC1234567890ab done",
    "art AP1234567890ab done",
    "api_\u212aey = abcdefgh12",
    "https://bob:pa55word@example.com/x",
    "chan xoxb-1234-abcdefgh",
    "jwt eyJabcdefghij.eyJabcdefghij.abcdefghij",
    "use sk-abcdefghijklmnop1 here",
    "mysql -uroot -pHunter22 db",
    "sshpass -p hunter22 ssh host",
    "docker login -p hunter22 registry",
    "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    "Authorization: Bearer abcdefghijklmnop12",
    "run --password hunter22 now",
    "cloudant_pass abcdefghijk\u017flmnopqrstuvwx",
    "id ASIAQRSTUVWXYZABCDEF ok",
    "id A3TXQRSTUVWXYZABCDEF ok",
    "id ABIAQRSTUVWXYZABCDEF ok",
    "id ACCAQRSTUVWXYZABCDEF ok",
    'aws key "abcdefghi/abcdefghi/abcdefghi/abcdefghij"',
    "header Bearer abcdefghijklmnop12",
    "header Basic dXNlcjpwYXNzd29yZA==",
    "https://hooks.slack.com/services/T0001/B0002/abcdefgh",
    "sq0csp-abcdefghij\\abcdefghij\\abcdefghij\\abcdefghij",
    "use rk-abcdefghijklmnop1 here",
    "use pk-abcdefghijklmnop1 here",
    "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----",
    "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-MAC: abc",
    "run --pwd hunter22 now",
    "run --token abc123xyz now",
    "run --apikey abc123xyz now",
    "run --client-secret abc123xyz now",
    "mariadb -uroot -pHunter22 db",
    "db_pwd=hunter22x",
    "my_token=abcdefgh12",
    "credentials: abcdefgh12",
    "auth=abcdefgh12",
    "contrase\u00f1a=abcdefgh12",
    "//registry.example.com/:_authToken=npm_ab.cd",
    "api_key => abcdef12",
    "password := 'hunter22x'",
    "token:\u00a0abcdefgh",
    'secret="abcdef"',
    "passwd:\u3000\u5bc6\u7801\u5bc6\u7801\u5bc6\u7801",
    *(f"art AP{c}234567890ab done" for c in "0123456789ABCDEF"),
]


def test_mask_texts_is_mask_secrets_on_each_text():
    """The batch masker (a quick prefilter, then the masker on the texts it
    lets through) masks exactly what the masker does, text by text."""
    texts = [c["text"] for c in ALL_SECRETS + ALL_LOOKALIKES]
    texts += [f"line {i}: token = apply({i}) and key: value_{i}" for i in range(50)]
    texts += ["", "KeyError: 'x'", "AWS secret 'abc'", "task-runner start", "docker login x"]
    texts += NEAR_THE_PREFILTER
    assert [t for t in NEAR_THE_PREFILTER if mask_secrets(t) == t] == []
    assert mask_texts(texts) == [mask_secrets(t) for t in texts]


FRAGMENTS = [
    "key", "KEY", "Token", "pass", "word", "secret", "auth", "cred", "aws", "=", ":", " ",
    "\n", '"', "'", "]", "-", "_", "://", "@", "user", "AKIA", "ASIA", "AP1", "eyJ", "xox",
    "b-", "sk-", "ghp_", "mysql", " -p", "--password ", "bearer ", "Basic ", "docker login ",
    "\u212aey", "\u0130", "\u017f", "\u0131", "é", "好", "0123456789", "abcdefghij", "QRSTUVWXYZ",
    ".", "$", "(", "PRIVATE KEY", "-----BEGIN ", "-----END ", "hf_", "AIza", "sshpass ",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join), max_size=6))
def test_the_prefilter_never_keeps_a_text_the_masker_would_change(texts):
    assert mask_texts(texts) == [mask_secrets(t) for t in texts]
    with lines_from(1):  # every text of two lines or more masked line by line
        joined = "\n".join(texts)
        assert mask_secrets(joined) == secrets._masked(joined)


@contextmanager
def lines_from(size: int) -> Iterator[None]:
    old = secrets.LINES_FROM
    secrets.LINES_FROM = size
    try:
        yield
    finally:
        secrets.LINES_FROM = old


def test_a_long_text_is_masked_line_by_line_as_it_is_whole():
    cases = [c["text"] for c in ALL_SECRETS + ALL_LOOKALIKES] + NEAR_THE_PREFILTER
    text = "\n".join(f"{i}: {t} and token = x{i}" for i, t in enumerate(cases * 3))
    assert len(text) >= secrets.LINES_FROM
    whole = secrets._masked(text)
    assert mask_secrets(text) == whole != text
    with_block = text + "\n-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----"
    masked = mask_secrets(with_block)  # the block masked whole, not line by line
    assert masked.endswith("\n" + MASK) and "\nabc\n" not in masked


def test_an_edit_typed_in_the_tui_is_shown_as_it_is_written(tmp_path):
    """The TUI shows the summary to write (after an edit too): masked."""
    state = ReviewState.create()
    state.load(corpus_session(tmp_path))
    state.set_result(StreamResult(status="complete", summary=LOSSY, provider="openai"))
    state.set_summary(LOSSY + "\n".join(c["text"] for c in SECRETS[20:30]))
    shown = state.summary_to_write
    assert shown is not None and leaked([shown]) == [] and MASK in shown
    draft = state.draft()
    assert draft is not None and draft.summary == shown


def test_the_spec_facade_sends_and_writes_no_corpus_secret(tmp_path, monkeypatch):
    from kimi_compact_tui.formats import load_session
    from kimi_compact_tui.job.feature import KimiCompactionFeature
    from kimi_compact_tui.providers import stream_summary

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    session = load_session(corpus_session(tmp_path))
    echo = LOSSY + "\n".join(case["text"] for case in SECRETS[30:40])
    with LoopbackServer(lifetime=60) as server:
        server.script([openai_sse([echo])])
        config = ProviderConfig(kind="openai", base_url=server.base_url, model="m")

        def summarize(request: Any) -> str:
            return asyncio.run(stream_summary(config, request)).summary

        result = KimiCompactionFeature().execute_action(
            "compact_conversation",
            session=session,
            config={"compaction": {"enabled": True, "type": "kimi"}},
            summarize=summarize,
        )
        sent = texts_sent(server)
    assert result["ok"] and not result["noop"], result
    assert leaked(sent) == [] and MASK in "".join(sent)
    assert leaked(strings_in(result["native_messages"])) == []

"""The request is built when first read, and the offline provider reads the
messages it needs from what the request is built from, one message at a time:
the same masked text, the same transcript and the same summary as reading the
built request, without building it."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kimi_compact_tui.compaction.request import build_kimi_compaction_request_session
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.providers.offline import offline_summary
from kimi_compact_tui.providers.offline.transcript import read_parts, read_request
from tests.core_helpers import SAMPLES
from tests.factories import write_openai_json
from tests.providers.test_masking_written_and_sent import corpus_session
from tests.providers.test_secrets_masker import SECRETS


def transcript_of(request: Any) -> tuple[Any, ...]:
    t = read_request(request)
    return ([(m.number, m.role, m.parts) for m in t.messages], t.leading, t.instruction)


def built_transcript(request: Any) -> tuple[Any, ...]:
    """Read back from the built request's parts (the body's path)."""
    messages = read_parts([p["text"] for p in request.messages[1]["content"]])
    t = read_request(request.body)
    return ([(m.number, m.role, m.parts) for m in messages], request.plan.leading, t.instruction)


def prepared(path: Path, instruction: str = "") -> Any:
    return prepare_compaction(load_session(path), AppConfig(), custom_instruction=instruction)


def test_a_secret_laden_session_reads_the_same_without_building(tmp_path: Path) -> None:
    prep = prepared(corpus_session(tmp_path))
    lazy = transcript_of(prep.request)
    assert not prep.request.built  # read without building the request
    summary = offline_summary(prep.request)
    assert not prep.request.built
    again = prepared(corpus_session(tmp_path))
    assert again.request.build().built  # built first: read back from its parts
    assert lazy == transcript_of(again.request) == built_transcript(again.request)
    assert offline_summary(again.request) == summary
    sent = json.dumps(lazy)
    assert [c["shape"] for c in SECRETS if c["secret"] in sent] == []


def test_a_custom_instruction_reads_every_message_masked_in_one_batch(tmp_path: Path) -> None:
    instruction = "keep the token sk_live_" + "a1B2" * 6
    prep = prepared(corpus_session(tmp_path), instruction)
    summary = offline_summary(prep.request)
    assert prep.request.built  # every message is read: masked as the request is built
    again = prepared(corpus_session(tmp_path), instruction)
    assert transcript_of(prep.request) == built_transcript(again.request)
    assert offline_summary(again.request) == summary
    assert "sk_live_" + "a1B2" * 6 not in json.dumps(transcript_of(prep.request))


def test_the_built_messages_are_kimi_clis_masked(tmp_path: Path) -> None:
    session = load_session(corpus_session(tmp_path))
    prep = prepare_compaction(session, AppConfig())
    expected = build_kimi_compaction_request_session(
        session.messages, prep.plan.request_indices, prep.prompt.text, mask=True
    )
    assert prep.request.messages == expected
    assert prep.request.body["messages"] == expected


def test_a_request_built_by_two_workers_at_once_is_built_once() -> None:
    prep = prepared(SAMPLES / "openai-retry-refactor.json")
    request = prep.request
    got: list[Any] = []
    threads = [threading.Thread(target=lambda: got.append(request.body)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(body is got[0] for body in got)
    assert got[0]["messages"] is request.messages


def test_an_unusual_role_is_read_from_the_built_request(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "first request"},
        {"role": "critic", "content": "a note"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "second request"},
        {"role": "assistant", "content": "ok"},
    ]
    prep = prepared(write_openai_json(tmp_path / "s.json", messages, model="m"))
    read = transcript_of(prep.request)
    assert prep.request.built  # its header could hold a secret: masked as built
    assert read == built_transcript(prep.request)


TEXT = st.lists(
    st.sampled_from(
        [*"ab \n\t:=-_/.", "\x1b[31m", "\u2028", "é", "漢", "sk-", "ghp_", "password=", "x" * 24]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), TEXT), min_size=2, max_size=8))
def test_any_session_reads_the_same_lazily_and_built(rows: list[tuple[str, str]]) -> None:
    import tempfile

    messages: list[dict[str, Any]] = [{"role": r, "content": t} for r, t in rows]
    messages += [{"role": "user", "content": "last"}, {"role": "assistant", "content": "ok"}]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_openai_json(Path(tmp) / "s.json", messages, model="m")
        lazy, built = prepared(path), prepared(path)
        if lazy.plan.noop:
            return
        assert transcript_of(lazy.request) == built_transcript(built.request)
        assert offline_summary(lazy.request) == offline_summary(built.request)

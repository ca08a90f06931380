"""The one masker (issue 31 item 16): built on detect-secrets, it catches the
shapes of tests/fixtures/secrets/corpus.json and leaves its look-alikes alone;
and nothing the tool writes into a session (the anchor block) or sends to a
model (probe, revise) holds a corpus secret in clear.

The requests are read from a real HTTP server on 127.0.0.1 that records them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.retention import EDITOR_BLOCK_END, EDITOR_BLOCK_START
from kimi_compact_tui.secrets import MASK, mask_secrets
from tests.factories import write_openai_json
from tests.loopback_server import LoopbackServer, openai_sse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "secrets"
CORPUS = json.loads((FIXTURES / "corpus.json").read_text(encoding="utf-8"))
# Written after the masker, to measure it on text it was not built against
# (docs/BENCHMARKS.md gives that first measurement); its misses were then fixed.
LATER = json.loads((FIXTURES / "heldout.json").read_text(encoding="utf-8"))
SECRETS: list[dict[str, str]] = CORPUS["secrets"]
LOOKALIKES: list[dict[str, str]] = CORPUS["lookalikes"]
ALL_SECRETS = SECRETS + LATER["secrets"]
ALL_LOOKALIKES = LOOKALIKES + LATER["lookalikes"]
LOSSY = "<current_focus>\nWorking on the deploy scripts.\n</current_focus>\n"


def test_the_corpus_is_large_enough():
    assert len(SECRETS) >= 40 and len(LOOKALIKES) >= 40
    assert len({s["shape"] for s in SECRETS}) == len(SECRETS)


@pytest.mark.parametrize("case", ALL_SECRETS, ids=[s["shape"] for s in ALL_SECRETS])
def test_every_secret_shape_is_masked(case):
    masked = mask_secrets(case["text"])
    assert case["secret"] not in masked
    assert MASK in masked


@pytest.mark.parametrize("case", ALL_LOOKALIKES, ids=[s["shape"] for s in ALL_LOOKALIKES])
def test_no_lookalike_is_masked(case):
    assert mask_secrets(case["text"]) == case["text"]


def test_the_issues_shapes_in_particular():
    """The shapes issue 31 item 16 found reaching the anchor block and the requests."""
    for text, secret in (
        ("stripe key sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + "Xy12", "4eC39HqLyjWDarjtT1zdp7dc"),
        ("mysqladmin --password hunter2x status", "hunter2x"),
        ("mysql -uroot -pHunter22 db", "Hunter22"),
        ("//registry.npmjs.org/:_authToken=npm_" + "a" * 36, "npm_" + "a" * 36),
        ("https://oauth2:glpat-" + "b" * 20 + "@gitlab.com/x.git", "glpat-" + "b" * 20),
        ("https://hooks.slack.com/services/T0001/B0002/" + "c" * 24, "c" * 24),
        ("hf_" + "d" * 34, "hf_" + "d" * 34),
    ):
        assert secret not in mask_secrets(text), text


def test_the_name_before_a_value_is_kept():
    assert mask_secrets("DB_PASS=abcdefgh123") == f"DB_PASS={MASK}"
    assert (
        mask_secrets(f"already {MASK} and password={MASK}") == f"already {MASK} and password={MASK}"
    )


def test_a_long_text_is_masked_where_the_secret_is():
    """A secret on line 5,000 of a long text is found (detectors run around
    their needles, not on a prefix)."""
    filler = "\n".join(f"line {i}: nothing to see in src/app_{i}.py" for i in range(10_000))
    secret = SECRETS[0]
    text = f"{filler}\n{secret['text']}\n{filler}"
    masked = mask_secrets(text)
    assert secret["secret"] not in masked
    assert masked.count("\n") == text.count("\n")


# ----------------------------------------------------------------------------- end to end


def corpus_session(tmp_path: Path) -> Path:
    """A session whose user requests and assistant replies hold every corpus
    secret (two of them in the kept tail)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for case in SECRETS:
        messages.append({"role": "user", "content": f"Please run this: {case['text']}"})
        messages.append({"role": "assistant", "content": f"Ran it: {case['text']}"})
    messages.append({"role": "user", "content": f"Last: {SECRETS[1]['text']}"})
    messages.append({"role": "assistant", "content": f"Done with {SECRETS[2]['text']}"})
    return write_openai_json(tmp_path / "session.json", messages, model="m")


def texts_sent(server: LoopbackServer) -> list[str]:
    out: list[str] = []
    for recorded in server.requests:
        for message in recorded.json["messages"]:
            content = message["content"]
            if isinstance(content, str):
                out.append(content)
            else:
                out.extend(part["text"] for part in content if "text" in part)
    return out


def assert_no_secret(texts: list[str]) -> None:
    joined = "\n".join(texts)
    leaked = [case["shape"] for case in SECRETS if case["secret"] in joined]
    assert leaked == []
    assert MASK in joined


def remote(server: LoopbackServer) -> list[str]:
    return ["--provider", "openai", "--base-url", server.base_url, "--model", "m"]


def test_the_anchor_block_holds_no_corpus_secret(cli_main, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    session = corpus_session(tmp_path)
    with LoopbackServer(lifetime=60) as server:
        server.script([openai_sse([LOSSY])])
        result = cli_main(
            "compact", session, "--anchor", "--anchor-budget", "20000", *remote(server)
        )
        assert result.code == 0, result.stderr
    text = result.stdout
    block = text[text.index(EDITOR_BLOCK_START) : text.index(EDITOR_BLOCK_END)]
    assert block.count("- user requests: ") >= 40  # (nearly) every request is anchored
    assert_no_secret([block])


def test_the_probe_sends_no_corpus_secret(cli_main, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    session = corpus_session(tmp_path)
    summary = tmp_path / "summary.md"  # a model's summary that repeated three secrets
    summary.write_text(
        LOSSY + "\n".join(case["text"] for case in SECRETS[3:6]) + "\n", encoding="utf-8"
    )
    with LoopbackServer(lifetime=60) as server:
        server.script([openai_sse(["I do not know."]) for _ in range(10)])
        result = cli_main("probe", session, "--summary", summary, *remote(server))
        assert result.code == 0, result.stderr
        assert server.requests
        assert_no_secret(texts_sent(server))


def test_a_revision_sends_no_corpus_secret(cli_main, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    session = corpus_session(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text(LOSSY + SECRETS[7]["text"] + "\n", encoding="utf-8")
    feedback = f"keep {SECRETS[8]['text']}"
    with LoopbackServer(lifetime=60) as server:
        server.script([openai_sse([LOSSY])])
        result = cli_main(
            "compact", session, *remote(server), "--from-summary", summary,
            "--revise", feedback,
        )  # fmt: skip
        assert result.code == 0, result.stderr
        (recorded,) = server.requests
        sent = texts_sent(server)
    assert_no_secret(sent)
    roles = [m["role"] for m in recorded.json["messages"]]
    assert roles[-2:] == ["assistant", "user"]  # the round: the summary, then the feedback

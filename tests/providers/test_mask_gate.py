"""The batch masker's prefilter (``secrets._gated``) against the masker
without it (``secrets._masked``: every detector over the whole text): the
prefilter is only a shortcut, it never leaves a secret in clear (issue 31's
speed work on the compaction request).

The texts: the labelled corpus (tests/fixtures/secrets/), the shapes at the
prefilter's edges, and long benign tool outputs of a generated session with
corpus secrets mixed in at random places.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.generate import generate_messages
from kimi_compact_tui import secrets
from kimi_compact_tui.compaction.request import (
    PLAIN_ROLES,
    build_compaction_input_parts,
    build_kimi_compaction_request_session,
    message_header,
)
from kimi_compact_tui.model import Message
from kimi_compact_tui.secrets import mask_texts
from tests.providers.test_masking_written_and_sent import NEAR_THE_PREFILTER
from tests.providers.test_secrets_masker import ALL_LOOKALIKES, ALL_SECRETS

ROOT = Path(__file__).resolve().parents[2]

#: Around the value the ``assigned`` rule takes: what follows six characters
#: decides between a value (masked) and a call or an attribute (left alone).
VALUE_EDGES = [
    "token = parse(380)",
    "token = parser(380)",
    "token = parser[0]",
    "token = parser.get()",
    "token = parser_x(1)",
    "token = abcdef.x",
    "token = abcdef-(",
    "token = abcdef/(",
    "token = abcdef:x(",
    "token = abcdefé(",
    "token = abcdeé(",
    "token = abcdefı",
    "token = abcdef\u00a0(",
    "token = abcdef\x1c(",
    "token = 'abcdef'(",
    "token = 'abcdef'.strip()",
    'token = "abcdefgh".strip()',
    'token = "abcdefgh"',
    "token = abcdef",
    "token = abcde",
    "token = 'abcde'",
    "token = 12345678",
    "token = 1234567a",
    "api_key: sk_abcdef)",
    "api_key: abcdef)",
    "api_key: abcdef]",
    "api_key: abcdef[",
    "api_key: abcdef;",
    "password=hunter22.",
    "password=hunter22.x",
    "password=hunter2(",
    "password=hunter22!(",
    "password := (hunter22)",
    "secret => [abcdefgh]",
    "cred = {abcdefgh}",
    "auth = <abcdefgh>",
    "contraseña = abcdefgh(",
    "contraseña = abcdefgh",
    "\u212aey = abcdefgh(",
    "\u212aey = abcdefgh",
    "pwd: 好好好好好好(",
    "pwd: 好好好好好好",
    "//r.example.com/:_authToken=npm_ab,cd(x)",
    "//r.example.com/:_authToken= npm_abc",
    "//r.example.com/:_authToken=npm_a",
]

#: Shapes no long run lets through, each of which one alternative of a pass
#: alone lets through to its detector (the assigned rule would mask them
#: otherwise or not at all).
SHAPE_EDGES = [
    "AccountKey=" + "abcdefghijklmnopqrs/" * 4 + "abcdefgh(",
    "run --api-key abc123xyz now",
    "run --db-auth-token abc123xyz now",
    "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----",
    "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-MAC: abc",
]


def ungated(texts: list[str]) -> list[str]:
    return [secrets._masked(t) for t in texts]


def assert_superset(texts: list[str]) -> None:
    """Every text a detector changes is let through, and to the ``assigned``
    rule alone only when that rule alone masks it the same."""
    full, assigned = secrets._gated(texts)
    only = [d for d in secrets._detectors() if d[0] == "assigned"]
    for i, text in enumerate(texts):
        masked = secrets._masked(text)
        if masked == text or i in full:
            continue
        assert i in assigned, text
        assert secrets._masked(text, only) == masked, text


def corpus_texts() -> list[str]:
    return [c["text"] for c in ALL_SECRETS + ALL_LOOKALIKES] + NEAR_THE_PREFILTER + SHAPE_EDGES


def test_the_gate_lets_through_every_text_a_detector_changes():
    texts = corpus_texts() + VALUE_EDGES
    assert_superset(texts)
    assert mask_texts(texts) == ungated(texts)


def test_a_call_after_a_secret_name_is_no_value_and_skips_the_masker():
    """``token = parser(380)`` (a generated listing's line) holds no secret:
    the prefilter leaves it as it is, without running the masker."""
    calls = [t for t in VALUE_EDGES if secrets._masked(t) == t and "(" in t]
    assert "token = parser(380)" in calls
    full, assigned = secrets._gated(["token = parser(380)", "token = parser.get()"])
    assert full == set() and assigned == set()
    values = [t for t in VALUE_EDGES if secrets._masked(t) != t]
    assert len(values) >= 15
    full, assigned = secrets._gated(values)
    assert full | assigned == set(range(len(values)))


def tool_outputs(n: int) -> list[str]:
    out = []
    for message in generate_messages(n):
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if message["role"] == "tool" and len(text) > 200:
            out.append(text)
    return out


def test_corpus_secrets_inside_long_tool_outputs_are_masked_as_without_the_gate():
    """Random mixtures: a corpus secret or look-alike (or a prefilter edge)
    put at a random place of a long benign tool output, a line of its own or
    inside a line; outputs joined past the size where the masker goes line by
    line too."""
    rng = random.Random(31)
    outputs = tool_outputs(600)
    assert len(outputs) >= 100
    pieces = corpus_texts() + VALUE_EDGES
    texts = []
    for _ in range(400):
        text = rng.choice(outputs)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(text) + 1)
            piece = rng.choice(pieces)
            glue = rng.choice(["", " ", "\n", "\t", "=", '"'])
            text = text[:at] + glue + piece + glue + text[at:]
        texts.append(text)
    texts += ["\n".join(rng.sample(texts, 12)) for _ in range(10)]  # past LINES_FROM
    assert sum(len(t) >= secrets.LINES_FROM for t in texts) >= 10
    masked = mask_texts(texts)
    assert masked == ungated(texts)
    assert sum(m != t for m, t in zip(masked, texts, strict=True)) >= 300
    assert_superset(texts[:150])
    plain = tool_outputs(300)
    assert mask_texts(plain) == plain == ungated(plain)


#: Pieces of every shape a pass of the prefilter tries, and of what breaks them.
GATE_FRAGMENTS = [
    "key", "KEY", "Key", "pass", "PASS", "pwd", "secret", "token", "Token", "cred", "auth",
    "contrase", "ña", "aws", "AWS", "mysql", "MariaDB", "login", "docker ", "bearer ", "Basic ",
    "-", "--", "_", "sk", "rk", "pk", "sq0csp", "ssh", "private ", "PRIVATE ", "PuTTY-User-",
    "-File", "Account", "api", "-api-", "_auth", "AKIA", "A3T", "AKC", "AP", "ASIA", "eyJ",
    "xox", "b", "://", "https://", "hooks.slack.com", "/services/T1/B2/", "@", "user:", "=",
    ":", "=>", ":=", " ", "\t", "\n", '"', "'", "]", "(", "[", ".", ",", "é", "好", "\u00a0",
    "\x1c", "\u212a", "\u017f", "\u0130", "\u0131", "abcdef", "ABCDEF0123", "0123456789",
    "abcdefghijklmnopqrstuvw", "x(1)", "[masked]", "true", "your", "$HOME", "self.",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(GATE_FRAGMENTS), max_size=24).map("".join), max_size=6))
def test_the_gate_never_keeps_a_text_the_masker_would_change(texts):
    assert_superset(texts)
    assert mask_texts(texts) == ungated(texts)


def test_a_pass_finds_the_same_by_its_anchor_byte_as_by_the_regex_engine(monkeypatch):
    """A pass looks for its rare byte, then for the whole pattern once that
    byte turns out common: whichever way, and wherever it switches, the
    prefilter lets the same texts through. One shape a text, between texts
    full of the anchor bytes (so that the switch comes at many places)."""
    rng = random.Random(7)
    outputs = tool_outputs(300)
    texts = []
    for filler, shape in (("A ", "AKC"), ("J ", "eyJ"), ("x ", "xox"), ("- ", "sk-")):
        for _ in range(8):  # a budget runs out on the shape's anchor byte, for one budget
            texts += [filler * 3, shape]
    for filler, shape in (("w ", "aws"), ("w ", "pwd = abcdefgh")):
        for _ in range(8):
            texts += [filler * 3, shape]
    texts += ["AAKC", "xxox"]  # the byte twice in a row: the second starts the shape
    for piece in corpus_texts() + VALUE_EDGES:
        text = rng.choice(outputs)
        at = rng.randrange(len(text) + 1)
        texts.append(text[:at] + " " + piece + " " + text[at:])
        texts.append(piece)  # at the very start of a text
        texts.append(rng.choice("AJxw-") + piece)  # right after an anchor byte
        texts.append("-x-w-A-J- " * rng.randrange(1, 20))
    texts += ["AAKC xxoxo eyeyJ awaws pwpwd --sk-abc " * n for n in range(1, 30)]
    blob_size = sum(len(t.encode()) + 1 for t in texts)
    seen = set()
    for budget in (blob_size, 3000, 1000, 300, *range(100)):
        monkeypatch.setattr(
            secrets, "ANCHOR_SPAN", blob_size // budget if budget else blob_size + 1
        )
        full, assigned = secrets._gated(texts)
        seen.add((frozenset(full), frozenset(assigned)))
    assert len(seen) == 1
    full, assigned = seen.pop()
    assert len(full) >= 100 and assigned
    assert mask_texts(texts) == ungated(texts)


def test_the_request_leaves_out_of_masking_only_headers_that_hold_nothing_to_mask():
    """The compaction request masks every part but the headers of the usual
    roles, which hold a number and fixed words: masking all of them gives the
    same parts; a header of another role is masked like any text."""
    for role in PLAIN_ROLES:
        headers = [message_header(n, role) for n in (1, 7, 99_999, 10**15)]
        assert ungated(headers) == headers
        assert secrets._gated(headers) == (set(), set())
    messages = [Message.make("system", "You are a coding agent.")]
    for case in ALL_SECRETS[:30] + ALL_LOOKALIKES[:10]:
        messages += [
            Message.make("user", f"Please run: {case['text']}"),
            Message.make("assistant", [{"type": "text", "text": case["text"]}]),
            Message.make("tool", f"$ {case['text']}\nok"),
        ]
    messages.append(Message.make("api_key=hunter22xyz", "a role that holds a secret"))
    messages.append(Message.make(None, "no role"))
    indices = range(len(messages))
    plain = build_compaction_input_parts(messages, indices, "Summarize.", "keep token=abcdefgh1")
    request = build_kimi_compaction_request_session(
        messages, indices, "Summarize.", "keep token=abcdefgh1", mask=True
    )
    sent = [p["text"] for p in request[1]["content"]]
    assert sent == mask_texts(plain) == ungated(plain) != plain
    assert "hunter22xyz" not in "".join(sent) and "abcdefgh1" not in sent[-1]


@pytest.mark.parametrize(
    "secret",
    [
        "XOXB-1234567890-abcdefghij0123",
        "Xoxp-1234567890-9876543210-zzzzzzzzzz",
        "HTTPS://HOOKS.SLACK.COM/services/T0123ABCD/B0123ABCD/abcdefghijklmnop0123",
    ],
)
def test_a_slack_token_in_another_case_is_masked_as_its_detector_matches_it(secret):
    """detect-secrets' Slack patterns ignore case: the masker's needles and the
    prefilter's pass must too (an upper-case token was left in clear)."""
    from kimi_compact_tui.secrets import detector_patterns

    slack = [p for name, p in detector_patterns() if name == "Slack Token"]
    assert any(p.search(secret) for p in slack)  # the maintained detector flags it
    text = f"the bot posts with {secret} now"
    assert secret not in secrets.mask_secrets(text)
    assert secret not in secrets.mask_texts([text])[0]

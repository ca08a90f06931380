"""The fast JSON decoder decodes exactly what Python's lenient json decodes, or
refuses (and the json path decides as before)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kimi_compact_tui.formats import fastjson
from kimi_compact_tui.formats.fastjson import MISS, decode_fast
from kimi_compact_tui.formats.kimi_cli import plugin as kimi
from kimi_compact_tui.formats.loader import load

LENIENT = json.JSONDecoder(strict=False)

pytestmark = pytest.mark.skipif(not fastjson.AVAILABLE, reason="msgspec is not installed")

# Lines where the two decoders could differ: each is either decoded to the very
# value json gives, or refused.
EDGE_LINES = [
    b'{"role":"user","content":"tab\tand\x01raw"}',
    b'{"role":"user","content":"\\ud800 lone"}',
    b'{"role":"user","content":"\\udc00\\ud800"}',
    b'{"role":"user","content":"x","n":123456789012345678901234567890}',
    b'{"role":"user","content":"x","n":-9223372036854775809}',
    b'{"role":"user","content":"x","n":18446744073709551616}',
    b'{"role":"user","content":"x","n":NaN}',
    b'{"role":"user","content":"x","n":-Infinity}',
    b'{"role":"user","content":"x","n":1e400}',
    b'{"role":"user","content":"x","n":-0.0}',
    b'{"role":"user","content":"x","n":0.1000000000000000055511151231257827}',
    b'{"role":"user","content":"a","role":"assistant"}',
    b'{"content":"a","role":"user","content":"b"}',
    b'{"role":"user","content":"\xff bad utf-8"}',
    b'{"role":"user","content":"\xed\xa0\x80 encoded surrogate"}',
    b'{"role":"user","content":"\xc0\x80 overlong"}',
    b'{"role":"user","content":"\\u0000 escaped nul"}',
    b'{"role":"user","content":"\xe2\x80\xa8 \xef\xbb\xbf"}',
    b'{"role":"user","content":"x"}\r',
    b'  {"role":"user","content":"x"}  ',
    b"\x1c\x1d",
    b"\xe3\x80\x80",
    b"   ",
    b"[" * 3000 + b"]" * 3000,
    b'{"role":"user","content":' + b"[" * 990 + b"]" * 990 + b"}",
    b'{"role":"user","content":"x"}x',
    b'"just a string"',
    b"null",
    b"12",
]


def _same(raw: bytes) -> None:
    fast = decode_fast(raw)
    if fast is MISS:
        return
    text = raw.decode("utf-8")  # accepted bytes are valid UTF-8
    assert repr(fast) == repr(LENIENT.decode(text))


@pytest.mark.parametrize("raw", EDGE_LINES, ids=range(len(EDGE_LINES)))
def test_edge_lines_exact_or_refused(raw: bytes) -> None:
    _same(raw)


def test_refuses_what_json_reads_differently() -> None:
    for raw in EDGE_LINES[:3] + EDGE_LINES[6:9] + EDGE_LINES[13:16]:
        assert decode_fast(raw) is MISS, raw


def _snapshot(path: Path) -> tuple:
    session = load(path).session
    entries = kimi.state_of(session, kimi.KimiState).entries or []
    return (
        repr([m.data for m in session.messages]),
        session.warnings,
        [(type(e).__name__, bytes(e) if isinstance(e, bytes) else None) for e in entries],
        session.meta,
        session.format.dump(session),
    )


def _refuse_all(raw: bytes) -> Any:
    raise ValueError("no fast decoder")


def test_session_with_every_edge_line_loads_as_without_the_fast_decoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "context.jsonl"
    head = b'{"role": "_system_prompt", "content": "sys"}\n{"role": "_checkpoint", "id": 0}\n'
    data = head + b"\n".join(EDGE_LINES) + b'\n{"role": "_usage", "token_count": 7}\n'
    path.write_bytes(data)
    fast = _snapshot(path)
    monkeypatch.setattr(kimi, "decoder", lambda: (_refuse_all, (ValueError,)))
    slow = _snapshot(path)  # every line the json way, and the slow checks
    assert fast == slow
    assert fast[4] == data  # the byte-exact round trip
    assert len(fast[1]) >= 8  # the skipped and replaced lines are warned about


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, st.booleans(), st.binary(max_size=3), st.integers(min_value=0))
def test_random_documents_exact_or_refused(
    value: object, ascii_only: bool, noise: bytes, where: int
) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    _same(raw)
    cut = where % (len(raw) + 1)
    _same(raw[:cut] + noise + raw[cut:])  # damaged: still exact, or refused


@pytest.mark.parametrize("raw", EDGE_LINES, ids=range(len(EDGE_LINES)))
def test_openai_jsonl_line_loads_or_fails_as_without_the_fast_decoder(
    raw: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kimi_compact_tui.errors import SessionFormatError
    from kimi_compact_tui.formats import openai

    path = tmp_path / "chat.jsonl"
    path.write_bytes(b'{"role":"user","content":"first"}\n' + raw + b"\n")

    def outcome() -> tuple:
        try:
            session = load(path).session
        except SessionFormatError as exc:
            return ("error", str(exc))
        return ("ok", repr([m.data for m in session.messages]), session.format.dump(session))

    fast = outcome()
    monkeypatch.setattr(openai, "decode_fast", lambda raw: MISS)
    assert fast == outcome()


message_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["type", "text", "function", "name", "x"]), inner, max_size=3
    ),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(max_size=3).filter(lambda r: not r.startswith("_")),
    st.dictionaries(
        st.sampled_from(["content", "tool_calls", "tool_call_id", "name", "partial", "extra"]),
        message_values,
        max_size=4,
    ),
)
def test_the_fast_message_check_accepts_only_what_check_message_accepts(role, fields):
    """The loader's one-pass check (fastjson.plain_message) says yes only to a
    message check_message accepts, and changes no value."""
    import copy

    from kimi_compact_tui.errors import SessionFormatError
    from kimi_compact_tui.formats.fastjson import plain_message
    from kimi_compact_tui.formats.validate import check_message

    record = {"role": role, **fields}
    before = copy.deepcopy(record)
    fast = plain_message(record)
    assert record == before
    try:
        check_message(before, "x")
        slow = True
    except SessionFormatError:
        slow = False
    assert fast == slow

"""Property tests (hypothesis) for the compaction engine and the formats.

For random sessions — known and unknown roles, string and list contents with
text/think/media/unknown parts, tool calls, leading system runs, any
``max_preserved_messages`` and an optional ``up_to``:

* the request carries only text: a system string and one user message whose
  parts are all ``{"type": "text", "text": str}``; no think part, no media,
  no tool-call structure, and the body has no ``tools``/``tool_choice``;
* ``leading_system_indices``, ``compact_indices`` and ``preserved_indices``
  are disjoint and cover the session exactly;
* the compacted session keeps the leading system messages and the kept tail
  verbatim (same data, and for kimi-cli the same source lines);
* load → save is the identity (bytes for kimi-cli and OpenAI ``.jsonl``
  written the usual way, the JSON value for OpenAI ``.json``).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import dump_session, load_session, parse_bytes, registry
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.kimi_cli.plugin import dump_message, dump_special
from kimi_compact_tui.job import build_compacted_session, prepare_compaction
from kimi_compact_tui.model import Message

SETTINGS = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ----------------------------------------------------------------------------- strategies

# Any text a session file can hold: no lone surrogates (not encodable as UTF-8).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
SHORT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
UNKNOWN_ROLE = SHORT.filter(
    lambda r: r not in ("system", "user", "assistant", "tool") and not r.startswith("_")
)
ROLE = st.one_of(st.sampled_from(["system", "user", "assistant", "tool"]), UNKNOWN_ROLE)
JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(2**31), 2**31), TEXT)
JSON_VALUE = st.recursive(
    JSON_SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(SHORT, inner, max_size=3)),
    max_leaves=6,
)

TEXT_PART = st.builds(lambda t: {"type": "text", "text": t}, TEXT)
THINK_PART = st.builds(
    lambda t, enc: {"type": "think", "think": t, **({"encrypted": enc} if enc else {})},
    TEXT,
    st.one_of(st.none(), SHORT),
)
MEDIA_PART = st.builds(
    lambda kind, url: {"type": kind, kind: {"url": url}},
    st.sampled_from(["image_url", "audio_url", "video_url"]),
    TEXT,
)
UNKNOWN_PART = st.builds(
    lambda kind, extra: {"type": kind, **extra},
    SHORT.filter(lambda t: t not in ("text", "think", "image_url", "audio_url", "video_url")),
    st.dictionaries(SHORT.filter(lambda k: k != "type"), JSON_VALUE, max_size=2),
)
PART = st.one_of(TEXT_PART, THINK_PART, MEDIA_PART, UNKNOWN_PART)
CONTENT = st.one_of(st.none(), TEXT, st.lists(PART, max_size=4))

TOOL_CALL = st.builds(
    lambda cid, name, args: {
        "type": "function",
        "id": cid,
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
    },
    SHORT,
    SHORT,
    st.dictionaries(SHORT, JSON_SCALAR, max_size=3),
)


@st.composite
def message_data(draw: Any, role: Any = ROLE) -> dict[str, Any]:
    data: dict[str, Any] = {"role": draw(role), "content": draw(CONTENT)}
    if draw(st.booleans()):
        data["tool_calls"] = draw(st.lists(TOOL_CALL, min_size=1, max_size=2))
    if draw(st.integers(0, 3)) == 0:
        data["tool_call_id"] = draw(SHORT)
    if draw(st.integers(0, 5)) == 0:
        data["name"] = draw(SHORT)
    if draw(st.integers(0, 5)) == 0:
        data["partial"] = draw(st.booleans())
    if draw(st.integers(0, 6)) == 0:
        data["x_unknown_field"] = draw(JSON_VALUE)
    return data


@st.composite
def sessions(draw: Any, max_size: int = 14) -> list[dict[str, Any]]:
    leading = draw(st.lists(message_data(st.just("system")), max_size=3))
    rest = draw(st.lists(message_data(), max_size=max_size))
    return leading + rest


def make_session(datas: list[dict[str, Any]], fmt: str = "openai-json") -> Session:
    return registry.get(fmt).from_messages([Message(d) for d in datas], Path("s.json"))


PROMPT_TEXT = "Summarize the conversation."
PROMPT = PromptSource(
    source="inline",
    path=None,
    text=PROMPT_TEXT,
    sha256=hashlib.sha256(PROMPT_TEXT.encode()).hexdigest(),
)


def config_with(max_preserved: int, overrides: dict[str, Any] | None = None) -> AppConfig:
    config = AppConfig()
    config.raw["compaction"]["max_preserved_messages"] = max_preserved
    if overrides:
        config.raw["compaction"]["settings_overrides"] = overrides
    return config


@st.composite
def plan_inputs(draw: Any) -> tuple[list[dict[str, Any]], int, int | None]:
    # Biased towards plans that compact something (and so build a request):
    # user/assistant-heavy sessions and small tails, with the edge cases still drawn.
    if draw(st.booleans()):
        role = st.one_of(st.sampled_from(["user", "assistant"]), ROLE)
        leading = draw(st.lists(message_data(st.just("system")), max_size=2))
        datas = leading + draw(st.lists(message_data(role), min_size=3, max_size=14))
    else:
        datas = draw(sessions())
    max_preserved = draw(st.one_of(st.integers(1, 2), st.integers(-1, 6)))
    up_to = None
    if datas and draw(st.booleans()):
        up_to = draw(st.integers(1, len(datas)))
    return datas, max_preserved, up_to


# ----------------------------------------------------------------------------- the request


def _assert_text_only_request(body: dict[str, Any]) -> None:
    for key in ("tools", "tool_choice", "functions", "function_call", "parallel_tool_calls"):
        assert key not in body
    messages = body["messages"]
    assert len(messages) == 2
    system, user = messages
    assert set(system) == {"role", "content"}
    assert system["role"] == "system" and isinstance(system["content"], str)
    assert set(user) == {"role", "content"}
    assert user["role"] == "user"
    assert isinstance(user["content"], list) and user["content"]
    for part in user["content"]:
        assert set(part) == {"type", "text"}, part
        assert part["type"] == "text"
        assert isinstance(part["text"], str)


@SETTINGS
@given(
    plan_inputs(),
    st.dictionaries(
        st.sampled_from(["tools", "tool_choice", "temperature", "functions", "max_tokens"]),
        JSON_VALUE,
        max_size=3,
    ),
    TEXT,
)
def test_request_is_text_only(inputs: Any, overrides: dict[str, Any], instruction: str) -> None:
    datas, max_preserved, up_to = inputs
    session = make_session(datas)
    prep = prepare_compaction(
        session,
        config_with(max_preserved, overrides),
        up_to=up_to,
        custom_instruction=instruction,
        prompt=PROMPT,
    )
    if prep.plan.noop:
        assert prep.request is None
        return
    request = prep.request
    assert request is not None
    _assert_text_only_request(request.body)
    assert request.body["messages"] == request.messages
    # The transcript is built from the sent messages' text parts only: no
    # think text, media URL or tool-call argument that is not also a text part
    # can appear as a part of its own.
    allowed = {p for i in prep.plan.request_indices for p in session.messages[i].text_parts()}
    for part in request.messages[1]["content"][:-1]:
        text = part["text"]
        assert text in allowed or text.startswith("## Message ")


# ----------------------------------------------------------------------------- the plan


@SETTINGS
@given(plan_inputs())
def test_regions_are_disjoint_and_cover_the_session(inputs: Any) -> None:
    datas, max_preserved, up_to = inputs
    messages = [Message(d) for d in datas]
    plan = make_plan(messages, max_preserved_messages=max_preserved, up_to=up_to)
    leading = set(plan.leading_system_indices)
    compact = set(plan.compact_indices)
    preserved = set(plan.preserved_indices)
    assert not compact & preserved
    assert not leading & compact
    assert not leading & preserved
    assert leading | compact | preserved == set(range(len(messages)))
    # The leading run is exactly the leading system messages.
    assert all(messages[i].role == "system" for i in leading)
    if len(leading) < len(messages):
        assert messages[len(leading)].role != "system"
    # The request is leading + compact, in order.
    assert list(plan.request_indices) == ([] if plan.noop else sorted(leading) + sorted(compact))
    if up_to is not None and not plan.noop:
        assert max(compact) == up_to - 1


# ----------------------------------------------------------------------------- compacted session


@SETTINGS
@given(plan_inputs(), TEXT, st.sampled_from(["kimi", "openai-json", "openai-jsonl"]))
def test_compacted_session_keeps_leading_and_tail_verbatim(
    inputs: Any, summary: str, fmt: str
) -> None:
    datas, max_preserved, up_to = inputs
    source = [json.loads(json.dumps(d)) for d in datas]  # an independent copy to compare with
    session = make_session(datas, fmt)
    if fmt == "kimi":
        # As read from a file: each message keeps its source line.
        session.messages = [Message(d, dump_message(d)) for d in datas]
    plan = make_plan(session.messages, max_preserved_messages=max_preserved, up_to=up_to)
    assume(not plan.noop)
    result = build_compacted_session(session, plan, summary)
    lead = plan.leading
    tail = list(plan.preserved_indices)
    assert len(result.messages) == lead + 1 + len(tail)
    for i in range(lead):
        assert result.messages[i].data == source[i]
    summary_message = result.messages[lead]
    assert summary_message.role == "user"
    assert summary in summary_message.text()
    for offset, i in enumerate(tail):
        kept = result.messages[lead + 1 + offset]
        assert kept.data == source[i]
        if fmt == "kimi":
            assert kept.raw == session.messages[i].raw
    # The input session is untouched.
    assert [m.data for m in session.messages] == source
    # And the written file holds the kept lines unchanged (kimi-cli).
    if fmt == "kimi":
        lines = dump_session(result).decode("utf-8").split("\n")
        for i in [*range(lead), *tail]:
            assert session.messages[i].raw in lines


# ----------------------------------------------------------------------------- load → save


@st.composite
def kimi_file(draw: Any) -> str:
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append(dump_special({"role": "_system_prompt", "content": draw(TEXT)}))
    lines.append(dump_special({"role": "_checkpoint", "id": 0}))
    checkpoint = 0
    for data in draw(sessions(max_size=10)):
        choice = draw(st.integers(0, 5))
        if choice == 0:
            checkpoint += 1
            lines.append(dump_special({"role": "_checkpoint", "id": checkpoint}))
        elif choice == 1:
            lines.append(
                dump_special({"role": "_usage", "token_count": draw(st.integers(0, 10**7))})
            )
        lines.append(dump_message(data))
    text = "\n".join(lines)
    if draw(st.booleans()):
        text += "\n"
    return text


@SETTINGS
@given(kimi_file())
def test_kimi_load_save_is_byte_identity(text: str) -> None:
    session = parse_bytes(text.encode(), Path("context.jsonl"))
    assert session.format.name == "kimi"
    assert dump_session(session) == text.encode("utf-8")


@SETTINGS
@given(sessions(), st.one_of(st.none(), st.dictionaries(SHORT, JSON_VALUE, max_size=3)))
def test_openai_json_load_save_is_value_identity(datas: list[dict], container: Any) -> None:
    if container is None:
        value: Any = datas
    else:
        value = {k: v for k, v in container.items() if k != "messages"}
        value["messages"] = datas
    text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    session = parse_bytes(text.encode(), Path("chat.json"))
    assert session.format.name == "openai-json"
    assert json.loads(dump_session(session).decode("utf-8")) == value


@SETTINGS
@given(sessions(), st.booleans())
def test_openai_jsonl_load_save_is_byte_identity(datas: list[dict], ascii_only: bool) -> None:
    assume(datas)
    text = "".join(json.dumps(d, ensure_ascii=ascii_only) + "\n" for d in datas)
    session = parse_bytes(text.encode(), Path("chat.jsonl"), registry.get("openai-jsonl"))
    assert dump_session(session) == text.encode("utf-8")


@settings(max_examples=20, deadline=None)
@given(kimi_file())
def test_kimi_file_round_trip_on_disk(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "context.jsonl"
        path.write_bytes(text.encode("utf-8"))
        session = load_session(path)
        assert dump_session(session) == path.read_bytes()


# ----------------------------------------------------------------------------- token estimate


def _reference_estimate(text: str) -> int:
    """The token rule, written the slow and obvious way."""
    non_ascii = sum(1 for ch in text if ord(ch) > 127)
    punct = sum(1 for ch in text if ch in '{}[]":,')
    plain = len(text) - non_ascii - punct
    return 0 if not text else non_ascii + (punct + 1) // 2 + (plain + 3) // 4


@SETTINGS
@given(st.text(max_size=200))  # lone surrogates included: JSON can carry them
def test_estimate_tokens_matches_the_rule(text: str) -> None:
    from kimi_compact_tui.compaction.tokens import estimate_tokens

    assert estimate_tokens(text) == _reference_estimate(text)

"""The one-pass scan gives the very figures of the separate walks it replaced:
each message's tokens, the request range's text counts, the tool exchanges."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.generate import generate_messages
from kimi_compact_tui.compaction.pairs import find_splits, nearest_safe_up_to
from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.compaction.request import estimate_request_tokens
from kimi_compact_tui.compaction.scan import scan_messages
from kimi_compact_tui.compaction.tokens import message_tokens, token_counts
from kimi_compact_tui.model import Message


def naive_exchanges(messages: list[Message]) -> list[tuple[str, int, tuple[int, ...]]]:
    """Straight from the definition: a call id with its first call message and
    every result answering it, in order of first result."""
    order: list[str] = []
    out = []
    for m in messages:
        cid = m.data.get("tool_call_id")
        if isinstance(cid, str) and cid not in order:
            order.append(cid)
    for cid in order:
        callers = [
            i
            for i, m in enumerate(messages)
            if isinstance(m.data.get("tool_calls"), list)
            and any(isinstance(c, dict) and c.get("id") == cid for c in m.data["tool_calls"])
        ]
        if callers:
            results = tuple(i for i, m in enumerate(messages) if m.data.get("tool_call_id") == cid)
            out.append((cid, callers[0], results))
    return out


def check(messages: list[Message], end: int) -> None:
    scan = scan_messages(messages, end)
    assert scan.tokens == [message_tokens(m) for m in messages]
    a = b = c = 0
    for m in messages[:end]:
        for text in m.text_parts():
            x, y, z = token_counts(text)
            a, b, c = a + x, b + y, c + z
    assert scan.text_counts == (a, b, c)
    assert scan.exchanges == naive_exchanges(messages)
    assert scan_messages(messages, end, tokens=False).exchanges == scan.exchanges
    # What plan shows from the scan is what the separate walks give.
    plan = make_plan(messages, max_preserved_messages=2)
    assert find_splits(messages, plan, scan.exchanges) == find_splits(messages, plan)
    if not plan.noop:
        args = (messages, plan.boundary, plan.leading)
        assert nearest_safe_up_to(*args, scan.exchanges) == nearest_safe_up_to(*args)
        stop = plan.request_indices.stop
        counts = scan_messages(messages, stop).text_counts
        rng = plan.request_indices
        assert estimate_request_tokens(messages, rng, "p", "", counts) == (
            estimate_request_tokens(messages, rng, "p", "")
        )


def test_generated_sessions_both_shapes() -> None:
    for shape in ("default", "dense"):
        messages = [Message(d) for d in generate_messages(600, shape=shape)]
        check(messages, 400)


ids = st.sampled_from(["a", "b", "c", 1, None])
part = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=8)}),
    st.fixed_dictionaries({"type": st.just("think"), "think": st.text(max_size=8)}),
    st.fixed_dictionaries({"type": st.just("image_url")}),
    st.integers(),
)
call = st.one_of(
    st.fixed_dictionaries(
        {
            "id": ids,
            "function": st.fixed_dictionaries(
                {"name": st.text(max_size=4), "arguments": st.text(max_size=8)}
            ),
        }
    ),
    st.just("not a dict"),
)
message_data: Any = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "tool", "system"]),
        "content": st.one_of(st.none(), st.text(max_size=10), st.lists(part, max_size=3)),
    },
    optional={
        "tool_calls": st.one_of(st.lists(call, max_size=3), st.just({})),
        "tool_call_id": ids,
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(message_data, max_size=12), st.integers(min_value=0, max_value=12))
def test_random_sessions(datas: list[dict[str, Any]], end: int) -> None:
    check([Message(d) for d in datas], end)

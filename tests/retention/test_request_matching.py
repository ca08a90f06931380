"""Request matching that means it (issue 31, finding 2): a request is kept by
one contiguous passage that carries it (verbatim, with small edits, or a
faithful paraphrase), never by its words scattered over the summary or a
prefix that drops its point; "kept in the tail" uses the same rule on the one
message that holds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.retention import KEPT_IN_TAIL, retention_report
from kimi_compact_tui.retention.matching import Haystack, find
from kimi_compact_tui.specifics import Item, kinds


def request(text: str) -> Item:
    return Item(kinds.USER_REQUESTS, "0", text, [0], weight=10)


def kept(text: str, summary: str) -> bool:
    return find(request(text), Haystack(summary))


# --- too strict today -------------------------------------------------------------


def test_a_request_with_typos_is_kept_by_its_corrected_copy():
    ask = "change the defailt timeout of the compart command to 90 seconds"
    assert kept(ask, "- Change the default timeout of the compact command to 90 seconds.")


def test_a_faithful_paraphrase_is_kept():
    ask = "Please don't produce code yet, design the solution first."
    assert kept(
        ask, "The user asked us not to produce any code yet and to design a solution first."
    )


def test_a_chinese_paraphrase_is_kept():
    ask = "帮我把订单服务部署到测试环境，注意不要动生产数据库。"
    assert kept(ask, "用户要求：将订单服务部署到测试环境，并且不要改动生产数据库。")


# --- too lenient today ------------------------------------------------------------


def test_scattered_words_do_not_keep_a_request():
    ask = "don't produce code, design solution first"
    summary = (
        "First, the code review found no design problems; the solution was to produce a "
        "table of results."
    )
    assert not kept(ask, summary)


def test_a_prefix_stub_that_drops_the_point_does_not_keep_a_request():
    ask = (
        "Set up the staging deploy scripts for the orders service. It is important "
        "not to commit changes until the final step."
    )
    assert not kept(ask, "- Set up the staging deploy scri… (see above)")
    assert not kept(ask, "Set up the staging deploy scripts for the orders service. It is…")
    # a cut that keeps the point is kept
    assert kept(
        ask, "Set up staging deploy scripts for orders; not to commit changes until the final step."
    )


def test_a_changed_number_or_a_flipped_negation_is_not_the_request():
    assert not kept("raise the timeout from 30s to 90s", "Raised the timeout from 30s to 60s.")
    assert not kept("Run the migration on staging", "Do not run the migration on staging.")
    assert not kept("不要动生产数据库", "动了生产数据库")


def test_words_spread_over_a_long_summary_do_not_keep_a_request():
    ask = "create document in /specs folder"
    summary = (
        "The /specs folder was listed. "
        + "Other work went on. " * 30
        + "We will create a document later."
    )
    assert not kept(ask, summary)


# --- the tail ---------------------------------------------------------------------


def test_kept_in_the_tail_means_within_one_message_of_it(tmp_path: Path):
    ask = "create document in /specs folder"
    messages = [
        {"role": "user", "content": ask},
        {"role": "assistant", "content": "Working on it."},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "I read the /specs folder listing."},
        {"role": "user", "content": "Where should the new document go?"},
        {"role": "assistant", "content": "I will create it next."},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    session = load_session(path)
    plan = make_plan(session.messages, up_to=2)
    report = retention_report(session, plan, "The user wants documentation.")
    requests = report.categories[kinds.USER_REQUESTS]
    assert [i.text for i in requests.missing] == [ask]
    # the same words inside one tail message do keep it there
    messages[3]["content"] = "Plan: create the document in the /specs folder."
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    session = load_session(path)
    report = retention_report(session, make_plan(session.messages, up_to=2), "Docs.")
    assert [(i.text, w) for i, w in report.categories[kinds.USER_REQUESTS].kept] == [
        (ask, KEPT_IN_TAIL)
    ]


@pytest.mark.parametrize(
    "summary",
    [
        "The user asked to create document in /specs folder.",
        "Create a document in the /specs folder (the user's current request).",
    ],
)
def test_the_request_in_one_passage_is_kept(summary):
    assert kept("create document in /specs folder", summary)


def test_a_pasted_log_as_a_request_is_matched_in_bounded_time():
    """A request of thousands of distinct terms (a pasted log) is scanned window
    by window, not aligned as one string (which took seconds). This checks the
    verdicts; the time is the benchmark's (benchmarks/retention_bench.py)."""
    import random

    rng = random.Random(3)
    words = [f"w{i}x" for i in range(3000)]
    log = " ".join(rng.choice(words) for _ in range(20000))
    other = " ".join(rng.choice(words) for _ in range(10000))
    assert not kept(log, other)
    assert kept(log, "Pasted by the user: " + log[:-40])

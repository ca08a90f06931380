"""The request-matching rule on its labelled sets (benchmarks/labelled/):
precision and recall of "kept" stay at 0.95 or more, in English and Chinese."""

from __future__ import annotations

import pytest

from benchmarks.matching_bench import SETS, TARGET, bench_matching, language, pairs


@pytest.fixture(scope="module")
def result():
    return bench_matching()


def test_the_sets_are_large_and_cover_both_languages_and_every_shape():
    every = [p for name in SETS for p in pairs(name)]
    assert len(pairs(SETS[0])) >= 60
    assert {language(p) for p in every} >= {"en", "zh"}
    assert sum(language(p) == "zh" for p in every) >= 20
    shapes = {p["shape"].removeprefix("zh-").removeprefix("ja-") for p in every}
    assert shapes >= {"verbatim", "typo", "paraphrase", "stub", "scattered", "negation", "number"}
    kept = sum(p["kept"] for p in every)
    assert 0.3 * len(every) < kept < 0.7 * len(every)  # both classes, neither trivial


@pytest.mark.parametrize("name", [*SETS, "all", "all/en", "all/zh", "all, inside a long summary"])
def test_precision_and_recall_stay_above_the_target(result, name):
    r = result[name]
    assert r["precision"] >= TARGET, r["errors"]
    assert r["recall"] >= TARGET, r["errors"]


def test_the_aligned_search_gives_the_same_verdicts(monkeypatch):
    """A request whose terms occur often in the text is located by rapidfuzz's
    alignment of term strings first (the fast path on long summaries); on the
    labelled pairs it must agree with checking every window."""
    from kimi_compact_tui.retention import passage

    every = [p for name in SETS for p in pairs(name)]
    direct = [
        passage.kept(passage.Request.of(p["request"]), passage.Passages([p["passage"]]))
        for p in every
    ]
    monkeypatch.setattr(passage, "FEW_HITS", -1)  # always align first
    aligned = [
        passage.kept(passage.Request.of(p["request"]), passage.Passages([p["passage"]]))
        for p in every
    ]
    assert aligned == direct
    assert direct == [bool(p["kept"]) for p in every]

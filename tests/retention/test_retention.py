"""Retention report on hand-labelled fixtures: the bundled samples, a Chinese
deployment transcript and an English cache refactor, each with a summary that
keeps some specifics and drops others. The report must name exactly the
dropped ones (no false "missing") and say where the kept ones are."""

from __future__ import annotations

from pathlib import Path

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.retention import CATEGORIES, KEPT_IN_TAIL, retention_report
from kimi_compact_tui.specifics import message_haystack

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "retention_fixtures"

# fixture name -> (session, {category: [(missing item, [1-based messages])]})
LABELS = {
    "kimi-debugging": (
        ROOT / "sample_sessions" / "kimi-debugging-session",
        {
            # the summary tells the first and the last request in its own words
            "user_requests": [
                (
                    "The nightly job crashes when it imports the March statements. "
                    "Can you find out why? The repo is ledger-service.",
                    [1],
                ),
                ("The job still shows this in the dashboard, what does it mean?", [21]),
            ],
            "file_paths": [("tests/test_parse.py", [14])],  # named by the call, not its output
            "commands": [("pytest -q tests/test_parse.py", [14]), ("pytest -q", [18])],
            "errors": [
                ("NameError: name 'InvalidOperation' is not defined", [15]),
                ("failing test tests/test_parse.py::test_euro_amount", [15]),
            ],
            "numbers": [("1 failed", [15]), ("6 passed", [15]), ("0.21s", [15])],  # as read
        },
    ),
    "openai-retry": (
        ROOT / "sample_sessions" / "openai-retry-refactor.json",
        {
            "user_requests": [
                (
                    "Our retry helper retries on every error, including 400s. "
                    "Can you make it only retry on 429 and 5xx?",
                    [3],
                ),
                # "Looks right. What about Retry-After?" (message 7) is kept: the
                # summary says it in one passage, in other words
            ],
            "file_paths": [("src/http/retry.ts", [4])],
            "numbers": [("30 s", [8])],
        },
    ),
    "cjk-orders": (
        ROOT / "sample_sessions" / "cjk-orders-store.jsonl",
        {
            "user_requests": [
                (
                    "帮我写一个基于 sqlite 的订单存储模块，要求：建表、插入订单、按客户汇总金额。"
                    "金额用分（整数）存储。",
                    [2],
                )
            ],
            "file_paths": [("orders_store.py", [3])],
            "identifiers": [("add_order", [3])],
        },
    ),
    "cjk-deploy": (
        FIXTURES / "cjk-deploy.jsonl",
        {
            "user_requests": [
                (
                    "帮我把 orders 服务部署到测试环境。注意：不要动生产数据库。"
                    "端口必须用 8081，因为 8080 被网关占用了。",
                    [2],
                ),
                # message 12's request is kept: current_focus says it again, reworded
            ],
            "instructions": [("注意：不要动生产数据库。", [2])],
            "commands": [
                ("kubectl logs deploy/orders -n staging --tail=50", [9]),
                ("cp deploy/staging.yaml deploy/staging.yaml.bak", [13]),
            ],
            "numbers": [("v1.4.2", [4]), ("5000 ms", [10])],
            "urls": [("http://localhost:8080/healthz", [4])],
        },
    ),
    "lru-eviction": (
        FIXTURES / "lru-eviction.jsonl",
        {
            "commands": [("git diff HEAD~1 -- src/cache/lru.py", [3])],
            "file_paths": [("src/cache/lru.py", [3, 5])],
            "identifiers": [("evict_oldest", [5])],
            "numbers": [("1.3 us", [9])],
        },
    ),
}

# fixture name -> {category: (kept, total)} for every category (0/0 included)
FIGURES = {
    "kimi-debugging": dict(
        user_requests=(1, 3), instructions=(0, 0), open_tasks=(0, 0), edited_files=(1, 1),
        commands=(1, 3), errors=(1, 3), file_paths=(2, 3), identifiers=(2, 2), numbers=(2, 5),
        urls=(0, 0),
    ),
    "cjk-deploy": dict(
        user_requests=(1, 2), instructions=(2, 3), open_tasks=(0, 0), edited_files=(0, 0),
        commands=(2, 4), errors=(1, 1), file_paths=(1, 1), identifiers=(0, 0), numbers=(3, 5),
        urls=(1, 2),
    ),
}  # fmt: skip


def report_for(name: str):
    session_path, _ = LABELS[name]
    session = load_session(session_path)
    plan = make_plan(session.messages)
    summary = (FIXTURES / f"{name}.summary.md").read_text(encoding="utf-8")
    return session, plan, summary, retention_report(session, plan, summary)


@pytest.mark.parametrize("name", sorted(LABELS))
def test_report_names_exactly_the_dropped_items(name):
    _, expected = LABELS[name]
    _, _, _, report = report_for(name)
    got = {
        cat: [(m["item"], m["messages"]) for m in c["missing"]]
        for cat, c in report.to_json()["categories"].items()
        if c["missing"]
    }
    assert got == {cat: items for cat, items in expected.items()}


@pytest.mark.parametrize("name", sorted(LABELS))
def test_missing_items_are_really_absent_from_summary_and_tail(name):
    session, plan, summary, report = report_for(name)
    kept_text = "\n".join(
        message_haystack(session.messages[i])
        for i in [*plan.leading_system_indices, *plan.preserved_indices]
    )
    for item in report.missing_items():
        assert item.text.lower() not in summary.lower()
        assert item.text.lower() not in kept_text.lower()


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figures_per_category_and_empty_categories_are_zero_of_zero(name):
    _, _, _, report = report_for(name)
    data = report.to_json()["categories"]
    assert list(data) == list(CATEGORIES)
    assert {c: (v["kept"], v["total"]) for c, v in data.items()} == FIGURES[name]
    for value in data.values():
        if value["total"] == 0:
            assert value["percent"] is None  # 0/0 is not 100%


def test_kept_items_say_summary_or_tail():
    _, _, _, report = report_for("kimi-debugging")
    where = {
        (cat, k["item"]): k["where"]
        for cat, c in report.to_json()["categories"].items()
        for k in c["kept_items"]
    }
    # ledger/importer.py is only in tool output (message 24 is in the tail): not named
    assert ("file_paths", "ledger/importer.py") not in where
    assert where[("file_paths", "ledger/parse.py")] == "summary"
    assert where[("commands", "python -m ledger.importer fixtures/2026-03.csv")] == "summary"
    assert report.categories["file_paths"].to_json()["kept_in_tail"] == 0
    _, _, _, cjk = report_for("cjk-orders")
    kept = dict((i.text, w) for i, w in cjk.categories["identifiers"].kept)
    assert kept == {
        "connect": "summary",
        "migrate": "summary",
        "totals_by_customer": KEPT_IN_TAIL,
    }


def test_path_forms_count_as_one_file():
    session = load_session(FIXTURES / "lru-eviction.jsonl")
    plan = make_plan(session.messages)
    report = retention_report(session, plan, "")
    paths = {i.text: [n + 1 for n in i.messages] for i in report.missing_items()
             if i.category == "file_paths"}  # fmt: skip
    # ./src/cache/lru.py and src/cache/lru.py (message 4's diff is a tool's output);
    # the absolute path under the stated working directory becomes relative.
    assert paths == {"src/cache/lru.py": [3, 5], "src/cache/policy.py": [5]}
    assert report.work_root == "/srv/app/cache-service/"
    for form in (
        "./src/cache/lru.py",
        "b/src/cache/lru.py",
        "/srv/app/cache-service/src/cache/lru.py",
    ):
        kept = retention_report(session, plan, f"Edited `{form}`.").categories["file_paths"]
        assert [i.text for i, _ in kept.kept] == ["src/cache/lru.py"], form


def test_matching_tolerates_case_quoting_and_units():
    session = load_session(FIXTURES / "cjk-deploy.jsonl")
    plan = make_plan(session.messages)
    summary = (
        "Ran 'KUBECTL logs deploy/orders -n staging --tail=50'; timeout after 5 000 ms; 5000ms."
    )
    report = retention_report(session, plan, summary)
    kept_cmds = [i.text for i, _ in report.categories["commands"].kept]
    assert "kubectl logs deploy/orders -n staging --tail=50" in kept_cmds
    kept_nums = [i.text for i, _ in report.categories["numbers"].kept]
    assert "5000 ms" in kept_nums


def test_the_range_itself_keeps_every_item():
    """Every matcher finds what its extractor took from the same text."""
    for name in LABELS:
        session, plan, _, _ = report_for(name)
        text = "\n".join(message_haystack(session.messages[i]) for i in plan.compact_indices)
        report = retention_report(session, plan, text)
        assert report.missing_items() == [], name
        assert report.kept == report.total > 0


def test_empty_summary_loses_all_but_the_tail():
    session, plan, _, _ = report_for("openai-retry")
    report = retention_report(session, plan, "")
    assert report.kept == 0
    assert report.total == 6


def test_noop_plan_reports_nothing():
    session = load_session(ROOT / "sample_sessions" / "openai-retry-refactor.json")
    plan = make_plan(session.messages, up_to=1)
    report = retention_report(session, plan, "anything")
    assert plan.noop and report.total == 0 and report.compacted is None
    assert all(c.percent is None for c in report.categories.values())


def test_engine_does_not_import_textual():
    import sys

    from tests import procs

    code = (
        "import sys\n"
        "import kimi_compact_tui.retention, kimi_compact_tui.commands.retention\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = procs.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_paraphrased_commands_and_bare_urls_count_as_kept():
    session = load_session(FIXTURES / "lru-eviction.jsonl")
    plan = make_plan(session.messages)
    summary = "Looked at git diff HEAD~1 for src/cache/lru.py; docs at docs.example.org/cache/v2/eviction/."
    report = retention_report(session, plan, summary)
    assert [i.text for i, _ in report.categories["commands"].kept] == [
        "git diff HEAD~1 -- src/cache/lru.py"  # every word but the flag "--"
    ]
    assert report.categories["urls"].kept_count == 1
    # a word of the command alone is not the command
    report = retention_report(session, plan, "ran python on the bench")
    assert report.categories["commands"].kept_count == 0


def test_offline_provider_baseline_on_the_samples():
    """The offline summary is scored like any other (figures in docs/retention.md).
    Its text changes with the offline provider, so this checks what must hold
    for any summary: the figures add up and every missing item is absent."""
    from benchmarks.retention_bench import SAMPLE_NAMES, offline_baseline, offline_summary_for

    figures = offline_baseline()
    assert list(figures) == list(SAMPLE_NAMES)
    for name in SAMPLE_NAMES:
        session = load_session(ROOT / "sample_sessions" / name)
        plan = make_plan(session.messages)
        summary = offline_summary_for(session, plan)
        assert "<current_focus>" in summary
        report = retention_report(session, plan, summary)
        assert figures[name]["categories"] == {k: list(v) for k, v in report.figures().items()}
        assert figures[name]["total"] == report.total > 0
        kept_text = "\n".join(
            message_haystack(session.messages[i])
            for i in [*plan.leading_system_indices, *plan.preserved_indices]
        ).lower()
        for item in report.missing_items():
            assert item.text.lower() not in summary.lower(), (name, item.text)
            assert item.text.lower() not in kept_text, (name, item.text)


def test_sentences_match_on_shared_words_with_a_light_stem():
    from kimi_compact_tui.retention.matching import Haystack, content_tokens, stem

    words = ("means", "skipped", "still", "passes", "put's", "changes", "change", "class")
    assert [stem(w) for w in words] == [
        "mean", "skip", "still", "pass", "put", "change", "change", "class",
    ]  # fmt: skip
    session = load_session(FIXTURES / "lru-eviction.jsonl")
    plan = make_plan(session.messages)
    # "Don't add new dependencies; use cachetools 5.3.2 only if it is already installed."
    # is in the kept tail (message 10): the range's own requirement is message 2's.
    kept = retention_report(session, plan, "The cache API was upgraded; put() stays.")
    assert kept.categories["instructions"].kept_count == 0  # 1 of 5 words: put
    kept = retention_report(session, plan, "LRUCache.put: public signature changes are forbidden")
    assert kept.categories["instructions"].kept_count == 1  # every content word
    assert content_tokens("不要动生产数据库") >= {"不要", "数据", "据库"}
    assert Haystack("用户说不要动生产数据库").tokens >= content_tokens("不要动生产数据库")


def test_technology_names_and_url_paths_are_not_files():
    from kimi_compact_tui.specifics.patterns import paths_in

    text = "Node.js and Vue.js; src/Main.js, app.js; https://x.org/a/b.py; git@host:repo/x.py"
    assert paths_in(text) == ["src/Main.js", "app.js"]


def test_command_words_must_be_in_order_and_close_together():
    session = load_session(FIXTURES / "cjk-deploy.jsonl")
    plan = make_plan(session.messages)

    def kept(summary: str) -> list[str]:
        report = retention_report(session, plan, summary)
        return sorted(i.text for i, _ in report.categories["commands"].kept)

    assert kept("ran make deploy with ENV=staging") == ["make deploy ENV=staging"]
    assert kept("ENV=staging; then make deploy") == []  # out of order
    far = "make the build first. " + "x " * 60 + "then deploy to ENV=staging"
    assert kept(far) == []  # scattered over the text
    assert kept("makefile deploys ENV=staging") == []  # whole words only


def test_requirement_markers_in_chinese_and_english():
    from kimi_compact_tui.model import Message
    from kimi_compact_tui.specifics import extract

    messages = [
        Message.make("user", "这个特别慢。一定要先备份。不能改接口。区别在哪里？"),
        Message.make("user", "It is slow. You must keep the API. Never cache it. Why?"),
        Message.make("assistant", "You must not see this: assistants state no requirements."),
    ]
    items = extract(messages, range(3)).items
    assert [i.text for i in items["instructions"].values()] == [
        "一定要先备份。", "不能改接口。", "You must keep the API.", "Never cache it.",
    ]  # fmt: skip

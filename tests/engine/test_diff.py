"""Message-level diff: engine and the `diff` command."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.compaction.tokens import message_tokens
from kimi_compact_tui.diff import diff_messages, diff_sessions, format_diff
from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.job import build_compacted_session
from kimi_compact_tui.model import Message
from tests.factories import run_cli, write_openai_json

ROOT = Path(__file__).resolve().parents[2]
PY = str(ROOT / ".venv" / "bin" / "python")
if not Path(PY).exists():
    PY = sys.executable


def msgs(*specs: str) -> list[Message]:
    out = []
    for spec in specs:
        role, _, text = spec.partition(":")
        out.append(Message.make(role, text))
    return out


def session(messages: list[Message], fmt: str = "openai-json") -> Session:
    return registry.get(fmt).from_messages(messages)


def kinds(rows) -> list[str]:
    return [r.kind for r in rows]


def test_compaction_shape_rows_and_tokens():
    before = msgs("system:S", "user:a", "assistant:b", "user:c", "assistant:d", "user:e")
    s = session(before)
    after = build_compacted_session(s, make_plan(before), "THE SUMMARY")
    d = diff_sessions(s, after)
    assert kinds(d.rows) == ["kept", "removed", "removed", "removed", "added", "kept", "kept"]
    assert [(r.before_index, r.after_index) for r in d.rows] == [
        (0, 0),
        (1, None),
        (2, None),
        (3, None),
        (None, 1),
        (4, 2),
        (5, 3),
    ]
    assert d.counts == {"kept": 3, "removed": 3, "added": 1}
    assert d.tokens_before == sum(message_tokens(m) for m in before)
    assert d.tokens_after == sum(message_tokens(m) for m in after.messages)
    assert d.rows[4].message.text().endswith("THE SUMMARY")
    assert d.rows[4].tokens == message_tokens(after.messages[1])


def test_kept_means_equal_data_key_order_ignored():
    a = [Message({"role": "user", "content": "x", "name": "n"})]
    b = [Message({"name": "n", "content": "x", "role": "user"})]
    assert kinds(diff_messages(a, b)) == ["kept"]
    c = [Message({"role": "user", "content": "x", "name": "m"})]
    assert kinds(diff_messages(a, c)) == ["removed", "added"]


def test_identical_and_empty():
    m = msgs("user:a", "assistant:b")
    assert diff_sessions(session(m), session(list(m))).identical
    d = diff_sessions(session([]), session(m))
    assert kinds(d.rows) == ["added", "added"]
    d = diff_sessions(session(m), session([]))
    assert kinds(d.rows) == ["removed", "removed"]


def lcs_len(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@pytest.mark.parametrize("seed", range(25))
def test_arbitrary_pairs_are_a_valid_in_order_matching(seed):
    rng = random.Random(seed)
    alphabet = "abcde"
    a_txt = [rng.choice(alphabet) for _ in range(rng.randint(0, 30))]
    b_txt = [rng.choice(alphabet) for _ in range(rng.randint(0, 30))]
    a = [Message.make("user", t) for t in a_txt]
    b = [Message.make("user", t) for t in b_txt]
    rows = diff_messages(a, b)
    # Every message appears exactly once on its side, in order.
    assert [r.before_index for r in rows if r.before_index is not None] == list(range(len(a)))
    assert [r.after_index for r in rows if r.after_index is not None] == list(range(len(b)))
    for r in rows:
        if r.kind == "kept":
            assert a_txt[r.before_index] == b_txt[r.after_index]
        elif r.kind == "removed":
            assert r.after_index is None
        else:
            assert r.before_index is None
    kept = sum(r.kind == "kept" for r in rows)
    # SequenceMatcher is not a guaranteed LCS, but never keeps more than one.
    assert kept <= lcs_len(a_txt, b_txt)
    if a_txt == b_txt:
        assert kept == len(a_txt)


def test_large_compaction_with_duplicate_messages():
    n = 100_000
    before = [Message.make("user" if i % 2 else "assistant", "ok") for i in range(n)]
    s = session(before)
    after = build_compacted_session(s, make_plan(before), "sum")
    d = diff_sessions(s, after)
    assert d.counts == {"kept": 2, "removed": n - 2, "added": 1}
    assert d.rows[-1].kind == "kept" and d.rows[-1].before_index == n - 1


def test_format_diff_lines_and_context():
    before = msgs("user:hello\nworld", "assistant:\x1b[31mred", "user:c", "assistant:d")
    s = session(before)
    after = build_compacted_session(s, make_plan(before), "S")
    text = format_diff(diff_sessions(s, after))
    lines = text.splitlines()
    assert lines[2].startswith("- 1 .  user")
    # one line, line breaks marked as everywhere else (kimi_compact_tui.previews)
    assert lines[2].endswith("hello ⏎ world")
    assert "\x1b" not in text and "␛" in text
    assert lines[4].startswith("+ . 1  user")
    assert lines[5].startswith("= 3 2  user")
    assert lines[-1].startswith("2 kept, 2 removed, 1 added")
    short = format_diff(diff_sessions(s, after), context=0)
    assert "2 kept messages" in short and "= 3 2" not in short


def test_cli_diff_text_and_json(tmp_path):
    a = write_openai_json(
        tmp_path / "a.json",
        [
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": "two"},
            {"role": "user", "content": "three"},
        ],
    )
    b = write_openai_json(
        tmp_path / "b.json",
        [{"role": "user", "content": "summary"}, {"role": "user", "content": "three"}],
    )
    res = run_cli("diff", str(a), str(b))
    assert res.returncode == 0, res.stderr
    assert "- 1 .  user" in res.stdout and "+ . 1  user" in res.stdout
    assert "= 3 2  user" in res.stdout
    res = run_cli("diff", str(a), str(b), "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["counts"] == {"kept": 1, "removed": 2, "added": 1}
    assert [r["kind"] for r in data["rows"]] == ["removed", "removed", "added", "kept"]
    assert data["before"]["messages"] == 3 and data["after"]["messages"] == 2
    assert data["before"]["tokens"] > 0


def test_cli_diff_bad_input_is_one_line_exit_2(tmp_path):
    good = write_openai_json(tmp_path / "a.json", [{"role": "user", "content": "x"}])
    bad = tmp_path / "bad.json"
    bad.write_text("[{", encoding="utf-8")
    for args in ((str(tmp_path / "missing.json"), str(good)), (str(good), str(bad))):
        res = run_cli("diff", *args)
        assert res.returncode == 2
        assert "Traceback" not in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
        assert res.stderr.startswith("kimi-compact-tui: error: ")

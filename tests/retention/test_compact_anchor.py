"""`compact --anchor`: the summary gets the one marked block
of exact references it lost, by weight, within ``--anchor-budget``; requests,
instructions and open tasks are shortened, never dropped; secrets are masked;
without --output/--in-place the final summary is printed and nothing written."""

from __future__ import annotations

import json

from kimi_compact_tui.compaction.tokens import estimate_tokens
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.retention import EDITOR_BLOCK_END, EDITOR_BLOCK_START
from kimi_compact_tui.secrets import mask_secrets
from tests.factories.claude_code import TASK, planned_session
from tests.loopback_server import openai_sse

LOSSY = "<current_focus>\nWorking on the history command.\n</current_focus>\n"


def remote(loopback) -> list[str]:
    return ["--provider", "openai", "--base-url", loopback.base_url, "--model", "m"]


def test_anchor_prints_the_final_summary_and_writes_nothing(cli_main, loopback, tmp_path):
    path = planned_session().write(tmp_path)
    before = path.read_bytes()
    loopback.script([openai_sse([LOSSY])])
    result = cli_main("compact", path, "--anchor", *remote(loopback))
    assert result.code == 0, result.stderr
    assert path.read_bytes() == before and "nothing written" in result.stderr
    text = result.stdout
    assert text.startswith(LOSSY.rstrip("\n"))
    assert text.count("Working on the history command") == 1  # printed once (it was twice)
    block = text[text.index(EDITOR_BLOCK_START) : text.index(EDITOR_BLOCK_END)]
    lines = block.splitlines()[1:]
    # by weight: the requests (with their status), the rule, the open tasks, the file
    assert lines[:2] == [
        f"- user requests: {TASK} (message 4; answered)",
        "- user requests: ok, go on (message 14; answered)",
    ]
    # the rule is written once: inside the request it was stated in
    assert sum("Always keep history.jsonl append-only." in x for x in lines) == 1
    assert "- open tasks: Write tests for --since (message 15; in_progress)" in lines
    assert "- open tasks: Update the README (message 15; pending)" in lines
    assert "- edited files: src/history.py (message 9)" in lines
    # and retention of that summary: nothing of these categories lost
    summary = tmp_path / "anchored.md"
    summary.write_text(text, encoding="utf-8")
    scored = cli_main("retention", path, "--summary", summary, "--json")
    categories = json.loads(scored.stdout)["retention"]["categories"]
    for name in ("user_requests", "instructions", "open_tasks", "edited_files"):
        assert categories[name]["missing"] == [] and categories[name]["total"] > 0, name


def test_a_small_budget_shortens_requests_and_says_what_did_not_fit(cli_main, loopback, tmp_path):
    path = planned_session().write(tmp_path)
    loopback.script([openai_sse([LOSSY])])
    result = cli_main("compact", path, "--anchor", "--anchor-budget", "120", *remote(loopback))
    assert result.code == 0, result.stderr
    block = result.stdout[result.stdout.index(EDITOR_BLOCK_START) :]
    assert estimate_tokens(block.rstrip("\n")) <= 120  # a hard limit, markers included
    lines = block.splitlines()
    requests = [x for x in lines if x.startswith("- user requests: ")]
    assert len(requests) == 2 and "…" in requests[0]  # shortened before any is left out
    assert any(x.startswith("- open tasks: Update the README") for x in lines)
    assert "did not fit in the anchor budget" in result.stderr


def test_an_anchored_write_keeps_the_block_inside_the_summary_message(cli_main, loopback, tmp_path):
    path = planned_session().write(tmp_path)
    loopback.script([openai_sse([LOSSY])])
    result = cli_main("compact", path, "--anchor", "--in-place", "--yes", *remote(loopback))
    assert result.code == 0, result.stderr
    session = load_session(path)
    summary = next(m for m in session.messages if EDITOR_BLOCK_START in m.text())
    assert summary.role == "user" and TASK in summary.text()
    assert session.format.bookkeeping(summary) == "summary"  # never a request again


def test_secret_looking_strings_are_masked():
    text = (
        "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwx' "
        "OPENAI_API_KEY=sk-proj-0123456789abcdefghij token: ghp_0123456789abcdefghijklmn"
    )
    masked = mask_secrets(text)
    assert "abcdefghijklmnopqrstuvwx" not in masked and "sk-proj" not in masked
    assert "ghp_" not in masked and masked.count("[masked]") == 3
    assert mask_secrets("pytest -q tests/test_history.py") == "pytest -q tests/test_history.py"


def test_the_block_masks_what_the_probe_masks():
    """One masker for what is written and what is sent: these went into an anchored
    summary unmasked (the block had a weaker copy of the probe's rule)."""
    for secret, value in (
        ("MY_API_KEY=abcdef1234567890", "abcdef1234567890"),
        ('"token": "abc123def456ghi"', "abc123def456ghi"),
        ("https://bob:pw12345@host/x", "pw12345"),
        ("key AIza" + "A" * 35, "AIza" + "A" * 35),
    ):
        assert value not in mask_secrets(secret), secret


def test_a_later_compaction_keeps_the_earlier_blocks_items(cli_main, loopback, tmp_path):
    """The second compaction's range holds the first anchored summary: its block's
    items are specifics of that range (never the summary as a request), so a summary
    that loses them is anchored with them again."""
    path = planned_session().write(tmp_path)
    loopback.script([openai_sse([LOSSY])])
    first = cli_main("compact", path, "--anchor", "--in-place", "--yes", *remote(loopback))
    assert first.code == 0, first.stderr
    session = load_session(path)
    assert EDITOR_BLOCK_START in session.messages[0].text()  # message 1: the summary
    summary = tmp_path / "again.md"
    summary.write_text("<current_focus>\nstill on it\n</current_focus>\n", encoding="utf-8")
    # the range of a later compaction that holds the anchored summary (message 1)
    scored = cli_main("retention", path, "--up-to", "1", "--summary", summary, "--json")
    assert scored.code == 0, scored.stderr
    report = json.loads(scored.stdout)["retention"]["categories"]
    requests = [m["item"] for m in report["user_requests"]["missing"]]
    assert TASK in requests  # carried from the block, verbatim
    assert all(EDITOR_BLOCK_START not in r for r in requests)  # the summary is no request
    tasks = [(m["item"], m.get("status")) for m in report["open_tasks"]["missing"]]
    assert ("Write tests for --since", "in_progress") in tasks
    assert [m["item"] for m in report["edited_files"]["missing"]] == ["src/history.py"]

"""Every command's JSON carries a ``schema`` version, and its message numbers
follow one rule: the spec's own fields (``compact_indices``
and the other ``*_indices``) keep the spec's 0-based indices; every other
message number is the 1-based number the screen shows; a 0-based field is
named ``…_index`` or ``…_indices``, and nothing else is 0-based."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.providers.base import ProviderConfig, StreamResult
from tests.factories import conversation, tool_session, write_session

#: The spec's own 0-based fields (the plan's regions).
SPEC_INDICES = {
    "leading_system_indices",
    "request_indices",
    "compact_indices",
    "preserved_indices",
}
COMMANDS = ("plan", "preview", "compact", "retention", "diff", "restore", "list", "history")


def keys(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every (key, value) in a JSON value, at any depth, except inside the
    request body and the session's own message data (the agent's fields)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k, v
            if k not in ("body", "message"):
                yield from keys(v, f"{path}.{k}")
    elif isinstance(value, list):
        for item in value:
            yield from keys(item, path)


@pytest.fixture
def outputs(cli_main, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """The ``--json`` output of every command that has one, on a session whose
    boundary splits a tool call from its result (so every field is filled)."""
    session = write_session(tmp_path / "s", "openai-json", tool_session())
    summary = tmp_path / "summary.md"
    summary.write_text("the summary mentions nothing", encoding="utf-8")
    out = tmp_path / "out.json"
    runs = {
        "plan": ["plan", session, "--up-to", "3"],
        "preview": ["preview", session, "--up-to", "3"],
        "compact": ["compact", session, "--up-to", "3", "--provider", "offline", "-o", out],
        "retention": ["retention", session, "--up-to", "3", "--summary", summary],
    }
    got = {}
    for name, argv in runs.items():
        result = cli_main(*argv, "--json")
        assert result.code == 0, (name, result.stderr)
        got[name] = json.loads(result.stdout)
    result = cli_main("diff", session, out, "--json")
    assert result.code == 0, result.stderr
    got["diff"] = json.loads(result.stdout)
    # a write of ours, so restore has a point to list
    job = CompactionJob.load(session, AppConfig())
    draft = job.draft(job.prepare(up_to=4), StreamResult(status="complete", summary="S"))
    job.commit(draft, ProviderConfig())
    result = cli_main("restore", session, "--list", "--json")
    assert result.code == 0, result.stderr
    got["restore"] = json.loads(result.stdout)
    result = cli_main("list", "--json")
    assert result.code == 0, result.stderr
    got["list"] = json.loads(result.stdout)
    result = cli_main("history", session, "--json")  # the ledger: that write of ours
    assert result.code == 0, result.stderr
    got["history"] = json.loads(result.stdout)
    return got


#: Commands whose JSON needs a model to answer: their own tests check its schema
#: (tests/job/test_probe.py).
JSON_TESTED_ELSEWHERE = ("probe",)


def test_every_command_with_json_is_covered(cli_main):
    """Every command the CLI has (not a list of its own: a new --json command fails
    here until its JSON is checked)."""
    from kimi_compact_tui.cli import COMMAND_MODULES

    with_json = []
    for name in COMMAND_MODULES:
        result = cli_main(name, "--help")
        if re.search(r"^\s+--json\b", result.stdout, re.M):
            with_json.append(name)
    assert sorted(with_json) == sorted(COMMANDS + JSON_TESTED_ELSEWHERE)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_json_has_the_schema_version(outputs, command):
    from kimi_compact_tui.commands.jsonout import JSON_SCHEMA

    data = outputs[command]
    assert isinstance(data, dict)
    assert next(iter(data)) == "schema" and data["schema"] == JSON_SCHEMA
    assert isinstance(JSON_SCHEMA, int) and not isinstance(JSON_SCHEMA, bool)


@pytest.mark.parametrize("command", COMMANDS)
def test_only_the_spec_fields_are_0_based_indices(outputs, command):
    named = {k for k, _ in keys(outputs[command]) if re.search(r"_ind(ex|ices)$", k)}
    assert named <= SPEC_INDICES, named - SPEC_INDICES


def test_split_numbers_are_the_screens(outputs):
    (split,) = outputs["plan"]["tool_splits"]
    # message 3 calls c1, message 4 is its result (tool_session), as on the SPLIT line
    assert split["call_message"] == 3 and split["result_messages"] == [4]
    assert "message 3" in split["description"] and "message 4" in split["description"]
    assert split["last_compacted_message"] == outputs["plan"]["up_to"] == 3
    # the spec's own fields stay 0-based: message 1 is the system prompt, 2-3 compacted
    assert outputs["plan"]["leading_system_indices"] == [0]
    assert outputs["plan"]["compact_indices"] == [1, 2]


def test_diff_rows_number_messages_as_the_text_does(cli_main, tmp_path):
    a = write_session(tmp_path / "a", "openai-json", conversation(4, system=None))
    data = json.loads(a.read_text(encoding="utf-8"))
    b = tmp_path / "b.json"
    b.write_text(json.dumps([{"role": "user", "content": "summary"}, *data[2:]]), "utf-8")
    rows = json.loads(cli_main("diff", a, b, "--json").stdout)["rows"]
    text = cli_main("diff", a, b).stdout
    assert [(r["kind"], r["before_number"], r["after_number"]) for r in rows] == [
        ("removed", 1, None),
        ("removed", 2, None),
        ("added", None, 1),
        ("kept", 3, 2),
        ("kept", 4, 3),
    ]
    assert "= 3 2" in text and "= 4 3" in text


def test_compact_json_has_both_token_figures(outputs):
    data = outputs["compact"]
    assert data["tokens_before"] > 0 and data["tokens_after"] > 0
    assert data["grows"] == (data["tokens_after"] > data["tokens_before"])

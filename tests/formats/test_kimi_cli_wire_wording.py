"""A kimi-cli ``wire.jsonl`` is kimi-cli's UI event log,
not a history: the error says so and points to the ``context.jsonl`` beside
it, instead of calling it an unsupported Kimi Code journal. The shapes are
kimi-cli 1.51's (a ``metadata`` record with ``protocol_version`` only, then
``timestamp`` + ``message`` records; older logs start with the latter);
``tests/agents/test_kimi_cli_wire.py`` checks a log kimi-cli itself wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.factories import conversation, write_session


def event_log(folder: Path, *, metadata: bool = True) -> Path:
    """A wire.jsonl in kimi-cli's shape (json.dumps separators, as kimi-cli writes it)."""
    folder.mkdir(parents=True, exist_ok=True)
    records = [{"type": "metadata", "protocol_version": "1.10"}] if metadata else []
    records += [
        {"timestamp": 1796139331.09, "message": {"type": "TurnBegin",
                                                 "payload": {"user_input": "run echo"}}},
        {"timestamp": 1796139331.10, "message": {"type": "StepBegin", "payload": {"n": 1}}},
    ]  # fmt: skip
    path = folder / "wire.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def assert_event_log_error(result, wire: Path) -> str:
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    line = result.stderr
    assert str(wire) in line and "kimi-cli" in line and "event log" in line, line
    assert "not supported yet" not in line and "Kimi Code" not in line, line
    return line


@pytest.mark.parametrize("metadata", [True, False], ids=["1.51", "older"])
def test_a_kimi_cli_event_log_points_to_the_context_beside_it(cli_main, tmp_path, metadata):
    context = write_session(tmp_path, "kimi", conversation(4), "sess")
    wire = event_log(context.parent, metadata=metadata)
    line = assert_event_log_error(cli_main("plan", wire), wire)
    assert f"open {context}" in line, line


def test_with_no_context_beside_it_the_error_says_so(cli_main, tmp_path):
    wire = event_log(tmp_path / "lonely")
    line = assert_event_log_error(cli_main("plan", wire), wire)
    assert "no context.jsonl beside it" in line, line


def test_the_session_folder_still_opens_its_context(cli_main, tmp_path):
    context = write_session(tmp_path, "kimi", conversation(4), "sess")
    event_log(context.parent)
    result = cli_main("plan", context.parent, "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["session"] == str(context)

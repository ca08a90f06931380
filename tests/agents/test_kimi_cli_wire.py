"""The wire.jsonl that kimi-cli itself wrote is named as its event log, with
the context.jsonl beside it."""

from __future__ import annotations

from tests.factories import run_cli


def test_kimi_clis_own_wire_jsonl_points_to_its_context(kimi_cli_session_template):
    runner, sid = kimi_cli_session_template
    folder = runner.session_dir(sid)
    wire, context = folder / "wire.jsonl", folder / "context.jsonl"
    assert wire.is_file() and context.is_file()
    result = run_cli("plan", str(wire))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "kimi-cli" in lines[0] and "event log" in lines[0], lines[0]
    assert f"open {context}" in lines[0], lines[0]
    assert "not supported yet" not in lines[0] and "Kimi Code" not in lines[0], lines[0]

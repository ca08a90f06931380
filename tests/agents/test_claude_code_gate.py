"""The gate with the real Claude Code 2.1.197: its own compaction held for review.

Our CLI runs as a user runs it: ``hook install claude-code --manual`` writes our
``PreCompact`` hook into Claude Code's ``settings.json`` (beside a user's own hooks);
``claude -p --resume ID /compact`` then runs our hook, which holds the compaction
(exit 2 and our one line) and records a pending review; compacting the session with
this tool clears it and Claude Code resumes our summary; ``hook allow`` lets the next
``/compact`` through; ``hook uninstall`` gives the user's settings back byte for byte.
The hook and our CLI share one state folder (``XDG_STATE_HOME``), as they do for a
user whose agent and terminal run as the same person.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from tests.agents.claude_code import ClaudeCode, claude_code_installed, claude_template
from tests.agents.fake_anthropic import FakeAnthropic
from tests.agents.fake_model import FakeModel
from tests.agents.harness import require_agent, run_ours

pytestmark = pytest.mark.agents

SUMMARY = "FAKE SUMMARY: the user ran echo hello and echo world and asked two questions."
RESUME_PROMPT = "Where were we?"
HELD = "kimi-compact-tui held this manual compaction for review"

#: The user's own settings, with hooks of theirs (one on PreCompact itself).
USER_SETTINGS = (
    b'{\n  "theme": "dark",\n  "hooks": {\n'
    b'    "PreCompact": [\n'
    b'      {"matcher": "manual", "hooks": [{"type": "command", "command": '
    b'"echo user-pre-compact >> user-hook.log"}]}\n'
    b"    ],\n"
    b'    "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]\n'
    b"  }\n}\n"
)


class GatedClaude(ClaudeCode):
    """Claude Code whose hooks see the state folder our CLI uses."""

    def env(self) -> dict[str, str]:
        return dict(super().env(), XDG_STATE_HOME=str(self.root / "state-home"))


def ours(claude: ClaudeCode, *args: str) -> tuple[int, str, str]:
    env = {
        "XDG_STATE_HOME": str(claude.root / "state-home"),
        "CLAUDE_CONFIG_DIR": str(claude.state),
    }
    return run_ours(list(args), claude.root, env)


def status(claude: ClaudeCode) -> dict:
    code, out, err = ours(claude, "hook", "status", "--json")
    assert code == 0, err
    return json.loads(out)


def records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_bytes().split(b"\n") if x.strip()]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    require_agent(claude_code_installed(), "Claude Code")
    return claude_template(tmp_path_factory)


@pytest.fixture(scope="module")
def anthropic():
    with FakeAnthropic(summary="FAKE-CLAUDE-SUMMARY of the session", lifetime=900) as fa:
        yield fa


@pytest.fixture(scope="module")
def model():
    with FakeModel(summary=SUMMARY, lifetime=900) as fm:
        yield fm


@pytest.fixture
def claude(template, tmp_path, anthropic):
    runner, sid = template
    clone = runner.clone(tmp_path / "claude", anthropic)
    gated = GatedClaude(clone.root, anthropic, workdir=clone.workdir)
    (gated.state / "settings.json").write_bytes(USER_SETTINGS)
    return gated, sid


def test_a_held_compaction_is_reviewed_with_us_and_claude_resumes_our_summary(claude, model):
    claude, sid = claude
    settings = claude.state / "settings.json"
    code, out, err = ours(claude, "hook", "install", "claude-code", "--manual")
    assert code == 0, err
    assert settings.read_bytes() != USER_SETTINGS
    hooks = json.loads(settings.read_bytes())["hooks"]
    assert hooks["Stop"] == json.loads(USER_SETTINGS)["hooks"]["Stop"]
    assert hooks["PreCompact"][0] == json.loads(USER_SETTINGS)["hooks"]["PreCompact"][0]
    assert "hook run claude-code" in hooks["PreCompact"][1]["hooks"][0]["command"]
    assert "matcher" not in hooks["PreCompact"][1]  # --manual: every compaction
    transcript = claude.transcript(sid)
    before = transcript.read_bytes()

    run = claude.run("/compact", sid)
    assert not run.compaction_bodies(), "the compaction reached the model"
    grown = transcript.read_bytes()
    assert grown.startswith(before)
    new = [json.loads(x) for x in grown[len(before) :].split(b"\n") if x.strip()]
    assert not any(r.get("subtype") == "compact_boundary" for r in new)
    blocked = [
        json.dumps(r) for r in new if "Compaction blocked by PreCompact hook" in json.dumps(r)
    ]
    assert blocked and HELD in blocked[0], new
    assert f"kimi-compact-tui {transcript}" in blocked[0]
    assert (claude.workdir / "user-hook.log").read_text().strip() == "user-pre-compact"

    (pending,) = status(claude)["pending"]
    assert pending["agent"] == "claude-code" and pending["session"] == sid
    assert pending["transcript"] == str(transcript) and pending["trigger"] == "manual"
    assert isinstance(pending["tokens"], int) and pending["tokens"] > 0

    # the review: compacted with this tool, which clears the pending review
    code, out, err = ours(
        claude, "compact", str(transcript), "--in-place", "--yes", "--provider", "openai",
        "--base-url", model.base_url, "--model", model.model,
    )  # fmt: skip
    assert code == 0, err
    assert status(claude)["pending"] == []
    body = claude.resume(sid, RESUME_PROMPT)
    first = body["messages"][0]
    text = json.dumps(first["content"])
    assert json.dumps(build_compact_summary_text(SUMMARY))[1:-1] in text


def test_hook_allow_lets_the_next_compaction_through_once(claude):
    claude, sid = claude
    code, _, err = ours(claude, "hook", "install", "claude-code", "--manual")
    assert code == 0, err
    transcript = claude.transcript(sid)
    claude.run("/compact", sid)
    assert b"compact_boundary" not in transcript.read_bytes()
    code, out, err = ours(claude, "hook", "allow", sid[:8])
    assert code == 0, err
    assert sid in out
    run = claude.compact(sid)
    assert run.compaction_bodies(), "the allowed compaction did not reach the model"
    assert any(r.get("subtype") == "compact_boundary" for r in records(transcript))
    st = status(claude)
    assert st["pending"] == [] and st["allowed"] == []
    # once: the next one is held again
    size = transcript.stat().st_size
    claude.run("/compact", sid)
    assert HELD.encode() in transcript.read_bytes()[size:]
    assert [p["session"] for p in status(claude)["pending"]] == [sid]


def test_hook_uninstall_gives_the_users_settings_back_byte_for_byte(claude):
    claude, sid = claude
    settings = claude.state / "settings.json"
    for _ in range(2):  # idempotent
        code, _, err = ours(claude, "hook", "install", "claude-code")
        assert code == 0, err
    installed = settings.read_bytes()
    assert installed.count(b"hook run claude-code") == 1
    code, out, err = ours(claude, "hook", "uninstall", "claude-code")
    assert code == 0, err
    assert settings.read_bytes() == USER_SETTINGS
    assert list(claude.state.glob("settings.json.kimi-compact-tui-*.bak"))
    # and with an edit of the user's since the install: only ours goes
    code, _, err = ours(claude, "hook", "install", "claude-code")
    assert code == 0, err
    edited = json.loads(settings.read_bytes())
    edited["theme"] = "light"
    settings.write_text(json.dumps(edited, indent=2) + "\n")
    code, _, err = ours(claude, "hook", "uninstall", "claude-code")
    assert code == 0, err
    after = json.loads(settings.read_bytes())
    assert after["theme"] == "light"
    assert after["hooks"] == json.loads(USER_SETTINGS)["hooks"]

"""The gate with the real Codex 0.171.0: its automatic compaction stopped by our hook.

Codex compacts automatically offline when its auto-compaction limit is set very low
(``-c model_auto_compact_token_limit=50``): the resume of a session written by Codex
itself then asks it to compact before the turn. ``hook install codex`` writes our
``PreCompact`` hook into ``$CODEX_HOME/hooks.json`` and its trust entry into
``config.toml``; Codex runs it (so the hash is the one Codex computes), and our
``{"continue": false}`` stops the compaction: no request reaches the model, the
rollout has no ``compacted`` item, and the pending review is there. Without the trust
entry (``--no-trust``) Codex skips the hook silently and compacts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agents.codex_runner import Codex, codex_installed, shared_codex_template
from tests.agents.fake_model import FakeModel, text_turn
from tests.agents.fake_responses import FakeResponses
from tests.agents.harness import require_agent, run_ours

pytestmark = pytest.mark.agents

AUTO = ("model_auto_compact_token_limit=50",)
SUMMARY = "FAKE SUMMARY: the user ran echo hello and echo world and asked two questions."


class GatedCodex(Codex):
    """Codex whose hooks see our CLI's state folder, and whose config keeps what our
    install added to it (the runner rewrites config.toml before every run)."""

    added = ""

    def env(self) -> dict[str, str]:
        return dict(super().env(), XDG_STATE_HOME=str(self.root / "state-home"))

    def write_config(self) -> None:
        super().write_config()
        if self.added:
            path = self.state / "config.toml"
            path.write_text(path.read_text(encoding="utf-8") + self.added, encoding="utf-8")


def ours(codex: Codex, *args: str) -> tuple[int, str, str]:
    env = {"XDG_STATE_HOME": str(codex.root / "state-home"), "CODEX_HOME": str(codex.state)}
    return run_ours(list(args), codex.root, env)


def install(codex: GatedCodex, *options: str) -> str:
    codex.write_config()
    base = (codex.state / "config.toml").read_text(encoding="utf-8")
    code, out, err = ours(codex, "hook", "install", "codex", *options)
    assert code == 0, err
    after = (codex.state / "config.toml").read_text(encoding="utf-8")
    assert after.startswith(base)
    codex.added = after[len(base) :]
    return out


def kinds(rollout: Path) -> list[str]:
    out = []
    for line in rollout.read_bytes().split(b"\n"):
        if line.strip():
            record = json.loads(line)
            payload = record.get("payload") or {}
            out.append(f"{record['type']}:{payload.get('type', '')}")
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    require_agent(codex_installed(), "Codex")
    return shared_codex_template(tmp_path_factory)


@pytest.fixture
def codex(template, tmp_path):
    runner, sid = template
    fake = FakeResponses(lifetime=600)
    with fake:
        clone = runner.clone(fake)
        yield GatedCodex(clone.root, fake, workdir=clone.workdir), sid


def test_codex_auto_compaction_is_stopped_by_the_trusted_hook(codex):
    codex, sid = codex
    out = install(codex)
    assert "trusted in" in out and '[hooks.state."' in codex.added
    rollout = codex.rollout_file(sid)
    before = kinds(rollout)
    assert "compacted:" not in before
    codex.fake.script(text_turn("Resumed."))
    run = codex.run("Where were we?", sid, AUTO)
    assert run.returncode == 1, run.stderr[-2000:]
    assert "hook: PreCompact Stopped" in run.stderr and "turn interrupted" in run.stderr
    assert not run.compaction_bodies() and not run.turn_bodies()  # nothing reached the model
    after = kinds(rollout)
    assert "compacted:" not in after
    assert "event_msg:turn_aborted" in after[len(before) :]
    code, text, err = ours(codex, "hook", "status", "--json")
    assert code == 0, err
    status = json.loads(text)
    (pending,) = status["pending"]
    assert (pending["agent"], pending["session"], pending["trigger"]) == ("codex", sid, "auto")
    assert pending["transcript"] == str(rollout)
    (user,) = [e for e in status["installed"] if e["agent"] == "codex" and e["scope"] == "user"]
    assert user["hooks"][0]["trust"] == "trusted"


def test_the_review_written_with_us_clears_it_and_allow_lets_codex_compact(codex):
    codex, sid = codex
    install(codex)
    codex.fake.script(text_turn("Resumed."))
    assert codex.run("Where were we?", sid, AUTO).returncode == 1
    rollout = codex.rollout_file(sid)
    with FakeModel(summary=SUMMARY, lifetime=300) as model:
        code, _, err = ours(
            codex, "compact", str(rollout), "--in-place", "--yes", "--provider", "openai",
            "--base-url", model.base_url, "--model", model.model,
        )  # fmt: skip
    assert code == 0, err
    code, text, _ = ours(codex, "hook", "status", "--json")
    assert json.loads(text)["pending"] == []
    # allowed once: Codex's own compaction goes through
    code, _, err = ours(codex, "hook", "allow", sid, "--agent", "codex")
    assert code == 0, err
    run = codex.compact(sid, "And now?")
    assert run.compaction_bodies()
    assert "compacted:" in kinds(rollout)


def test_without_the_trust_entry_codex_skips_the_hook_and_compacts(codex):
    codex, sid = codex
    out = install(codex, "--no-trust")
    assert "skips this hook, silently, until you trust it" in out
    assert "hooks.state" not in codex.added
    run = codex.compact(sid, "Where were we?")
    assert run.compaction_bodies()
    assert "compacted:" in kinds(codex.rollout_file(sid))
    code, text, _ = ours(codex, "hook", "status", "--json")
    assert json.loads(text)["pending"] == []

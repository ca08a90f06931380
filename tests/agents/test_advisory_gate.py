"""The gate's advisory hooks with the real Gemini CLI 0.61.0 and kimi-cli 1.51.0:
neither can stop a compaction, so ``hook install`` adds a hook that records each one
in the gate's ledger as compacted blind. The hook is installed with our CLI; the
runners write their own settings before every run, so the test carries our hook over
into them (Gemini CLI: the ``hooks`` of ``settings.json``; kimi-cli: the ``[[hooks]]``
tables, given in its ``--config``)."""

from __future__ import annotations

import json
import tomllib

import pytest

from tests.agents.fake_gemini import FakeGemini
from tests.agents.gemini_cli import GeminiCli, gemini_cli_installed, gemini_template
from tests.agents.harness import KimiCli, kimi_cli_installed, require_agent, run_ours

pytestmark = pytest.mark.agents


def ledger(root) -> list[dict]:
    path = root / "state-home" / "kimi-compact-tui" / "gate" / "ledger.jsonl"
    return [json.loads(x) for x in path.read_text().split("\n") if x.strip()]


class GatedGemini(GeminiCli):
    hooks: dict | None = None

    def env(self) -> dict[str, str]:
        return dict(super().env(), XDG_STATE_HOME=str(self.root / "state-home"))

    def write_settings(self, retention: bool = False, threshold: float | None = None) -> None:
        super().write_settings(retention, threshold)
        if self.hooks:
            path = self.gemini_dir / "settings.json"
            path.write_text(json.dumps({**json.loads(path.read_text()), **self.hooks}))


class GatedKimi(KimiCli):
    hooks: list | None = None

    def env(self) -> dict[str, str]:
        return dict(super().env(), XDG_STATE_HOME=str(self.root / "state-home"))

    def config_json(self) -> str:
        config = json.loads(super().config_json())
        if self.hooks:
            config["hooks"] = self.hooks
        return json.dumps(config)


def test_gemini_cli_automatic_compression_is_recorded_as_made_blind(tmp_path_factory, tmp_path):
    require_agent(gemini_cli_installed(), "Gemini CLI")
    runner, sid = gemini_template(tmp_path_factory)
    with FakeGemini(lifetime=300) as fake:
        clone = runner.clone(tmp_path / "gemini", fake)
        gemini = GatedGemini(clone.root, fake, workdir=clone.workdir)
        env = {
            "XDG_STATE_HOME": str(gemini.root / "state-home"),
            "GEMINI_CLI_HOME": str(gemini.state),
        }
        gemini.write_settings()
        code, out, err = run_ours(["hook", "install", "gemini-cli"], gemini.root, env)
        assert code == 0, err
        assert "advisory only" in out
        gemini.hooks = {
            "hooks": json.loads((gemini.gemini_dir / "settings.json").read_text())["hooks"]
        }
        assert "hook run gemini-cli" in json.dumps(gemini.hooks)
        gemini.compress(sid, "next?")
    (event,) = ledger(gemini.root)
    assert (event["event"], event["agent"], event["session"]) == (
        "compacted-blind",
        "gemini-cli",
        sid,
    )
    assert event["trigger"] == "auto" and event["transcript"].endswith(".jsonl")
    # the ledger lists Gemini CLI's compression (not its resumes) and the gate's event
    code, out, err = run_ours(["history", event["transcript"], "--json"], gemini.root, env)
    assert code == 0, err
    data = json.loads(out)
    (entry,) = data["compactions"]
    assert entry["by"] == "Gemini CLI" and entry["messages_replaced"] > 0
    assert [e["event"] for e in data["gate"]] == ["compacted-blind"]


def test_kimi_cli_compaction_is_recorded_as_made_blind(
    kimi_cli_session_template, tmp_path, fake_model
):
    require_agent(kimi_cli_installed(), "kimi-cli")
    runner, sid = kimi_cli_session_template
    clone = runner.clone(tmp_path / "kimi", fake_model)
    kimi = GatedKimi(clone.root, fake_model, workdir=clone.workdir)
    env = {"XDG_STATE_HOME": str(kimi.root / "state-home"), "KIMI_SHARE_DIR": str(kimi.state)}
    code, out, err = run_ours(["hook", "install", "kimi-cli", "--manual"], kimi.root, env)
    assert code == 0, err
    kimi.hooks = tomllib.loads((kimi.state / "config.toml").read_text())["hooks"]
    kimi.compact(sid)
    (event,) = ledger(kimi.root)
    assert (event["event"], event["agent"], event["session"]) == (
        "compacted-blind",
        "kimi-cli",
        sid,
    )
    assert event["trigger"] == "manual" and event["tokens"] > 0
    # history of that session lists it (kimi-cli gives no transcript: its id names the folder)
    code, out, err = run_ours(["history", str(kimi.context_file(sid)), "--json"], kimi.root, env)
    assert code == 0, err
    data = json.loads(out)
    assert [e["event"] for e in data["gate"]] == ["compacted-blind"]
    # and the ledger lists kimi-cli's own compaction (its rotation) and what it replaced
    (entry,) = data["compactions"]
    assert entry["by"] == "kimi-cli" and entry["messages_replaced"] > 0

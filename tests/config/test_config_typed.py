"""The engine reads the config as typed values; the spec's helper reads the
same values."""

from __future__ import annotations

import json
from pathlib import Path

from kimi_compact_tui.config import (
    AppConfig,
    CompactionSettings,
    _get_compaction_config,
    effective_compaction_model,
    parse_config,
)
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.model import Message
from kimi_compact_tui.tui.state import ReviewState


def test_no_config_is_the_defaults():
    settings = AppConfig().compaction
    assert settings == CompactionSettings()
    assert (settings.enabled, settings.max_preserved_messages) == (True, 2)


def test_a_file_is_read_into_typed_settings(tmp_path):
    text = (
        "compaction:\n  enabled: true\n  type: kimi\n  max_preserved_messages: 4\n"
        "  compaction_model: block-model\n  settings_overrides: {temperature: 0}\n"
        "compaction_model: session-model\n"
    )
    config = parse_config(text, tmp_path / "c.yaml")
    settings = config.compaction
    assert settings.max_preserved_messages == 4
    assert settings.compaction_model == "session-model"  # the top-level one wins
    assert settings.block_model == "block-model"
    assert settings.settings_overrides == {"temperature": 0}
    # the spec's helpers read the very same values
    assert _get_compaction_config(config.raw) == settings.as_spec()
    assert effective_compaction_model(config.raw) == settings.compaction_model


def test_a_disabled_block_says_why():
    config = AppConfig(raw={"compaction": {"enabled": False, "type": "kimi"}})
    assert config.compaction.enabled is False
    assert "disabled" in (config.compaction.disabled_reason or "")


def test_the_job_and_the_tui_resolve_the_same_prompt(tmp_path: Path):
    """One prompt resolution: the config's prompt_file is relative to the
    config file, for the job and the TUI alike; an explicit file wins."""
    (tmp_path / "mine.md").write_text("MINE", encoding="utf-8")
    (tmp_path / "other.md").write_text("OTHER", encoding="utf-8")
    config = parse_config(
        "compaction:\n  enabled: true\n  type: kimi\n  prompt_file: mine.md\n",
        tmp_path / "config.yaml",
    )
    session_path = tmp_path / "s.jsonl"
    lines = [Message.make("user", f"q{i}") for i in range(4)]
    session_path.write_text(
        "".join(json.dumps({"role": "user", "content": m.content}) + "\n" for m in lines),
        encoding="utf-8",
    )
    from kimi_compact_tui.formats import load_session

    session = load_session(session_path)
    state = ReviewState(config=config)
    assert config.prompt().text == "MINE"
    assert prepare_compaction(session, config).prompt == state.prompt == config.prompt()
    explicit = str(tmp_path / "other.md")
    assert prepare_compaction(session, config, prompt_file=explicit).prompt.text == "OTHER"
    assert ReviewState(config=config, prompt_file=explicit).prompt.text == "OTHER"

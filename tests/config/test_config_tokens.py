"""Config loading, prompt resolution order and the offline token estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from kimi_compact_tui.compaction.prompts import resolve_prompt
from kimi_compact_tui.compaction.tokens import estimate_tokens, kimi_estimate
from kimi_compact_tui.config import compaction_enablement, load_config
from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.model import Message
from tests.core_helpers import KIMI_REF


def test_no_config_file_means_enabled_kimi_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("KIMI_COMPACT_TUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    config = load_config(None)
    assert config.path is None
    assert compaction_enablement(config.raw) == (True, None)
    assert config.raw["compaction"]["max_preserved_messages"] == 2


def test_config_file_is_found_and_validated(monkeypatch, tmp_path):
    cfg = tmp_path / "kimi-compact-tui" / "config.yaml"
    cfg.parent.mkdir()
    cfg.write_text(
        "compaction:\n  enabled: true\n  type: kimi\n  max_preserved_messages: 4\n"
        "  settings_overrides: {temperature: 0.3}\ncompaction_model: kimi-k2-turbo\n"
        "provider: {kind: offline}\n",
        encoding="utf-8",
    )
    monkeypatch.delenv("KIMI_COMPACT_TUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    config = load_config(None)
    assert config.path == cfg
    assert config.raw["compaction"]["max_preserved_messages"] == 4
    assert config.raw["compaction_model"] == "kimi-k2-turbo"
    assert config.provider == {"kind": "offline"}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("compaction:\n  enabled: yes-please\n", "compaction.enabled"),
        # `enabled` is required when the block is present (docs/configuration.md)
        ("compaction:\n  type: kimi\n", "compaction.enabled: required"),
        ("compaction:\n  type: 3\n", "compaction.type"),
        ("compaction:\n  settings_overrides: [1]\n", "compaction.settings_overrides"),
        ("compaction:\n  prompt: {a: 1}\n", "compaction.prompt"),
        ("compaction_model: [x]\n", "compaction_model"),
        ("surprise: 1\n", "surprise: unknown setting"),
        ("compaction: {enabled: true\n", "invalid YAML"),
        ("\tcompaction: 1\n", "invalid YAML"),
    ],
)
def test_bad_config_values_name_the_field(tmp_path, text, expected):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert expected in str(info.value) and str(cfg) in str(info.value)


def test_a_mapping_without_enabled_is_disabled_with_reason():
    """The spec facade takes a config mapping as it is: no `enabled`, no compaction."""
    enabled, reason = compaction_enablement({"compaction": {"type": "kimi"}})
    assert not enabled and "enabled" in reason


def test_prompt_resolution_order(monkeypatch, tmp_path):
    upstream = tmp_path / "compact.md"
    upstream.write_text("\nUPSTREAM\n", encoding="utf-8")
    monkeypatch.setenv("KIMI_CLI_COMPACT_MD", str(upstream))
    own = tmp_path / "mine.md"
    own.write_text("MINE", encoding="utf-8")
    assert resolve_prompt({"prompt": "INLINE", "prompt_file": str(own)}).source == "inline"
    from_file = resolve_prompt({"prompt_file": "mine.md"}, base_dir=tmp_path)
    assert (from_file.source, from_file.text, from_file.path) == ("file", "MINE", str(own))
    assert resolve_prompt({}, prompt_file=own).text == "MINE"
    found = resolve_prompt({})
    assert found.source == "kimi-cli" and found.text == "\nUPSTREAM\n"
    assert not found.upstream_exact  # only the exact bytes earn the badge
    monkeypatch.delenv("KIMI_CLI_COMPACT_MD")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    tool = tmp_path / "data/uv/tools/kimi-cli/lib/python3.13/site-packages/kimi_cli/prompts"
    tool.mkdir(parents=True)
    (tool / "compact.md").write_text("FROM UV TOOL", encoding="utf-8")
    assert resolve_prompt({}).text == "FROM UV TOOL"
    (tool / "compact.md").unlink()
    bundled = resolve_prompt({})
    assert bundled.source == "bundled" and Path(bundled.path).name == "kimi_compact.md"


def test_missing_kimi_cli_env_file_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("KIMI_CLI_COMPACT_MD", str(tmp_path / "gone.md"))
    with pytest.raises(ConfigError, match="KIMI_CLI_COMPACT_MD"):
        resolve_prompt({})


def test_estimate_does_not_undercount_cjk_or_json():
    cjk = "修复数据库迁移的问题并且更新所有的测试用例" * 20
    assert estimate_tokens(cjk) >= len(cjk) * 0.9
    assert len(cjk) // 4 < estimate_tokens(cjk) / 3  # kimi-cli's rule is far lower
    payload = '{"a":[1,2,3],"b":{"c":"d"},"e":[{"f":1},{"g":2}]}' * 50
    assert estimate_tokens(payload) > len(payload) // 4 * 1.3
    prose = "The quick brown fox jumps over the lazy dog. " * 40
    assert len(prose) // 4 <= estimate_tokens(prose) <= len(prose) // 3
    assert estimate_tokens("") == 0


def test_kimi_estimate_is_text_characters_div_4():
    messages = [
        Message.make("user", "Now look at this screenshot"),
        Message.make(
            "assistant",
            [{"type": "think", "think": "x" * 100}, {"type": "text", "text": "y" * 38}],
        ),
    ]
    assert kimi_estimate(messages) == (27 + 38) // 4
    if (KIMI_REF / "golden").exists():
        assert 321 + kimi_estimate(messages) == 337

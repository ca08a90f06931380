"""ProviderConfig: merging the YAML ``provider:`` block with flags, and refusing bad values."""

from __future__ import annotations

import pytest

from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.providers import create_provider, provider_config_from
from kimi_compact_tui.providers.base import ProviderConfig, StreamResult


def test_nothing_configured_means_offline():
    cfg = provider_config_from(None)
    assert cfg.kind == "offline"
    assert cfg.offline
    assert cfg.effective_key_env is None
    assert provider_config_from({}).kind == "offline"


def test_moonshot_defaults_and_cn_region():
    cfg = provider_config_from({"kind": "moonshot", "model": "kimi-k2"})
    assert cfg.effective_base_url == "https://api.moonshot.ai/v1"
    assert cfg.effective_key_env == "MOONSHOT_API_KEY"
    cn = provider_config_from({"kind": "moonshot", "region": "cn"})
    assert cn.effective_base_url == "https://api.moonshot.cn/v1"
    flag = provider_config_from(None, provider="moonshot-cn")
    assert flag.kind == "moonshot"
    assert flag.effective_base_url == "https://api.moonshot.cn/v1"


def test_openai_and_ollama_defaults():
    assert provider_config_from({"kind": "openai"}).effective_key_env == "OPENAI_API_KEY"
    assert (
        provider_config_from({"kind": "openai"}).effective_base_url == "https://api.openai.com/v1"
    )
    ollama = provider_config_from({"kind": "ollama", "num_ctx": 32768})
    assert ollama.effective_base_url == "http://127.0.0.1:11434"
    assert ollama.effective_key_env is None
    assert ollama.num_ctx == 32768


def test_flags_override_the_config_block():
    raw = {"kind": "openai", "base_url": "http://a.example/v1", "model": "one"}
    cfg = provider_config_from(
        raw, provider="ollama", base_url="http://b.example:11434/", model="two"
    )
    assert (cfg.kind, cfg.base_url, cfg.model) == ("ollama", "http://b.example:11434", "two")


def test_base_url_without_kind_means_openai_compatible():
    cfg = provider_config_from(None, base_url="http://127.0.0.1:8000/v1")
    assert cfg.kind == "openai"


def test_timeouts_retries_and_extra_body_are_read():
    cfg = provider_config_from(
        {
            "kind": "openai",
            "connect_timeout": 3,
            "read_timeout": 45.5,
            "max_retries": 2,
            "retry_cap": 7,
            "extra_body": {"temperature": 0.2},
            "api_key_env": "MY_KEY",
        }
    )
    assert cfg.connect_timeout == 3.0
    assert cfg.read_timeout == 45.5
    assert cfg.max_retries == 2
    assert cfg.retry_cap == 7.0
    assert cfg.extra_body == {"temperature": 0.2}
    assert cfg.effective_key_env == "MY_KEY"


@pytest.mark.parametrize(
    ("raw", "flags", "field"),
    [
        ({"kind": "gemini"}, {}, "kind"),
        ({}, {"provider": "nope"}, "--provider"),
        ({"kind": "openai", "base_url": "ftp://x"}, {}, "base_url"),
        ({"kind": "openai"}, {"base_url": "not a url"}, "base_url"),
        ({"kind": "openai", "read_timeout": "soon"}, {}, "read_timeout"),
        ({"kind": "openai", "connect_timeout": 0}, {}, "connect_timeout"),
        ({"kind": "openai", "max_retries": 0}, {}, "max_retries"),
        ({"kind": "openai", "max_retries": 2.5}, {}, "max_retries"),
        ({"kind": "ollama", "num_ctx": 10}, {}, "num_ctx"),
        ({"kind": "openai", "extra_body": [1]}, {}, "extra_body"),
        ({"kind": "openai", "api_key_env": "NOT A NAME"}, {}, "api_key_env"),
        ({"kind": "moonshot", "region": "mars"}, {}, "region"),
        ({"kind": "openai", "modle": "typo"}, {}, "modle"),
        ({"kind": "openai", "model": ""}, {}, "model"),
    ],
)
def test_invalid_values_name_the_field(raw, flags, field):
    with pytest.raises(ConfigError) as info:
        provider_config_from(raw, **flags)
    message = str(info.value)
    assert field in message
    assert "\n" not in message


def test_a_key_in_the_config_file_is_refused_without_echoing_it():
    with pytest.raises(ConfigError) as info:
        provider_config_from({"kind": "openai", "api_key": "sk-secret-value-123"})
    assert "api_key_env" in str(info.value)
    assert "sk-secret-value-123" not in str(info.value)


def test_provider_block_must_be_a_mapping():
    with pytest.raises(ConfigError):
        provider_config_from(["openai"])  # type: ignore[arg-type]


def test_create_provider_dispatches_every_kind():
    for kind in ("openai", "moonshot", "anthropic", "ollama", "offline"):
        assert create_provider(ProviderConfig(kind=kind)).config.kind == kind
    with pytest.raises(ConfigError):
        create_provider(ProviderConfig(kind="gemini"))


def test_result_json_has_the_documented_fields():
    result = StreamResult(status="truncated", summary="abc", provider="openai", attempts=2)
    data = result.to_json()
    for key in ("status", "summary", "reasoning", "usage", "model", "provider", "timings", "error"):
        assert key in data
    assert data["timings"] == {"time_to_first_token": None, "total": None}
    assert not result.writable()
    assert result.writable(allow_truncated=True)
    assert result.retries == 1

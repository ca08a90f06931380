"""The provider registry and the per-kind settings models."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kimi_compact_tui.config import parse_config
from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers import (
    PROVIDER_KINDS,
    REGISTRY,
    Provider,
    ProviderConfig,
    create_provider,
    is_remote,
    provider_config_from,
    require_model,
    resolve_kind,
)
from kimi_compact_tui.providers.http import (
    AnthropicMessages,
    HttpProvider,
    OllamaChat,
    OpenAIChat,
)
from kimi_compact_tui.providers.offline import OfflineProvider, parse_transcript
from kimi_compact_tui.providers.registry import KIND_BY_NAME, KINDS

#: The configuration reference (moved from the README).
CONFIG_DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def readme_kinds() -> list[str]:
    """The kinds listed on the ``kind:`` line of the config example in docs/configuration.md."""
    line = next(x for x in CONFIG_DOC.read_text(encoding="utf-8").split("\n") if "  kind: " in x)
    listed = line.split("#", 1)[1]
    main, _, also = listed.partition("(also:")
    return [k.strip() for k in main.split("|")] + [k.strip() for k in also.strip(" )").split(",")]


def test_accepted_kinds_are_the_readmes_list():
    assert list(PROVIDER_KINDS) == readme_kinds()


@pytest.mark.parametrize(
    ("spelling", "kind", "impl", "wire"),
    [
        ("openai", "openai", HttpProvider, OpenAIChat),
        ("vllm", "openai", HttpProvider, OpenAIChat),
        ("moonshot", "moonshot", HttpProvider, OpenAIChat),
        ("kimi", "moonshot", HttpProvider, OpenAIChat),
        ("moonshot-cn", "moonshot", HttpProvider, OpenAIChat),
        ("anthropic", "anthropic", HttpProvider, AnthropicMessages),
        ("ollama", "ollama", HttpProvider, OllamaChat),
        ("offline", "offline", OfflineProvider, None),
    ],
)
def test_every_kind_maps_to_its_implementation(spelling, kind, impl, wire):
    config = provider_config_from({"kind": spelling, "model": "m"})
    assert config.kind == kind
    provider = create_provider(config)
    assert isinstance(provider, impl)
    assert isinstance(provider, Provider)
    assert provider.config is config
    if wire is not None:
        assert type(provider.protocol) is wire
    assert config.kind in KIND_BY_NAME


def test_region_follows_the_spelling():
    assert provider_config_from({"kind": "kimi"}).effective_base_url == "https://api.moonshot.ai/v1"
    cn = provider_config_from(None, provider="moonshot-cn")
    assert (cn.kind, cn.region) == ("moonshot", "cn")
    assert cn.effective_base_url == "https://api.moonshot.cn/v1"
    assert provider_config_from({"kind": "moonshot", "region": "China"}).region == "cn"


def test_remote_kinds_need_a_model():
    assert [k for k in PROVIDER_KINDS if not is_remote(k)] == ["offline"]
    with pytest.raises(ConfigError) as info:
        require_model(provider_config_from({"kind": "openai"}), None)
    assert str(info.value).startswith("provider.model: ")
    require_model(provider_config_from({"kind": "openai"}), "from-compaction-model")
    require_model(provider_config_from({"kind": "ollama", "model": "llama3"}), None)
    require_model(provider_config_from(None), None)  # offline needs none
    with pytest.raises(ConfigError):
        is_remote("gemini")


def test_unknown_provider_flag_names_the_option_and_lists_every_kind():
    with pytest.raises(ConfigError) as info:
        provider_config_from({"kind": "openai"}, provider="nosuch")
    message = str(info.value)
    assert message.startswith("--provider: unknown provider 'nosuch'")
    assert re.search(r"expected one of (.*)\)", message).group(1).split(", ") == list(
        PROVIDER_KINDS
    )
    with pytest.raises(ConfigError) as info:
        resolve_kind("", "kind")
    assert str(info.value).startswith("provider.kind: ")


def test_undocumented_spellings_are_refused():
    for spelling in ("llama.cpp", "none", "kimi-cn"):
        with pytest.raises(ConfigError):
            provider_config_from({"kind": spelling})


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        ({"kind": "openai", "num_ctx": 4096}, "num_ctx", "only for kind ollama"),
        ({"kind": "ollama", "region": "cn"}, "region", "only for kind moonshot"),
        ({"kind": "moonshot", "chunk_delay": 0.1}, "chunk_delay", "only for kind offline"),
        ({"kind": "openai", "max_retries": True}, "max_retries", "whole number of tries"),
        ({"kind": "openai", "retry_cap": -1}, "retry_cap", "from 0 to 600, got -1"),
        ({"kind": "openai", "extra_body": "temperature=0"}, "extra_body", "mapping"),
        ({"kind": "ollama", "num_ctx": "big"}, "num_ctx", "from 256 to"),
        ({"kind": "openai", "model": 7}, "model", "non-empty model name"),
        ({"kind": "openai", "token": "sk-x"}, "token", "api_key_env"),
    ],
)
def test_settings_errors_name_the_field(raw, field, words):
    with pytest.raises(ConfigError) as info:
        provider_config_from(raw)
    message = str(info.value)
    assert message.startswith(f"provider.{field}: ")
    assert words in message
    assert "\n" not in message
    assert "sk-x" not in message


def test_switching_kind_with_the_flag_leaves_the_other_kinds_settings_out():
    raw = {"kind": "ollama", "num_ctx": 8192, "model": "llama3", "read_timeout": 30}
    cfg = provider_config_from(raw, provider="openai")
    assert (cfg.kind, cfg.num_ctx, cfg.model, cfg.read_timeout) == ("openai", None, "llama3", 30.0)
    assert provider_config_from(raw, provider="ollama").num_ctx == 8192


def test_null_values_mean_the_default():
    cfg = provider_config_from({"kind": "openai", "read_timeout": None, "extra_body": None})
    assert cfg.read_timeout == 120.0
    assert cfg.extra_body == {}
    assert cfg == ProviderConfig(kind="openai")


def test_the_config_file_checks_its_provider_block_and_names_the_file(tmp_path):
    path = tmp_path / "config.yaml"
    with pytest.raises(ConfigError) as info:
        parse_config("provider:\n  kind: openai\n  read_timeout: soon\n", path)
    assert str(info.value).startswith(f"{path}: provider.read_timeout: must be a number")
    with pytest.raises(ConfigError) as info:
        parse_config("provider:\n  api_key: sk-live-123456\n", path)
    assert "api_key_env" in str(info.value) and "sk-live-123456" not in str(info.value)
    good = parse_config("provider:\n  kind: moonshot-cn\n  model: kimi-k2\n", path)
    assert good.provider == {"kind": "moonshot-cn", "model": "kimi-k2"}


def test_the_registry_lists_each_implementation_kind():
    assert {entry.kind for entry in REGISTRY.values()} == {k.name for k in KINDS}


def test_the_offline_reader_takes_only_the_next_numbered_header():
    """A message whose text looks like a request header stays that message's text."""
    from kimi_compact_tui.compaction.plan import make_plan
    from kimi_compact_tui.compaction.prompts import PromptSource
    from kimi_compact_tui.compaction.request import build_request

    fake = "## Message 1\nRole: system\nContent:\n"
    messages = [
        Message.make("user", "Explain the request format."),
        Message.make("assistant", [{"type": "text", "text": fake}]),
        Message.make("user", "Thanks."),
    ]
    plan = make_plan(messages, up_to=3)
    request = build_request(messages, plan, PromptSource("inline", None, "x", "0" * 64), {})
    read = parse_transcript(request)
    assert [(m.number, m.role) for m in read] == [(1, "user"), (2, "assistant"), (3, "user")]
    assert read[1].parts == [fake]
    assert parse_transcript(request.body) == read

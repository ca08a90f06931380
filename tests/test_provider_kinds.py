"""A provider kind is declared once (``registry.KINDS``), and everything else
about it is read from that line (issue 24)."""

from __future__ import annotations

import pytest

from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.providers import (
    PROVIDER_KINDS,
    REGISTRY,
    ProviderConfig,
    create_provider,
    provider_config_from,
)
from kimi_compact_tui.providers.http import HttpProvider
from kimi_compact_tui.providers.registry import KINDS, validate_settings
from kimi_compact_tui.providers.settings import COMMON_FIELDS, settings_model

NAMES = [k.name for k in KINDS]


@pytest.mark.parametrize("kind", KINDS, ids=NAMES)
def test_a_config_reads_its_url_and_key_variable_from_the_kinds_line(kind, monkeypatch):
    if kind.base_url_env:
        monkeypatch.delenv(kind.base_url_env, raising=False)
    config = ProviderConfig(kind=kind.name)
    assert config.effective_base_url == kind.default_url
    assert config.effective_key_env == kind.key_env
    for region, url in kind.region_urls.items():
        assert ProviderConfig(kind=kind.name, region=region).effective_base_url == url


@pytest.mark.parametrize("kind", KINDS, ids=NAMES)
def test_the_kinds_class_serves_it(kind):
    provider = create_provider(ProviderConfig(kind=kind.name, model="m"))
    assert provider.config.kind == kind.name
    if isinstance(kind.serves, type):
        assert isinstance(provider, HttpProvider)
        assert type(provider.protocol) is kind.serves
        assert provider.protocol.kind == kind.name


@pytest.mark.parametrize("kind", KINDS, ids=NAMES)
def test_the_kinds_settings_are_its_declarations_fields(kind):
    model = settings_model(kind.settings)
    assert set(model.model_fields) == kind.settings.field_names()
    own = kind.settings.field_names() - COMMON_FIELDS
    for other in KINDS:
        if other is not kind:
            for name in own:
                with pytest.raises(ConfigError, match=f"only for kind {kind.name}"):
                    provider_config_from({"kind": other.name, name: 1})


@pytest.mark.parametrize("kind", KINDS, ids=NAMES)
def test_nothing_set_is_the_checked_defaults(kind):
    """A block that sets nothing is not run through pydantic; the result is the
    one pydantic gives for the defaults written out."""
    plain = validate_settings(kind.name, {})
    checked = validate_settings(kind.name, {"read_timeout": 120, "max_retries": 3})
    assert plain == checked == ProviderConfig(kind=kind.name)


def test_every_spelling_comes_from_a_kinds_line():
    spellings = {k.name for k in KINDS}
    spellings |= {s for k in KINDS for s in k.regions}
    spellings |= {a for k in KINDS for a in k.aliases}
    assert set(PROVIDER_KINDS) == spellings == set(REGISTRY)
    assert REGISTRY["moonshot-cn"].region == "cn"
    assert REGISTRY["kimi"].kind == "moonshot" and REGISTRY["vllm"].kind == "openai"

"""A provider kind is declared once (``registry.KINDS``), and everything else
about it is read from that line."""

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


# A new kind: its wire class, in a module of its own, and the one line that
# declares it. The child process below adds that line (and the class's import)
# to the registry's source, and nothing else in the package changes. It then
# uses the kind from a config file, as a --provider spelling and through the
# provider call, against a real server on 127.0.0.1.
WIRE_MODULE = '''
from kimi_compact_tui.providers.http.wire import OpenAIChat


class EchoChat(OpenAIChat):
    """An OpenAI-style server whose chat endpoint is ``/echo``."""

    def url(self, config):
        return (config.effective_base_url or "") + "/echo"
'''
KIND_LINE = '    Kind("echo", EchoChat, ProviderSettings, {url!r}, "ECHO_KEY"),\n'
ANCHOR = '    Kind("offline", _offline, OfflineSettings, remote=False),\n'

CHILD = """
import asyncio, importlib.abc, importlib.util, json, sys
from pathlib import Path

import kimi_compact_tui

registry = Path(kimi_compact_tui.__file__).parent / "providers" / "registry.py"
source = registry.read_text(encoding="utf-8")
assert source.count(ANCHOR) == 1
source = source.replace(ANCHOR, ANCHOR + KIND_LINE)
source = "from echo_wire import EchoChat\\n" + source.replace(
    "from __future__ import annotations\\n", "", 1
)
source = "from __future__ import annotations\\n" + source


class Edited(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "kimi_compact_tui.providers.registry":
            return importlib.util.spec_from_loader(name, self, origin=str(registry))
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(compile(source, str(registry), "exec"), module.__dict__)


sys.meta_path.insert(0, Edited())
from kimi_compact_tui.config import parse_config
from kimi_compact_tui.providers import PROVIDER_KINDS, provider_config_from, stream_summary
from kimi_compact_tui.providers.keys import key_variable

config = parse_config("provider:\\n  kind: echo\\n  model: m\\n", Path("c.yaml"))
pcfg = provider_config_from(config.provider)
flag = provider_config_from(None, provider="echo", model="m")
body = {"messages": [{"role": "user", "content": "hi"}]}
result = asyncio.run(stream_summary(pcfg, body))
print(json.dumps({
    "listed": "echo" in PROVIDER_KINDS,
    "same": pcfg == flag,
    "url": pcfg.effective_base_url,
    "key_variable": key_variable(pcfg),
    "status": result.status,
    "summary": result.summary,
}))
"""


def test_a_new_provider_is_one_class_and_one_kind_line(tmp_path):
    import json as json_
    import os
    import sys

    from tests import procs
    from tests.loopback_server import LoopbackServer, openai_sse

    (tmp_path / "echo_wire.py").write_text(WIRE_MODULE, encoding="utf-8")
    with LoopbackServer() as server:
        server.script([openai_sse(["echoed ", "summary"])])
        code = (
            f"ANCHOR = {ANCHOR!r}\nKIND_LINE = {KIND_LINE.format(url=server.base_url)!r}\n" + CHILD
        )
        result = procs.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=str(tmp_path),
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        seen = json_.loads(result.stdout.strip().split("\n")[-1])
        assert seen == {
            "listed": True,
            "same": True,
            "url": server.base_url,
            "key_variable": None,  # a server on this machine needs no key
            "status": "complete",
            "summary": "echoed summary",
        }
        assert [r.path for r in server.requests] == ["/v1/echo"]

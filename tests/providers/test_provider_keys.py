"""A provider that needs a key never sends without one.

The public default endpoints (api.openai.com, api.moonshot.ai, api.moonshot.cn,
api.anthropic.com) are reached here through a real proxy on 127.0.0.1: the
loopback server is named in ``HTTPS_PROXY``, so any request the app makes to
one of them arrives at the server as a ``CONNECT`` and is counted. Nothing
leaves the machine, and "zero requests" means the app never tried.
"""

from __future__ import annotations

import pytest

from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.providers import ProviderConfig, provider_config_from, stream_summary
from tests.factories import write_openai_json
from tests.loopback_server import LoopbackServer, openai_sse

MESSAGES = [
    {"role": "user", "content": "Fix the crash in app/main.py"},
    {"role": "assistant", "content": "Fixed: run() checks its input."},
    {"role": "user", "content": "Now add logging."},
    {"role": "assistant", "content": "Added logging."},
    {"role": "user", "content": "And a test?"},
    {"role": "assistant", "content": "Added tests/test_main.py."},
]
KEY_VARIABLES = ("OPENAI_API_KEY", "MOONSHOT_API_KEY", "ANTHROPIC_API_KEY", "KCT_NAMED_KEY")


@pytest.fixture
def proxy(monkeypatch):
    """The loopback server as the machine's HTTPS proxy, with no key in the environment."""
    with LoopbackServer(lifetime=60) as server:
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "ANTHROPIC_BASE_URL"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTPS_PROXY", server.root_url)
        monkeypatch.setenv("HTTP_PROXY", server.root_url)
        for name in KEY_VARIABLES:
            monkeypatch.delenv(name, raising=False)
        yield server


@pytest.fixture
def session_file(tmp_path):
    return write_openai_json(tmp_path / "session.json", MESSAGES, model="m")


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("moonshot", "MOONSHOT_API_KEY"),
        ("moonshot-cn", "MOONSHOT_API_KEY"),
        ("kimi", "MOONSHOT_API_KEY"),
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
    ],
)
def test_a_default_endpoint_with_no_key_is_refused_before_any_request(
    proxy, cli_main, session_file, tmp_path, provider, variable
):
    out = tmp_path / "out.json"
    proc = cli_main("compact", session_file, "--provider", provider, "--model", "M", "-o", out)
    assert proxy.requests == []
    assert proc.code == 2, proc.stderr
    assert len(proc.error_lines) == 1, proc.stderr
    assert variable in proc.error_lines[0]
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_a_public_base_url_with_no_key_is_refused(proxy, cli_main, session_file, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(
        "provider:\n  kind: openai\n  base_url: https://llm.example.com/v1\n  model: m\n",
        encoding="utf-8",
    )
    proc = cli_main("compact", session_file, "--config", config)
    assert proxy.requests == []
    assert proc.code == 2, proc.stderr
    assert "OPENAI_API_KEY" in proc.error_lines[0]


def test_a_named_variable_that_is_empty_is_refused(
    proxy, cli_main, session_file, tmp_path, monkeypatch
):
    config = tmp_path / "c.yaml"
    config.write_text(
        "provider:\n  kind: moonshot\n  model: m\n  api_key_env: KCT_NAMED_KEY\n", encoding="utf-8"
    )
    monkeypatch.setenv("KCT_NAMED_KEY", "   ")  # whitespace is no key
    proc = cli_main("compact", session_file, "--config", config)
    assert proxy.requests == []
    assert proc.code == 2, proc.stderr
    assert "KCT_NAMED_KEY" in proc.error_lines[0]
    assert "MOONSHOT_API_KEY" not in proc.error_lines[0]


def test_no_key_wanted_is_sent_without_one(proxy, cli_main, session_file, tmp_path):
    """``api_key_env: ""`` says the server takes no key: the request is made."""
    config = tmp_path / "c.yaml"
    config.write_text(
        "provider:\n  kind: openai\n  base_url: https://llm.example.com/v1\n  model: m\n"
        '  api_key_env: ""\n  max_retries: 1\n',
        encoding="utf-8",
    )
    proc = cli_main("compact", session_file, "--config", config)
    assert [r.method for r in proxy.requests] == ["CONNECT"]
    assert proxy.requests[0].path == "llm.example.com:443"
    assert proc.code == 3, proc.stderr  # the proxy refused it: a provider failure, not a config one


def test_a_local_server_needs_no_key(cli_main, session_file, tmp_path, monkeypatch):
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with LoopbackServer(lifetime=60) as server:
        server.script([openai_sse(["<current_focus>logging</current_focus>"])])
        config = tmp_path / "c.yaml"
        config.write_text(
            f"provider:\n  kind: moonshot\n  base_url: {server.base_url}\n  model: m\n",
            encoding="utf-8",
        )
        proc = cli_main("compact", session_file, "--config", config)
        assert proc.code == 0, proc.stderr
        (req,) = server.requests
        assert "authorization" not in req.headers


async def test_the_provider_itself_refuses_without_a_key(proxy):
    """Front ends that stream without the job's check (the TUI's stream screen)
    still send nothing: the provider fails with the same one line."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    result = await stream_summary(ProviderConfig(kind="moonshot", model="m"), body)
    assert proxy.requests == []
    assert result.status == "failed"
    assert result.attempts == 0
    assert "MOONSHOT_API_KEY" in result.error


@pytest.mark.parametrize(
    ("block", "needs"),
    [
        ({"kind": "openai"}, "OPENAI_API_KEY"),
        ({"kind": "moonshot-cn"}, "MOONSHOT_API_KEY"),
        ({"kind": "anthropic"}, "ANTHROPIC_API_KEY"),
        # (a public base_url takes OPENAI_API_KEY only when the config pairs them:
        # tests/test_key_routing.py)
        (
            {
                "kind": "openai",
                "base_url": "https://openrouter.ai/api/v1",
                "api_key_env": "OPENAI_API_KEY",
            },
            "OPENAI_API_KEY",
        ),
        (
            {
                "kind": "openai",
                "base_url": "http://8.8.8.8:8000/v1",
                "api_key_env": "OPENAI_API_KEY",
            },
            "OPENAI_API_KEY",
        ),
        ({"kind": "openai", "base_url": "https://x.example/v1", "api_key_env": "K"}, "K"),
        ({"kind": "openai", "base_url": "http://127.0.0.1:8000/v1"}, None),
        ({"kind": "openai", "base_url": "http://localhost:8080/v1"}, None),
        ({"kind": "openai", "base_url": "http://[::1]:8000/v1"}, None),
        ({"kind": "openai", "base_url": "http://10.1.2.3:8000/v1"}, None),
        ({"kind": "openai", "base_url": "http://192.168.1.20:8000/v1"}, None),
        ({"kind": "openai", "base_url": "http://172.20.0.5/v1"}, None),
        ({"kind": "openai", "base_url": "http://vllm:8000/v1"}, None),
        ({"kind": "openai", "base_url": "http://host.docker.internal:8000/v1"}, None),
        ({"kind": "openai", "base_url": "http://gpu-box.local:8000/v1"}, None),
        ({"kind": "moonshot", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "K"}, None),
        ({"kind": "moonshot", "api_key_env": ""}, None),
        ({"kind": "ollama"}, None),
        ({"kind": "ollama", "base_url": "https://ollama.example.com"}, None),
        ({"kind": "offline"}, None),
    ],
)
def test_the_rule(block, needs, monkeypatch):
    from kimi_compact_tui.providers import require_key

    for name in (*KEY_VARIABLES, "K", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = provider_config_from(block)
    if needs is None:
        require_key(config)
        return
    with pytest.raises(ConfigError) as info:
        require_key(config)
    message = str(info.value)
    assert message.startswith(f"{needs} is not set")
    assert "\n" not in message
    monkeypatch.setenv(needs, "sk-something")
    require_key(config)


def test_anthropic_base_url_from_the_environment_decides(monkeypatch):
    from kimi_compact_tui.providers import require_key

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = provider_config_from({"kind": "anthropic"})
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:4000")
    require_key(config)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://gateway.example.com")
    with pytest.raises(ConfigError, match="^ANTHROPIC_API_KEY is not set"):
        require_key(config)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "not a url")
    with pytest.raises(ConfigError, match="^ANTHROPIC_BASE_URL: must be an http"):
        require_key(config)


def test_describe_never_shows_a_password_in_the_base_url():
    """``describe()`` is printed by compact, preview and probe and shown in the TUI:
    a key given as the base URL's user info stays out of it."""
    from kimi_compact_tui.providers import ProviderConfig

    pcfg = ProviderConfig(
        kind="openai", model="m", base_url="http://bob:sk-secret-0123456789@host/v1"
    )
    shown = pcfg.describe()
    assert "sk-secret" not in shown and "bob" not in shown and "host/v1" in shown

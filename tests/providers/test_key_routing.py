"""A key read from the environment goes only where it belongs (issue 32 item 1).

``OPENAI_API_KEY`` belongs to api.openai.com, ``MOONSHOT_API_KEY`` to
api.moonshot.ai / .cn, ``ANTHROPIC_API_KEY`` to api.anthropic.com (or the
``ANTHROPIC_BASE_URL`` the environment pairs it with). Any other base URL
gets a key only when the configuration names its variable in
``provider.api_key_env``. Each case runs the real CLI against a real server
on 127.0.0.1 that records the headers it received: compact, revise and probe.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.providers import provider_config_from
from kimi_compact_tui.providers.keys import require_key
from tests.anthropic_sse import anthropic_sse
from tests.factories import write_openai_json
from tests.loopback_server import LoopbackServer, Reply, ollama_ndjson, openai_sse

KEY = "sk-LEAKCHECK-routing-4f3e2d1c0b"
OTHER = "sk-LEAKCHECK-named-9a8b7c6d5e"
KEY_VARIABLES = ("OPENAI_API_KEY", "MOONSHOT_API_KEY", "ANTHROPIC_API_KEY", "KCT_PAIRED_KEY")
SUMMARY = "<current_focus>logging</current_focus>"
MESSAGES = [
    {"role": "user", "content": "Fix the crash in app/main.py"},
    {"role": "assistant", "content": "Fixed: run() checks its input in app/main.py."},
    {"role": "user", "content": "Now add logging to app/log.py."},
    {"role": "assistant", "content": "Added logging to app/log.py."},
    {"role": "user", "content": "And a test?"},
    {"role": "assistant", "content": "Added tests/test_main.py."},
]


@pytest.fixture
def env(monkeypatch):
    """Every key variable set (to the one key), no proxy, no ANTHROPIC_BASE_URL."""
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    for name in KEY_VARIABLES:
        monkeypatch.setenv(name, KEY)
    return monkeypatch


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return write_openai_json(tmp_path / "session.json", MESSAGES, model="m")


def reply(kind: str) -> Reply:
    if kind == "anthropic":
        return anthropic_sse([SUMMARY])
    if kind == "ollama":
        return ollama_ndjson([SUMMARY])
    return openai_sse([SUMMARY])


def url_of(server: LoopbackServer, kind: str) -> str:
    return server.root_url if kind in ("ollama", "anthropic") else server.base_url


def key_headers(recorded) -> dict[str, str]:
    return {k: v for k, v in recorded.headers.items() if k in ("authorization", "x-api-key")}


def assert_no_key(server: LoopbackServer) -> None:
    assert server.requests, "no request reached the server"
    for recorded in server.requests:
        assert key_headers(recorded) == {}
        assert KEY.encode() not in recorded.body


KINDS = ["openai", "vllm", "moonshot", "moonshot-cn", "kimi", "anthropic", "ollama"]


@pytest.mark.parametrize("kind", KINDS)
def test_compact_to_a_local_base_url_sends_no_environment_key(
    env, cli_main, session, tmp_path, kind
):
    with LoopbackServer(lifetime=60) as server:
        server.script([reply(kind)])
        out = tmp_path / "out.json"
        proc = cli_main(
            "compact", session, "--provider", kind, "--base-url", url_of(server, kind),
            "--model", "m", "-o", out,
        )  # fmt: skip
        assert proc.code == 0, proc.stderr
        assert_no_key(server)
        assert KEY not in proc.stdout + proc.stderr


def test_revise_to_a_local_base_url_sends_no_environment_key(env, cli_main, session, tmp_path):
    s1 = tmp_path / "s1.md"
    s1.write_text(SUMMARY + "\n", encoding="utf-8")
    with LoopbackServer(lifetime=60) as server:
        server.script([openai_sse([SUMMARY])])
        proc = cli_main(
            "compact", session, "--provider", "openai", "--base-url", server.base_url,
            "--model", "m", "--from-summary", s1, "--revise", "keep app/log.py",
            "-o", tmp_path / "out.json",
        )  # fmt: skip
        assert proc.code == 0, proc.stderr
        assert len(server.requests) == 1
        assert_no_key(server)


def test_probe_to_a_local_base_url_sends_no_environment_key(env, cli_main, session, tmp_path):
    summary = tmp_path / "s.md"
    summary.write_text(SUMMARY + "\n", encoding="utf-8")
    with LoopbackServer(lifetime=60) as server:
        server.script([openai_sse(["I do not know."]) for _ in range(20)])
        proc = cli_main(
            "probe", session, "--summary", summary, "--provider", "moonshot",
            "--base-url", server.base_url, "--model", "m", "--up-to", "4",
        )  # fmt: skip
        assert proc.code == 0, proc.stderr
        assert_no_key(server)


@pytest.mark.parametrize(
    ("kind", "header", "value"),
    [
        ("openai", "authorization", f"Bearer {OTHER}"),
        ("moonshot", "authorization", f"Bearer {OTHER}"),
        ("anthropic", "x-api-key", OTHER),
        ("ollama", "authorization", f"Bearer {OTHER}"),
    ],
)
def test_a_key_the_config_pairs_with_the_base_url_is_sent_there(
    env, cli_main, session, tmp_path, kind, header, value
):
    env.setenv("KCT_PAIRED_KEY", OTHER)
    with LoopbackServer(lifetime=60) as server:
        server.script([reply(kind)])
        config = tmp_path / "c.yaml"
        config.write_text(
            f"provider:\n  kind: {kind}\n  base_url: {url_of(server, kind)}\n  model: m\n"
            "  api_key_env: KCT_PAIRED_KEY\n",
            encoding="utf-8",
        )
        proc = cli_main("compact", session, "--config", config, "-o", tmp_path / "o.json")
        assert proc.code == 0, proc.stderr
        (recorded,) = server.requests
        assert key_headers(recorded) == {header: value}


def test_the_anthropic_base_url_variable_is_paired_with_the_anthropic_key(
    env, cli_main, session, tmp_path
):
    """The environment pairs ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY (as the
    Anthropic SDK and Claude Code read them): the key goes there."""
    with LoopbackServer(lifetime=60) as server:
        env.setenv("ANTHROPIC_BASE_URL", server.root_url)
        server.script([anthropic_sse([SUMMARY])])
        proc = cli_main(
            "compact", session, "--provider", "anthropic", "--model", "m",
            "-o", tmp_path / "o.json",
        )  # fmt: skip
        assert proc.code == 0, proc.stderr
        (recorded,) = server.requests
        assert key_headers(recorded) == {"x-api-key": KEY}


@pytest.mark.parametrize(
    ("block", "sent"),
    [
        ({"kind": "openai"}, "OPENAI_API_KEY"),
        ({"kind": "openai", "base_url": "https://api.openai.com/v1/"}, "OPENAI_API_KEY"),
        ({"kind": "openai", "base_url": "http://api.openai.com/v1"}, None),  # not https
        ({"kind": "openai", "base_url": "https://api.openai.com.evil.example/v1"}, None),
        ({"kind": "openai", "base_url": "https://openrouter.ai/api/v1"}, None),
        ({"kind": "openai", "base_url": "http://127.0.0.1:8000/v1"}, None),
        ({"kind": "moonshot"}, "MOONSHOT_API_KEY"),
        ({"kind": "moonshot-cn"}, "MOONSHOT_API_KEY"),
        ({"kind": "moonshot", "base_url": "https://api.moonshot.cn/v1"}, "MOONSHOT_API_KEY"),
        ({"kind": "moonshot", "base_url": "https://api.openai.com/v1"}, None),
        ({"kind": "anthropic"}, "ANTHROPIC_API_KEY"),
        ({"kind": "anthropic", "base_url": "http://localhost:4000"}, None),
        ({"kind": "ollama"}, None),
        ({"kind": "openai", "base_url": "http://127.0.0.1:8/v1", "api_key_env": "K"}, "K"),
        ({"kind": "openai", "base_url": "https://x.example/v1", "api_key_env": "K"}, "K"),
        (
            {"kind": "openai", "api_key_env": "OPENAI_API_KEY", "base_url": "http://h:1"},
            "OPENAI_API_KEY",
        ),
        ({"kind": "openai", "api_key_env": ""}, None),
        ({"kind": "offline"}, None),
    ],
)
def test_which_key_goes_where(env, block, sent):
    from kimi_compact_tui.providers.keys import sent_key_variable

    assert sent_key_variable(provider_config_from(block)) == sent


def test_a_public_base_url_with_only_the_default_key_is_refused_before_any_request(
    env, cli_main, session, tmp_path
):
    """OPENAI_API_KEY is OpenAI's: a public gateway needs its key named."""
    with LoopbackServer(lifetime=60) as proxy:
        env.setenv("HTTPS_PROXY", proxy.root_url)
        env.setenv("HTTP_PROXY", proxy.root_url)
        for name in ("NO_PROXY", "no_proxy"):
            env.delenv(name, raising=False)
        proc = cli_main(
            "compact", session, "--provider", "openai", "--base-url",
            "https://openrouter.ai/api/v1", "--model", "m", "-o", tmp_path / "o.json",
        )  # fmt: skip
        assert proxy.requests == []
        assert proc.code == 2, proc.stderr
        (line,) = proc.error_lines
        assert "OPENAI_API_KEY" in line and "api_key_env" in line
        assert KEY not in proc.stderr
    config = provider_config_from({"kind": "openai", "base_url": "https://openrouter.ai/api/v1"})
    with pytest.raises(ConfigError):
        require_key(config)


def test_a_local_server_that_wants_a_key_says_how_to_pair_one(env, cli_main, session, tmp_path):
    """The key was not sent (it belongs elsewhere): the 401 says so and names the setting."""
    with LoopbackServer(lifetime=60) as server:
        server.script([Reply.error(401, {"error": {"message": "missing bearer token"}})])
        proc = cli_main(
            "compact", session, "--provider", "openai", "--base-url", server.base_url,
            "--model", "m", "-o", tmp_path / "o.json",
        )  # fmt: skip
        assert proc.code == 3, proc.stderr
        assert_no_key(server)
    line = next(x for x in proc.stderr.splitlines() if "HTTP 401" in x)
    assert "no key sent" in line and "OPENAI_API_KEY" in line and "provider.api_key_env" in line
    assert KEY not in proc.stderr

"""When a provider needs an API key, and the one refusal when it has none.

The rule ("API keys" in docs/configuration.md says the same):

- a kind with no key variable (``ollama``, ``offline``), or ``api_key_env: ""``
  ("this server takes no key"), never needs one;
- otherwise a key is needed when the request goes to a host that is not on
  your machine or your network: the kind's public default endpoint
  (api.openai.com, api.moonshot.ai / .cn, api.anthropic.com), or any
  configured ``base_url`` on a public host;
- a ``base_url`` on a local host needs none, whatever ``api_key_env`` says
  (vLLM, llama.cpp, Ollama's ``/v1``, a gateway in a container): loopback
  (``127.0.0.0/8``, ``::1``, ``localhost``), private and link-local addresses,
  a name with no dot (``http://vllm:8000``), and the local-only suffixes
  ``.localhost``, ``.local``, ``.lan``, ``.internal``, ``.home.arpa``.
  A local server that does want a key answers 401, and the error names the
  variable.

Host names are judged as written: nothing is looked up (no DNS request is
made before the user's request). A self-hosted server on a public name that
takes no key is configured with ``api_key_env: ""``.
"""

from __future__ import annotations

import ipaddress
import os
import re
from urllib.parse import urlsplit

from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.providers.base import ProviderConfig

LOCAL_SUFFIXES = (".localhost", ".local", ".lan", ".internal", ".home.arpa")
_URL = re.compile(r"^https?://[^\s/]+", re.I)


def is_local_host(host: str | None) -> bool:
    """True for a host on this machine or its network (judged as written)."""
    if not host:
        return False
    host = host.strip("[]").rstrip(".").lower()
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or "." not in host or host.endswith(LOCAL_SUFFIXES)
    return ip.is_loopback or ip.is_private or ip.is_link_local


def key_variable(config: ProviderConfig) -> str | None:
    """The environment variable whose key ``config`` must have before any
    request, or None when it needs no key (the module's rule)."""
    variable = config.effective_key_env
    if variable is None:
        return None
    base = config.effective_base_url
    if base is None:
        return None
    return None if is_local_host(urlsplit(base).hostname) else variable


def endpoint(base: str | None) -> str:
    """``scheme://host[:port]`` of a base URL: no credentials, no path."""
    parts = urlsplit(base or "")
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}" if parts.netloc else "?"


def check_base_url_env(config: ProviderConfig) -> None:
    """Refuse a base URL variable (``ANTHROPIC_BASE_URL``) that is not a URL."""
    value = config.base_url_from_env
    if value is not None and not _URL.match(value):
        raise ConfigError(f"{config.base_url_env}: must be an http(s) URL, got {value[:80]!r}")


def missing_key(config: ProviderConfig) -> str | None:
    """One line saying which key is missing, or None when the request may be sent."""
    variable = key_variable(config)
    if variable is None or os.environ.get(variable, "").strip():
        return None
    other = (
        "provider.api_key_env names it"
        if config.api_key_env
        else "or name another variable in provider.api_key_env"
    )
    return (
        f"{variable} is not set: the {config.kind} provider at {endpoint(config.effective_base_url)} "
        f'needs an API key; export {variable}=... ({other}; api_key_env: "" sends no key)'
    )


def require_key(config: ProviderConfig) -> None:
    """Raise :class:`ConfigError` when ``config`` needs a key that its variable
    does not hold (checked before any request, beside ``require_model``)."""
    check_base_url_env(config)
    message = missing_key(config)
    if message is not None:
        raise ConfigError(message)

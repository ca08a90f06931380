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

Where a key goes (:func:`sent_key_variable`): a key read from the kind's own
variable (``OPENAI_API_KEY``, ``MOONSHOT_API_KEY``, ``ANTHROPIC_API_KEY``)
goes only to the endpoints it belongs to, the kind's declared URLs over
https (and, for anthropic, the ``ANTHROPIC_BASE_URL`` the environment pairs
with it, as Anthropic's own tools read them). Any other base URL, local or
public, gets a key only when the configuration names the variable in
``provider.api_key_env``: that line pairs the key with the base URL. A
public base URL with no such line is refused before any request, naming the
variable and the line to add.
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


def _origin(url: str | None) -> tuple[str, str, int] | None:
    """(scheme, host, port) of ``url`` as written, or None when it has no host."""
    parts = urlsplit(url or "")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        return None
    scheme = parts.scheme.lower()
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        return None
    return scheme, host, port


def key_belongs(config: ProviderConfig) -> bool:
    """True when the key of ``config``'s variable may go to its base URL:
    the configuration names the variable (``api_key_env``), or the URL is
    one the kind's own variable belongs to (the module's rule)."""
    if config.api_key_env:
        return True
    facts = config.facts
    if facts is None or facts.key_env is None:
        return False
    if config.base_url_from_env:  # ANTHROPIC_BASE_URL, paired with ANTHROPIC_API_KEY
        return True
    own = {_origin(u) for u in (facts.default_url, *facts.region_urls.values()) if u}
    here = _origin(config.effective_base_url)
    return here is not None and here[0] == "https" and here in own


def sent_key_variable(config: ProviderConfig) -> str | None:
    """The variable whose key goes in the request's key header, or None: no
    key is sent (the variable's key does not belong to the base URL)."""
    variable = config.effective_key_env
    if variable is None or not key_belongs(config):
        return None
    return variable


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
    if variable is None:
        return None
    where = endpoint(config.effective_base_url)
    if not key_belongs(config):
        return (
            f"the {config.kind} provider at {where} needs an API key, and {variable} is "
            f"not sent there (it belongs to {endpoint(_own_url(config))}): name the key's "
            f'variable in provider.api_key_env (api_key_env: "" sends no key)'
        )
    if os.environ.get(variable, "").strip():
        return None
    other = (
        "provider.api_key_env names it"
        if config.api_key_env
        else "or name another variable in provider.api_key_env"
    )
    return (
        f"{variable} is not set: the {config.kind} provider at {where} "
        f'needs an API key; export {variable}=... ({other}; api_key_env: "" sends no key)'
    )


def _own_url(config: ProviderConfig) -> str | None:
    facts = config.facts
    return facts.default_url if facts is not None else None


def require_key(config: ProviderConfig) -> None:
    """Raise :class:`ConfigError` when ``config`` needs a key that its variable
    does not hold (checked before any request, beside ``require_model``)."""
    check_base_url_env(config)
    message = missing_key(config)
    if message is not None:
        raise ConfigError(message)

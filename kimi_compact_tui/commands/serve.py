"""`serve` command: the same review TUI in a browser, through textual-serve.

textual-serve writes its page's own URLs (the stylesheet, the script, the
websocket) from the host and port it was told to bind, so a page served on
``0.0.0.0`` points the browser at ``0.0.0.0``. Here they come from the
address the browser connected to (its ``Host`` header), or from
``--public-url`` behind a proxy. The page loads nothing from outside:
textual-serve's template links a Google web font, which is replaced by the
copy of the same font textual-serve ships. A websocket opened from a page of
another site (its ``Origin``) is refused: the app behind it can write sessions.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import re
import shlex
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kimi_compact_tui.commands.tui import AppOptions, add_app_args
from kimi_compact_tui.errors import UserError

#: The one-line help of the command (listed by the top-level --help).
HELP = "serve the review TUI in a browser (textual-serve, 127.0.0.1 by default)"
#: What ``--help`` of the command says it does.
DESCRIPTION = (
    "Serve the review TUI through textual-serve. It has no authentication: "
    "keep the default loopback host unless you know who can reach the port."
)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
TEMPLATE = "app_index.html"
#: A Host header we are willing to write into the page: a name or address and a port.
_HOST_HEADER = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?")
#: textual-serve's template links the Roboto Mono web font from Google.
_WEB_FONT_LINK = re.compile(
    r"<link\b[^>]*\bhref=\"https://fonts\.googleapis\.com/[^\"]*\"[^>]*>", re.IGNORECASE
)
_LOCAL_FONT = """<style>
      @font-face {
        font-family: "Roboto Mono";
        font-style: normal;
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf");
      }
      @font-face {
        font-family: "Roboto Mono";
        font-style: italic;
        src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf");
      }
    </style>"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help=HELP, description=DESCRIPTION)
    add_app_args(p)
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument(
        "--public-url",
        type=public_url,
        metavar="URL",
        default=None,
        help="the address browsers use (behind a proxy, e.g. https://host/review); "
        "default: the address each browser connected to",
    )


def public_url(text: str) -> str:
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query:
        raise argparse.ArgumentTypeError(
            f"expected an http(s) URL such as https://host:8000, got {text!r}"
        )
    return text.strip().rstrip("/")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _absolute(path: str) -> str:
    """Paths are resolved here: the served app may run from another folder."""
    return str(Path(path).expanduser().absolute())


def _served_session(session: str) -> str:
    """SESSION for the served app: a path made absolute, or the folder of a
    session id a format knows (an id is not a file name in the app's folder)."""
    from kimi_compact_tui.formats.registry import find_by_id

    if not Path(session).expanduser().exists():
        found = find_by_id(session)
        if found is not None:
            return str(found)  # the reference as text: a path, or DB#KEY
    return _absolute(session)


def app_command(opts: AppOptions) -> str:
    """The shell command textual-serve runs for each browser session."""
    argv = [sys.executable, "-m", "kimi_compact_tui", "tui"]
    if opts.session:
        argv.append(_served_session(opts.session))
    for flag, value in (
        ("--config", opts.config and _absolute(opts.config)),
        ("--provider", opts.provider.provider),
        ("--model", opts.provider.model),
        ("--base-url", opts.provider.base_url),
        ("--prompt-file", opts.prompt_file and _absolute(opts.prompt_file)),
        ("--up-to", opts.up_to),
    ):
        if value is not None:
            argv += [flag, str(value)]
    return shlex.join(argv)


def page_origin(scheme: str, host_header: str | None, fallback: str) -> str:
    """``scheme://host:port`` as the browser reached us, or ``fallback`` when the
    Host header is missing or not a plain host and port."""
    if host_header and _HOST_HEADER.fullmatch(host_header):
        return f"{scheme}://{host_header}"
    return fallback


def _origin_key(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(parts.scheme)
    try:
        port = parts.port or default
    except ValueError:
        port = None
    return parts.scheme.replace("ws", "http", 1), (parts.hostname or "").lower(), port


def same_origin(origin: str, allowed: list[str]) -> bool:
    key = _origin_key(origin)
    return any(key == _origin_key(url) for url in allowed)


def offline_template(source: str) -> str:
    """textual-serve's page with the Google web font link replaced by the bundled font."""
    return _WEB_FONT_LINK.sub(lambda _: _LOCAL_FONT, source)


def server_class() -> type:
    """A textual-serve ``Server`` whose page URLs follow the browser (imported
    only when serving: the other commands do not pay for aiohttp)."""
    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from textual_serve.server import Server

    class ReviewServer(Server):
        fixed_url: str | None = None

        def base_url(self, request: web.Request) -> str:
            """The URL the page's own links start with, for this request."""
            if self.fixed_url:
                return self.fixed_url
            return page_origin(request.scheme, request.host, self.public_url)

        def host_allowed(self, request: web.Request) -> bool:
            """On a loopback bind, the page and its websocket answer only to loopback
            names: a site that rebinds its own name to 127.0.0.1 gets nothing."""
            if self.fixed_url or not is_loopback(self.host):
                return True
            name = urlsplit(f"//{request.host}").hostname or ""
            return name == "localhost" or is_loopback(name)

        def check_host(self, request: web.Request) -> None:
            if not self.host_allowed(request):
                raise web.HTTPForbidden(
                    text="kimi-compact-tui serve: unexpected Host header; on a loopback "
                    "address the page is served to loopback names only (see --public-url)\n"
                )

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            source = (Path(self.templates_path) / TEMPLATE).read_text(encoding="utf-8")
            loader = jinja2.DictLoader({TEMPLATE: offline_template(source)})
            aiohttp_jinja2.setup(app, loader=loader, autoescape=True)
            return app

        async def handle_index(self, request: web.Request) -> web.Response:
            self.check_host(request)
            base = self.base_url(request)
            ws_base = ("wss:" if base.startswith("https:") else "ws:") + base.split(":", 1)[1]
            router = request.app.router
            static = str(router["static"].url_for(filename="/")).rstrip("/") + "/"
            font_size = request.query.get("fontsize", "16")
            context: dict[str, Any] = {
                "font_size": int(font_size) if font_size.isdigit() else 16,
                "app_websocket_url": f"{ws_base}{router['websocket'].url_for()}",
                "config": {"static": {"url": f"{base}{static}"}},
                "application": {"name": self.title},
            }
            return aiohttp_jinja2.render_template(TEMPLATE, request, context)

        async def handle_websocket(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]  # a refusal is not a websocket
            self.check_host(request)
            origin = request.headers.get("Origin")
            allowed = [self.base_url(request), page_origin(request.scheme, request.host, "")]
            if origin is not None and not same_origin(origin, [u for u in allowed if u]):
                raise web.HTTPForbidden(text="this page is served to its own origin only\n")
            return await super().handle_websocket(request)

        async def on_startup(self, app: web.Application) -> None:
            where = self.fixed_url or self.public_url
            if not self.fixed_url and self.host in ("0.0.0.0", "::", ""):
                where = f"port {self.port} on every address of this machine"
            print(f"kimi-compact-tui: serving the review TUI at {where}", file=sys.stderr)
            print("kimi-compact-tui: press ctrl+c to stop", file=sys.stderr)

    return ReviewServer


def _bind_error(host: str, port: int, exc: OSError) -> UserError:
    where = f"port {port} on {host or 'every address'}"
    if exc.errno == errno.EADDRINUSE:
        return UserError(f"--port {port}: {where} is already in use (pick another --port)")
    if exc.errno == errno.EADDRNOTAVAIL:
        return UserError(f"--host {host}: not an address of this machine")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return UserError(f"--port {port}: permission denied to listen on {where}")
    return UserError(f"--host {host} --port {port}: cannot listen ({exc.strerror or exc})")


def check_bind(host: str, port: int) -> None:
    """Resolve ``host`` and bind ``port`` on each of its addresses the way the
    server will (address reuse on, IPv6 sockets IPv6 only), then let go: a
    busy port or an unknown host is one line before anything is served."""
    if not host.strip():
        raise UserError("--host is empty; give an address such as 127.0.0.1 (or 0.0.0.0)")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UserError(f"--host {host}: cannot resolve this address ({reason})") from None
    for family, kind, proto, _name, address in infos:
        try:
            with socket.socket(family, kind, proto) as probe:
                if hasattr(socket, "SO_REUSEADDR") and os.name == "posix":
                    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6 and hasattr(socket, "IPV6_V6ONLY"):
                    probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                probe.bind(address)
        except OSError as exc:
            raise _bind_error(host, port, exc) from None


def check_session(session: str | None) -> None:
    """Open the session the way the app will (the commands' resolve and load
    path): an error is the CLI's one line, before anything is served."""
    if session is None:
        return
    from kimi_compact_tui.formats import load_session

    load_session(session)


@dataclass(frozen=True)
class ServeOptions:
    """``serve``'s options, built from argparse once: the app's, and where to serve it."""

    app: AppOptions
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    public_url: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ServeOptions:
        return cls(AppOptions.from_args(args), args.host, args.port, args.public_url)


def run(args: argparse.Namespace) -> int:
    opts = ServeOptions.from_args(args)
    host, port = opts.host, opts.port
    if not 0 < port < 65536:
        raise UserError(f"--port {port}: must be between 1 and 65535")
    # Fail early, with the CLI's text, on a bad config or provider.
    from kimi_compact_tui.commands.tui import build_app

    build_app(opts.app)
    check_session(opts.app.session)
    check_bind(host, port)
    if not is_loopback(host):
        print(
            f"kimi-compact-tui: warning: serving on {host}, which is not a loopback "
            "address; textual-serve has no authentication, so anyone who can reach "
            f"port {port} can read and change your sessions",
            file=sys.stderr,
        )
    server = server_class()(app_command(opts.app), host=host, port=port, title="kimi-compact-tui")
    server.fixed_url = opts.public_url
    try:
        server.serve()
    except OSError as exc:  # taken between the check and the bind
        raise _bind_error(host, port, exc) from None
    return 0

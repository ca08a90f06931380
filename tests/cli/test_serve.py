"""`serve` on a real textual-serve server (a subprocess on a loopback port):
the page's own URLs use the address the browser connected to (or
``--public-url``), the page loads nothing from outside, and a websocket from
another site is refused."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import aiohttp
import pytest

from tests import procs

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_sessions" / "openai-retry-refactor.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` itself holds a listening TCP socket on ``port`` (so a
    connection there reaches it, not another process that took the port first)."""
    try:
        inodes = {
            os.readlink(f"/proc/{pid}/fd/{fd}")[len("socket:[") : -1]
            for fd in os.listdir(f"/proc/{pid}/fd")
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:[")
        }
    except OSError:
        return False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port and inode in inodes:
                return True
    return False


def start_serve(extra: tuple[str, ...], host: str) -> tuple[subprocess.Popen, int]:
    """``serve`` on a port free a moment ago. Another process (another xdist worker)
    may take that port first: then serve exits and another port is tried."""
    errors = []
    for _attempt in range(5):
        port = free_port()
        cmd = [sys.executable, "-m", "kimi_compact_tui", "serve", str(SAMPLE)]
        cmd += ["--host", host, "--port", str(port), "--provider", "offline", *extra]
        proc = procs.popen(
            cmd,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while proc.poll() is None and not listens(proc.pid, port):
            if time.monotonic() > deadline:
                procs.stop(proc)
                raise AssertionError(f"serve did not listen on {port} in 30 s")
            time.sleep(0.05)
        if proc.poll() is None:
            return proc, port
        errors.append(proc.stderr.read())
        procs.stop(proc)
    raise AssertionError(f"serve did not start: {errors}")


@contextmanager
def serving(*extra: str, host: str = "127.0.0.1") -> Iterator[int]:
    """``kimi-compact-tui serve`` on a free port, in a session of its own (the app
    processes it starts for each browser are in its group), stopped afterwards:
    SIGTERM, then its whole group killed."""
    proc, port = start_serve(extra, host)
    try:
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        procs.stop(proc)


def page(url: str, host_header: str | None = None) -> str:
    request = urllib.request.Request(url, headers={"Host": host_header} if host_header else {})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        return response.read().decode("utf-8")


def page_urls(html: str) -> list[str]:
    """Every absolute URL the page loads or connects to (href, src, url(), the websocket)."""
    found = re.findall(r'(?:href|src|data-session-websocket-url)="([^"]+)"', html)
    found += re.findall(r"url\(\"?([^\")]+)\"?\)", html)
    return [u for u in found if "://" in u]


def websocket_url(html: str) -> str:
    return re.search(r'data-session-websocket-url="([^"]+)"', html).group(1)


async def first_bytes(url: str, origin: str) -> bytes:
    """Open the page's websocket as a browser on ``origin`` would and read the app's first output."""
    async with aiohttp.ClientSession() as client:
        async with client.ws_connect(url + "?width=80&height=24", headers={"Origin": origin}) as ws:
            message = await asyncio.wait_for(ws.receive(), timeout=30)
            return message.data if isinstance(message.data, bytes) else str(message.data).encode()


def test_page_urls_follow_the_address_the_browser_used():
    with serving(host="0.0.0.0") as port:
        # A browser on another machine reaches the server at one of its addresses,
        # not at the bind address 0.0.0.0: here, the loopback alias 127.0.0.2.
        html = page(f"http://127.0.0.2:{port}/")
        urls = page_urls(html)
        assert urls, html
        assert all(
            u.startswith((f"http://127.0.0.2:{port}/", f"ws://127.0.0.2:{port}/")) for u in urls
        )
        assert "0.0.0.0" not in html
        assert websocket_url(html) == f"ws://127.0.0.2:{port}/ws"
        css = next(u for u in urls if u.endswith("xterm.css"))
        assert "xterm" in page(css)  # the static URL really serves the file
        # The Host header names the address, as a browser sends it.
        other = page(f"http://127.0.0.1:{port}/", host_header=f"127.0.0.3:{port}")
        assert websocket_url(other) == f"ws://127.0.0.3:{port}/ws"
        output = asyncio.run(first_bytes(websocket_url(html), f"http://127.0.0.2:{port}"))
        assert output  # the app started behind the page's websocket URL


def test_public_url_wins_over_the_host_header():
    with serving("--public-url", "https://review.example.test/") as port:
        html = page(f"http://127.0.0.1:{port}/")
        assert websocket_url(html) == "wss://review.example.test/ws"
        assert all(u.startswith(("https://review.example.test/", "wss://review.example.test/"))
                   for u in page_urls(html))  # fmt: skip


def test_the_page_loads_nothing_from_outside():
    with serving() as port:
        html = page(f"http://127.0.0.1:{port}/")
        outside = [
            u for u in page_urls(html) if not re.match(rf"(http|ws)://127\.0\.0\.1:{port}/", u)
        ]
        assert outside == []
        assert "fonts.googleapis.com" not in html
        # The web font comes from textual-serve's own static files instead.
        font = re.search(r'url\("([^"]+\.ttf)"\)', html).group(1)
        with urllib.request.urlopen(font, timeout=10) as response:
            assert response.status == 200 and len(response.read()) > 10_000


def test_a_websocket_from_another_site_is_refused():
    with serving() as port:
        html = page(f"http://127.0.0.1:{port}/")
        with pytest.raises(aiohttp.WSServerHandshakeError) as caught:
            asyncio.run(first_bytes(websocket_url(html), "http://evil.example.test"))
        assert caught.value.status == 403


def test_a_loopback_server_answers_only_to_loopback_names():
    """A site that rebinds its own name to 127.0.0.1 cannot load the page."""
    with serving() as port:
        assert websocket_url(page(f"http://127.0.0.1:{port}/", f"localhost:{port}"))
        with pytest.raises(urllib.error.HTTPError) as caught:
            page(f"http://127.0.0.1:{port}/", host_header=f"evil.example.test:{port}")
        assert caught.value.code == 403


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--public-url", "review.example.test"], "--public-url"),
        (["--public-url", "ftp://review.example.test"], "--public-url"),
        (["--port", "0"], "--port"),
    ],
)
def test_bad_serve_options_are_one_line(cli_main, argv, needle):
    result = cli_main("serve", SAMPLE, *argv)
    assert result.code == 2, result.stderr
    assert result.stderr.count("\n") == 1 and needle in result.stderr

"""A minimal Agent Client Protocol client over stdio (newline-delimited JSON-RPC 2.0),
enough to drive ``kimi acp``: initialize, session/load, session/prompt.

Requests the agent sends to us (permission asks, file reads) get an answer so it never
waits on us: permissions take the first "allow" option, anything else an error.
Every wait is bounded; :meth:`close` ends the process (and its group).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any


class AcpError(RuntimeError):
    pass


class AcpClient:
    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.notifications: list[dict[str, Any]] = []
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: list[bytes] = []
        self._next_id = 0
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def _send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
        self.proc.stdin.flush()

    def _answer_agent_request(self, msg: dict[str, Any]) -> None:
        if msg.get("method") == "session/request_permission":
            options = (msg.get("params") or {}).get("options") or []
            allow = next((o for o in options if str(o.get("kind", "")).startswith("allow")), None)
            if allow is not None:
                outcome = {"outcome": "selected", "optionId": allow.get("optionId")}
            else:
                outcome = {"outcome": "cancelled"}
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": {"outcome": outcome}})
            return
        self._send(
            {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "error": {"code": -32601, "message": "not supported by the test client"},
            }
        )

    def call(self, method: str, params: dict[str, Any], timeout: float = 120.0) -> Any:
        self._next_id += 1
        rid = self._next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AcpError(
                    f"{method}: no answer in {timeout:.0f} s; stderr: {self.stderr[-2000:]}"
                )
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AcpError(f"{method}: the agent exited; stderr: {self.stderr[-2000:]}")
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "method" in msg and "id" in msg:
                self._answer_agent_request(msg)
            elif "method" in msg:
                self.notifications.append(msg)
            elif msg.get("id") == rid:
                if "error" in msg:
                    raise AcpError(f"{method}: {msg['error']}")
                return msg.get("result")

    def close(self, timeout: float = 60.0) -> None:
        """Close its stdin and let it exit (it writes its journal on the way out: a
        loaded machine may need a while); kill its group only after ``timeout``."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        try:  # the agent if still running, and what it left in its group
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait(timeout=timeout)

    def __enter__(self) -> AcpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

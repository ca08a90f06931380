"""The gate's state: pending reviews, one-time allowances, the gate's ledger
and its log, in this tool's state folder (``<state>/gate/``; ``<state>`` is
``$XDG_STATE_HOME/kimi-compact-tui``, else ``~/.local/state/kimi-compact-tui``).

- ``pending/<agent>--<session>.json``: one pending review (:class:`Pending`),
  written atomically; it goes when the session is compacted with this tool
  (:func:`clear_written`), when the agent is let through, or by hand;
- ``allow/<agent>--<session>``: the agent's next compaction of that session is
  let through once (``hook allow``); taken by the hook that uses it;
- ``ledger.jsonl``: one line per thing the gate saw (held, let through,
  compacted blind), read by ``history``;
- ``hook.log``: one line per error the hook met (it then let the compaction
  through).

Standard library only (and the base modules): the hook imports it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kimi_compact_tui.fsutil import atomic_write_bytes, json_lines
from kimi_compact_tui.samples import state_dir

GATE = "gate"
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def gate_dir(env: Mapping[str, str] | None = None) -> Path:
    return state_dir(env) / GATE


def _key(agent: str, session: str) -> str:
    safe = _SAFE.sub("_", session)[:80]
    if safe != session:
        safe += "-" + hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{agent}--{safe}"


def now_iso(now: float | None = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if now is None else now))


@dataclass
class Pending:
    """One compaction the gate held: what the agent said about it."""

    agent: str
    session: str
    transcript: str | None
    trigger: str | None
    tokens: int | None
    time: str  # when it was first held (UTC)
    cwd: str | None = None
    blocks: int = 1  # how many times the agent tried and was held
    last: str | None = None  # the last time it was held
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Pending:
        return cls(
            agent=str(data["agent"]),
            session=str(data["session"]),
            transcript=data.get("transcript"),
            trigger=data.get("trigger"),
            tokens=data.get("tokens") if isinstance(data.get("tokens"), int) else None,
            time=str(data.get("time") or ""),
            cwd=data.get("cwd"),
            blocks=int(data.get("blocks") or 1),
            last=data.get("last"),
            extra=dict(data.get("extra") or {}),
        )


class GateState:
    """The gate's folder (``<state>/gate``), or another one for tests."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or gate_dir()

    @property
    def pending_dir(self) -> Path:
        return self.folder / "pending"

    @property
    def allow_dir(self) -> Path:
        return self.folder / "allow"

    @property
    def ledger(self) -> Path:
        return self.folder / "ledger.jsonl"

    @property
    def log(self) -> Path:
        return self.folder / "hook.log"

    # --- pending reviews ------------------------------------------------------------

    def pending_path(self, agent: str, session: str) -> Path:
        return self.pending_dir / (_key(agent, session) + ".json")

    def get(self, agent: str, session: str) -> Pending | None:
        try:
            data = json.loads(self.pending_path(agent, session).read_bytes())
        except FileNotFoundError:
            return None
        return Pending.from_json(data)

    def put(self, pending: Pending) -> Path:
        path = self.pending_path(pending.agent, pending.session)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(pending.to_json(), ensure_ascii=False, indent=2) + "\n"
        atomic_write_bytes(path, data.encode("utf-8"), mode=0o600)
        return path

    def drop(self, agent: str, session: str) -> bool:
        try:
            self.pending_path(agent, session).unlink()
        except FileNotFoundError:
            return False
        return True

    def pending(self) -> list[Pending]:
        """Every pending review, oldest first. A file that cannot be read is
        skipped (``hook status`` names it through :meth:`unreadable`)."""
        out = [p for _, p in self._pending_files() if p is not None]
        return sorted(out, key=lambda p: (p.time, p.agent, p.session))

    def unreadable(self) -> list[Path]:
        return [path for path, p in self._pending_files() if p is None]

    def _pending_files(self) -> Iterator[tuple[Path, Pending | None]]:
        try:
            names = sorted(os.listdir(self.pending_dir))
        except FileNotFoundError:
            return
        for name in names:
            if not name.endswith(".json") or name.startswith("."):
                continue
            path = self.pending_dir / name
            try:
                yield path, Pending.from_json(json.loads(path.read_bytes()))
            except (OSError, ValueError, KeyError, TypeError):
                yield path, None

    def find(self, text: str) -> list[Pending]:
        """The pending reviews ``text`` names: a session id or its start, or the
        transcript's path."""
        found = []
        resolved = _resolved(text)
        for p in self.pending():
            if p.session == text:
                return [p]
            if p.session.startswith(text) or (
                p.transcript and resolved is not None and _resolved(p.transcript) == resolved
            ):
                found.append(p)
        return found

    # --- allowances -------------------------------------------------------------------

    def allow_path(self, agent: str, session: str) -> Path:
        return self.allow_dir / _key(agent, session)

    def allow(self, agent: str, session: str) -> Path:
        path = self.allow_path(agent, session)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, (now_iso() + "\n").encode(), mode=0o600)
        return path

    def take_allowance(self, agent: str, session: str) -> bool:
        """True once per ``allow``: the allowance is removed as it is used."""
        try:
            self.allow_path(agent, session).unlink()
        except FileNotFoundError:
            return False
        return True

    def allowances(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.allow_dir) if not n.startswith("."))
        except FileNotFoundError:
            return []

    # --- the ledger and the log --------------------------------------------------------

    def note(self, event: str, agent: str, session: str, **fields: Any) -> None:
        """One line in the gate's ledger (appended in one write)."""
        record = {"time": now_iso(), "event": event, "agent": agent, "session": session}
        record.update({k: v for k, v in fields.items() if v is not None})
        _append(self.ledger, json.dumps(record, ensure_ascii=False) + "\n")

    def events(self, session: str | None = None) -> list[dict[str, Any]]:
        try:
            data = self.ledger.read_bytes()
        except FileNotFoundError:
            return []
        return [
            record
            for _start, _end, record in json_lines(data)
            if session is None or record.get("session") == session
        ]

    def log_error(self, text: str) -> None:
        _append(self.log, f"{now_iso()} {' '.join(text.split())}\n")


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    finally:
        os.close(fd)


def _resolved(text: str) -> str | None:
    try:
        return os.path.realpath(os.path.expanduser(text))
    except (OSError, ValueError):
        return None


def clear_written(path: str | os.PathLike[str], folder: Path | None = None) -> list[Pending]:
    """The store's hook point: this tool wrote a compaction of the session in
    ``path``, so a review pending for it is done. Returns what was cleared;
    never raises (a write must not fail over the gate's bookkeeping)."""
    try:
        state = GateState(folder)
        if not state.pending_dir.is_dir():
            return []
        target = _resolved(os.fspath(path))
        cleared = []
        for p in state.pending():
            if p.transcript and _resolved(p.transcript) == target:
                if state.drop(p.agent, p.session):
                    state.note("reviewed", p.agent, p.session, transcript=p.transcript)
                    cleared.append(p)
        return cleared
    except Exception:  # noqa: BLE001 - bookkeeping only
        with contextlib.suppress(Exception):
            GateState(folder).log_error(f"clearing the pending review of {path} failed")
        return []

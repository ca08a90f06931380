"""The session picker: kimi-cli sessions on this machine plus the sample sessions.

kimi-cli keeps sessions under ``$KIMI_SHARE_DIR/sessions`` (default
``~/.kimi/sessions``) as ``<md5 of the work folder>/<session id>/context.jsonl``;
``wire.jsonl`` beside it holds the turns (the title is the first
``TurnBegin`` user input) and ``kimi.json`` in the share folder names the work
folders. Everything is read cheaply: a bounded head of ``wire.jsonl``, one
pass over ``context.jsonl`` bytes without decoding JSON, and mtimes.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from kimi_compact_tui.tui.sanitize import one_line, visible

WIRE_HEAD_BYTES = 256 * 1024
USAGE_TAIL_BYTES = 64 * 1024
MAX_SESSIONS = 500


@dataclass
class SessionEntry:
    path: Path
    title: str
    work_dir: str | None
    updated: float | None
    messages: int | None
    recorded_tokens: int | None
    source: str  # "kimi-cli" | "sample"

    def label(self) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append(one_line(self.title, 70) or "(untitled)", style="bold")
        details = []
        if self.work_dir:
            details.append(visible(self.work_dir))
        if self.updated is not None:
            stamp = _dt.datetime.fromtimestamp(self.updated).strftime("%Y-%m-%d %H:%M")
            details.append(stamp)
        if self.messages is not None:
            details.append(f"{self.messages:,} messages")
        if self.recorded_tokens is not None:
            details.append(f"{self.recorded_tokens:,} tokens")
        details.append(self.source if self.source != "sample" else f"sample: {self.path.name}")
        out.append("\n  " + " · ".join(details), style="dim")
        return out


def share_dir() -> Path:
    env = os.environ.get("KIMI_SHARE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".kimi"


def work_dirs_by_hash(share: Path) -> dict[str, str]:
    """md5(work folder) -> work folder, from ``kimi.json`` when it can be read."""
    try:
        data = json.loads((share / "kimi.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries = data.get("work_dirs") if isinstance(data, dict) else None
    out: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        path = entry.get("path") if isinstance(entry, dict) else entry
        if isinstance(path, str):
            out[hashlib.md5(path.encode("utf-8")).hexdigest()] = path
    return out


def wire_title(wire: Path) -> str | None:
    """The first ``TurnBegin`` user input in ``wire.jsonl`` (bounded read)."""
    try:
        with wire.open("rb") as fh:
            head = fh.read(WIRE_HEAD_BYTES)
    except OSError:
        return None
    for raw in head.split(b"\n"):
        if b"TurnBegin" not in raw:
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        message = record.get("message") if isinstance(record, dict) else None
        if not isinstance(message, dict) or message.get("type") != "TurnBegin":
            continue
        payload = message.get("payload") or {}
        text = payload.get("user_input") if isinstance(payload, dict) else None
        if isinstance(text, list):
            text = " ".join(
                str(p.get("text", "")) for p in text if isinstance(p, dict) and "text" in p
            )
        if isinstance(text, str) and text.strip():
            return text
    return None


def context_stats(context: Path) -> tuple[int | None, int | None]:
    """(message count, last recorded ``_usage`` tokens) without decoding messages."""
    try:
        data = context.read_bytes()
    except OSError:
        return None, None
    count = 0
    for line in data.split(b"\n"):
        head = line[:24].replace(b" ", b"")
        if head.startswith(b'{"role":"_') or not line.strip():
            continue
        count += 1
    tokens = None
    tail = data[-USAGE_TAIL_BYTES:]
    at = tail.rfind(b'"_usage"')
    if at >= 0:
        line_start = tail.rfind(b"\n", 0, at) + 1
        line_end = tail.find(b"\n", at)
        try:
            record = json.loads(tail[line_start : line_end if line_end >= 0 else None])
            if isinstance(record.get("token_count"), int):
                tokens = record["token_count"]
        except (ValueError, AttributeError):
            tokens = None
    return count, tokens


def kimi_sessions(share: Path | None = None) -> list[SessionEntry]:
    share = share or share_dir()
    root = share / "sessions"
    if not root.is_dir():
        return []
    folders = work_dirs_by_hash(share)
    found: list[SessionEntry] = []
    for context in root.glob("*/*/context.jsonl"):
        session_dir = context.parent
        try:
            mtime = context.stat().st_mtime
        except OSError:
            continue
        count, tokens = context_stats(context)
        title = wire_title(session_dir / "wire.jsonl") or session_dir.name
        found.append(
            SessionEntry(
                session_dir,
                title,
                folders.get(session_dir.parent.name),
                mtime,
                count,
                tokens,
                "kimi-cli",
            )
        )
    found.sort(key=lambda e: e.updated or 0, reverse=True)
    return found[:MAX_SESSIONS]


def sample_sessions_dir() -> Path | None:
    here = Path(__file__).resolve().parents[2]  # the package folder
    for candidate in (here / "_bundled" / "sample_sessions", here.parent / "sample_sessions"):
        if candidate.is_dir():
            return candidate
    return None


def sample_sessions(folder: Path | None = None) -> list[SessionEntry]:
    folder = folder or sample_sessions_dir()
    if folder is None:
        return []
    out = []
    for item in sorted(folder.iterdir()):
        if item.name.startswith("."):
            continue
        context = item / "context.jsonl" if item.is_dir() else item
        if not context.is_file() or context.suffix not in (".json", ".jsonl"):
            continue
        count, tokens = context_stats(context) if context.suffix == ".jsonl" else (None, None)
        title = wire_title(item / "wire.jsonl") if item.is_dir() else None
        out.append(SessionEntry(item, title or item.name, None, None, count, tokens, "sample"))
    return out


class PickerScreen(ModalScreen[str | None]):
    """Choose a session; dismiss with its path, or None (escape / q)."""

    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > Vertical {
        width: 90%; height: 90%; border: thick $accent; background: $surface; padding: 0 1;
    }
    PickerScreen #picker-list { height: 1fr; }
    PickerScreen #picker-path { margin-top: 1; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("q", "cancel", "Quit", show=False),
    ]

    def __init__(self, entries: list[SessionEntry] | None = None) -> None:
        super().__init__()
        self.entries = entries if entries is not None else kimi_sessions() + sample_sessions()

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text("Open a session", style="bold"))
            if self.entries:
                options = [Option(e.label(), id=str(i)) for i, e in enumerate(self.entries)]
            else:
                options = []
            yield OptionList(*options, id="picker-list")
            if not any(e.source == "kimi-cli" for e in self.entries):
                where = visible(str(share_dir() / "sessions"))
                yield Label(Text(f"No kimi-cli sessions found under {where}", style="dim"))
            yield Input(placeholder="…or type a path and press enter", id="picker-path")

    def on_mount(self) -> None:
        self.query_one("#picker-list" if self.entries else "#picker-path").focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(str(self.entries[int(event.option.id or 0)].path))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)

"""Finding Codex sessions on this machine.

The root is ``$CODEX_HOME``, else ``~/.codex``. Live sessions are
``sessions/YYYY/MM/DD/rollout-<YYYY-MM-DDTHH-MM-SS>-<id>.jsonl``; archived ones
are ``archived_sessions/rollout-…-<id>.jsonl`` (opened by id or path, not
listed). Only names of exactly that shape are rollouts: the restore points and
audit log kept beside one are not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.base import Session, SessionInfo, state_of
from kimi_compact_tui.formats.codex.state import CodexState
from kimi_compact_tui.formats.isotime import epoch_of
from kimi_compact_tui.formats.journal import FileFinder
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.model import Message

ROLLOUT_NAME = re.compile(
    r"^rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-"
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$"
)
COUNT_LIMIT = 64 * 1024 * 1024  # larger rollouts are listed without a message count
TITLE_LENGTH = 80


def root_of(env: Mapping[str, str], home: Path) -> Path:
    configured = env.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else home / ".codex"


def is_rollout_name(name: str) -> bool:
    return ROLLOUT_NAME.match(name) is not None


def _rollouts(folder: Path, depth: int) -> Iterator[Path]:
    """Rollout files ``depth`` folders below ``folder`` (sorted, unreadable folders skipped)."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        if depth == 0:
            if is_rollout_name(entry.name) and entry.is_file():
                yield entry
        elif entry.is_dir() and not entry.name.startswith("."):
            yield from _rollouts(entry, depth - 1)


def live_rollouts(env: Mapping[str, str], home: Path) -> list[Path]:
    return list(_rollouts(root_of(env, home) / "sessions", 3))


def find_session(session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
    """The rollout of the Codex session with this id (live first, then archived)."""
    root = root_of(env, home)
    candidates = list(_rollouts(root / "sessions", 3)) + list(
        _rollouts(root / "archived_sessions", 0)
    )
    for path in candidates:
        match = ROLLOUT_NAME.match(path.name)
        if match and match.group(1) == session_id:
            return path
    return None


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_LENGTH else text[: TITLE_LENGTH - 1] + "…"


UNSENT_MARK = "(not sent) "  # a title from a prompt Codex's UI showed but never sent


def first_prompt(messages: list[Message]) -> str | None:
    for message in messages:
        if message.role == "user":
            text = " ".join(message.text().split())
            if text:
                meta = message.data.get("codex")
                unsent = isinstance(meta, dict) and meta.get("unsent") is True
                return UNSENT_MARK + text if unsent else text
    return None


def describe(path: Path, name: str, load: Callable[[bytes, Path], Session]) -> SessionInfo:
    """A picker row: first prompt, work folder, time and message count."""
    match = ROLLOUT_NAME.match(path.name)
    info = SessionInfo(
        ref=SessionRef(path), format=name, session_id=match.group(1) if match else None
    )
    try:
        st = path.stat()
        info.updated = st.st_mtime
        if st.st_size <= COUNT_LIMIT:
            session = load(path.read_bytes(), path)
            state = state_of(session, CodexState)
            info.session_id = state.session_id or info.session_id
            info.work_dir = state.cwd
            info.last_record = epoch_of(state.last_timestamp)
            info.message_count = len(session.messages)
            prompt = first_prompt(session.messages)
            info.title = _short(prompt) if prompt else None
    except OSError as exc:
        info.error = f"{path}: cannot read ({exc.strerror or exc})"
    except UserError as exc:
        info.error = str(exc)
    return info


def roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return [root_of(env, home) / "sessions"]


#: How the plugin finds these sessions: one file a session.
FINDER = FileFinder(live_rollouts, describe, roots)

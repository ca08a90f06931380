"""Finding kimi-code sessions on this machine.

The root is ``$KIMI_CODE_HOME``, else ``~/.kimi-code``. ``session_index.jsonl``
there lists sessions (``{sessionId, sessionDir, workDir}``; a later
``{sessionId, deleted: true}`` removes one); session folders under
``sessions/<work-dir key>/<session id>/`` missing from the index are found too
(the key is never recomputed). Each folder's ``state.json`` gives the title
(``title``, else ``lastPrompt``), ``cwd``, ``updatedAt`` (ms) and
``archived`` (archived sessions are not listed).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.base import SessionInfo
from kimi_compact_tui.formats.storage import SessionRef

INDEX = "session_index.jsonl"
WIRE = Path("agents") / "main" / "wire.jsonl"
COUNT_LIMIT = 64 * 1024 * 1024  # larger journals are listed without a message count
TITLE_LENGTH = 80


def root_of(env: Mapping[str, str], home: Path) -> Path:
    configured = env.get("KIMI_CODE_HOME")
    return Path(configured).expanduser() if configured else home / ".kimi-code"


def _json_lines(path: Path) -> list[Any]:
    try:
        data = path.read_bytes()
    except OSError:
        return []
    out = []
    for raw in data.split(b"\n"):
        try:
            out.append(json.loads(raw.decode("utf-8", "replace")))
        except ValueError:
            continue
    return out


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None


def session_folders(env: Mapping[str, str], home: Path) -> dict[str, tuple[Path, str | None]]:
    """``{session id: (folder, work dir from the index)}``, tombstones applied."""
    root = root_of(env, home)
    found: dict[str, tuple[Path, str | None]] = {}
    deleted: set[str] = set()
    for line in _json_lines(root / INDEX):
        if type(line) is not dict or type(line.get("sessionId")) is not str:
            continue
        sid = line["sessionId"]
        if line.get("deleted") is True:
            deleted.add(sid)
            found.pop(sid, None)
            continue
        folder = line.get("sessionDir")
        if type(folder) is str:
            deleted.discard(sid)
            work = line.get("workDir")
            found[sid] = (Path(folder), work if type(work) is str else None)
    sessions = root / "sessions"
    try:
        keys = sorted(p for p in sessions.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        keys = []
    for key in keys:
        try:
            folders = sorted(key.iterdir())
        except OSError:
            continue
        for folder in folders:
            sid = folder.name
            if sid in found or sid in deleted or not (folder / "state.json").is_file():
                continue
            found[sid] = (folder, None)
    return found


def find_session(session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
    entry = session_folders(env, home).get(session_id)
    return entry[0] if entry is not None else None


def _first_prompt(session: Any) -> str | None:
    for message in session.messages:
        meta = message.data.get("kimi_code") or {}
        origin = meta.get("origin") if type(meta) is dict else None
        kind = origin.get("kind") if type(origin) is dict else None
        if message.role == "user" and kind in (None, "user"):
            text = " ".join(message.text().split())
            if text:
                return text
    return None


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_LENGTH else text[: TITLE_LENGTH - 1] + "…"


def discover(
    env: Mapping[str, str],
    home: Path,
    format_name: str,
    parse: Callable[[bytes, Path], Any],
) -> list[SessionInfo]:
    infos: list[SessionInfo] = []
    for sid, (folder, index_work) in session_folders(env, home).items():
        if not folder.is_dir():  # an index line for a folder that is gone
            continue
        state = _read_json(folder / "state.json")
        state = state if type(state) is dict else {}
        if state.get("archived") is True:
            continue
        wire_path = folder / WIRE
        info = SessionInfo(ref=SessionRef(folder), format=format_name, session_id=sid)
        cwd = state.get("cwd")
        info.work_dir = cwd if type(cwd) is str else index_work
        updated = state.get("updatedAt")
        if type(updated) in (int, float):
            info.updated = updated / 1000  # type: ignore[operator]  # a number: type() checked first
            info.last_record = info.updated
        title = state.get("title")
        if type(title) is not str or not title.strip():
            title = state.get("lastPrompt")
        if type(title) is str and title.strip():
            info.title = _short(title)
        try:
            size = wire_path.stat().st_size
            if info.updated is None:
                info.updated = wire_path.stat().st_mtime
            if size <= COUNT_LIMIT:
                session = parse(wire_path.read_bytes(), wire_path)
                info.message_count = len(session.messages)
                if info.title is None:
                    prompt = _first_prompt(session)
                    info.title = _short(prompt) if prompt else None
        except OSError as exc:
            info.error = f"{wire_path}: cannot read ({exc.strerror or exc})"
        except UserError as exc:
            info.error = str(exc)
        infos.append(info)
    return infos


def roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return [root_of(env, home) / "sessions"]

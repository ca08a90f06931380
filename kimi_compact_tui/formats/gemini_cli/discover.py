"""Finding Gemini CLI sessions on this machine, as Gemini CLI lists them.

The root is ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``; sessions are the
``tmp/<project id>/chats/session-*.json[l]`` files (sub-agent sessions live one
folder deeper and are not listed), and ``tmp/<project id>/.project_root`` names
the work folder. Like Gemini CLI, a file is listed only when it holds a
conversation worth resuming and is not a sub-agent's; of several files of one
session (Gemini CLI may start a second one on resume) the one with the latest
``lastUpdated`` is listed: the one ``gemini --resume <id>`` resumes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.base import SessionInfo
from kimi_compact_tui.formats.isotime import epoch_of
from kimi_compact_tui.formats.storage import SessionRef

COUNT_LIMIT = 64 * 1024 * 1024  # larger files are not read for the picker
SESSION_PREFIX = "session-"
RESTORE_FOLDER = "kimi-compact-tui-restore-points"


def root_of(env: Mapping[str, str], home: Path) -> Path:
    configured = env.get("GEMINI_CLI_HOME")
    return (Path(configured).expanduser() if configured else home) / ".gemini"


def tmp_of(env: Mapping[str, str], home: Path) -> Path:
    return root_of(env, home) / "tmp"


def is_session_name(name: str) -> bool:
    """Gemini CLI's test for a session file name (its clean-up uses it too)."""
    return name.startswith(SESSION_PREFIX) and name.endswith((".json", ".jsonl"))


def restore_folder(path: Path) -> Path:
    """Where restore points and the audit log of the session file ``path`` go: for
    a file in a ``chats`` folder, a folder of this tool's own beside ``chats``
    (Gemini CLI's clean-up deletes ``chats/session-*.json[l]`` files that hold no
    conversation, and every file sharing their id); else beside the file."""
    parent = path.parent
    if parent.name == "chats":
        return parent.parent / RESTORE_FOLDER
    return parent


def chats_folders(env: Mapping[str, str], home: Path) -> list[Path]:
    try:
        projects = sorted(p for p in tmp_of(env, home).iterdir() if p.is_dir())
    except OSError:
        return []
    return [p / "chats" for p in projects if (p / "chats").is_dir()]


def session_files(chats: Path, suffix: str = "") -> list[Path]:
    try:
        names = sorted(chats.iterdir())
    except OSError:
        return []
    return [p for p in names if is_session_name(p.name) and p.name.endswith(suffix) and p.is_file()]


def work_dir_of(path: Path) -> str | None:
    try:
        text = (path.parent.parent / ".project_root").read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def _read(path: Path, read: Callable[[bytes, Path], Any]) -> tuple[Any, Any] | str:
    try:
        if path.stat().st_size > COUNT_LIMIT:
            return f"{path}: larger than {COUNT_LIMIT >> 20} MiB; open it by path"
        read_back: tuple[Any, Any] = read(path.read_bytes(), path)
        return read_back
    except OSError as exc:
        return f"{path}: cannot read ({exc.strerror or exc})"
    except UserError as exc:
        return str(exc)


def _info(path: Path, format_name: str, got: tuple[Any, Any] | str) -> SessionInfo:
    info = SessionInfo(ref=SessionRef(path), format=format_name, work_dir=work_dir_of(path))
    if isinstance(got, str):
        info.error = got
    else:
        state, messages = got
        info.title = state.title
        info.session_id = state.session_id
        info.message_count = len(messages)
        info.updated = info.last_record = epoch_of(state.metadata.get("lastUpdated"))
    if info.updated is None:
        try:
            info.updated = path.stat().st_mtime
        except OSError:
            pass
    return info


def describe(path: Path, format_name: str, read: Callable[[bytes, Path], Any]) -> SessionInfo:
    """A picker row for one session file (``read(data, path)``: its state and messages)."""
    return _info(path, format_name, _read(path, read))


def _sessions(
    files: list[Path], format_name: str, read: Callable[[bytes, Path], Any]
) -> dict[str, SessionInfo]:
    """The file Gemini CLI resumes for each session id among ``files``."""
    best: dict[str, SessionInfo] = {}
    for path in files:
        got = _read(path, read)
        if isinstance(got, str):  # listed with its error, under its file name
            best[str(path)] = _info(path, format_name, got)
            continue
        state = got[0]
        if not state.session_id or not state.resumable():
            continue
        info = _info(path, format_name, got)
        known = best.get(state.session_id)
        if known is None or (info.updated or 0) > (known.updated or 0):
            best[state.session_id] = info
    return best


def find_session(
    session_id: str,
    env: Mapping[str, str],
    home: Path,
    format_name: str,
    read: Callable[[bytes, Path], Any],
) -> Path | None:
    """The file ``gemini --resume <session_id>`` resumes, or None."""
    if len(session_id) < 8 or not session_id.replace("-", "").isalnum():
        return None
    ending = f"-{session_id[:8]}"
    files = [
        p
        for chats in chats_folders(env, home)
        for p in session_files(chats)
        if p.name.endswith((ending + ".json", ending + ".jsonl"))
    ]
    info = _sessions(files, format_name, read).get(session_id)
    return info.path if info is not None else None


def discover(
    env: Mapping[str, str], home: Path, format_name: str, read: Callable[[bytes, Path], Any]
) -> list[SessionInfo]:
    infos: list[SessionInfo] = []
    for chats in chats_folders(env, home):
        infos.extend(_sessions(session_files(chats), format_name, read).values())
    return infos


def roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return [tmp_of(env, home)]

"""The audit log: one JSON line per write and restore, beside the session.

One log per session reference: ``<session file name>.compact-audit.jsonl``
for a session that is a file (the layout logs have always had), and
``<database file name>#<key>.compact-audit.jsonl`` for one session of many in a
database (:attr:`formats.storage.SessionRef.name`), so sessions sharing a file
never share a log. The agents ignore it. It lives in the
format's restore folder (``SessionFormat.restore_folder``: beside the file
unless the agent would take files there for its own), with the backups. A record
holds times, paths, sizes and sha256s, the plan's indices, the prompt's
source and sha256, the provider (with any user:password removed from URLs),
the model, the usage numbers, the summary's sha256 and, for a revision by
feedback, its rounds (``revision``): never a key, never the text of the session
or the summary. Paths are absolute (the session's reference is). Both front ends write the same
record, built here from the compaction job's draft.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kimi_compact_tui import __version__
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.formats.base import SessionFormat
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.secrets import mask_secrets, without_userinfo

AUDIT_SUFFIX = ".compact-audit.jsonl"

_SECRETISH = re.compile(r"(key|secret|authori[sz]ation|password|bearer)", re.I)


Where = str | Path | SessionRef


def ref_of(where: Where) -> SessionRef:
    return where if isinstance(where, SessionRef) else SessionRef(Path(where))


def recorded_path(value: str, record: dict[str, Any], ref: SessionRef) -> Path:
    """A path an audit record of ``ref`` holds, absolute. Records are written
    with absolute paths; a log written before that holds them as they were
    typed, relative to the folder the command ran in: that folder is found from
    the record's ``source`` (the session as typed), else the path is read in
    the session's own folder."""
    p = Path(value)
    if p.is_absolute():
        return p
    source = Path(str(record.get("source") or ""))
    parts = source.parts
    whole = ref.path.parts
    if parts and ".." not in parts and whole[-len(parts) :] == parts:
        base = Path(*whole[: len(whole) - len(parts)])
        return Path(os.path.abspath(base / p))
    return ref.path.parent / p.name


def audit_path(where: Where, fmt: SessionFormat | None = None) -> Path:
    """The audit log of the session ``where`` (a file, or a reference): in
    ``fmt``'s restore folder (without a format: beside the file, the default
    restore folder)."""
    ref = ref_of(where)
    folder = fmt.restore_folder(ref.path) if fmt is not None else ref.path.parent
    return folder / (ref.name + AUDIT_SUFFIX)


def scrub_text(text: str) -> str:
    return mask_secrets(without_userinfo(text))


def numbers_only(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return value
    if isinstance(value, dict):
        return {
            str(k): numbers_only(v)
            for k, v in value.items()
            if not _SECRETISH.search(str(k))
            and (isinstance(v, int | float | dict) or v is None)
            and not isinstance(v, str)
        }
    return None


def prompt_json(prompt: PromptSource | None) -> dict[str, Any] | None:
    if prompt is None:
        return None
    data = prompt.to_json()
    return {k: data.get(k) for k in ("source", "path", "sha256", "upstream_exact")}


def tool_name() -> str:
    return f"kimi-compact-tui {__version__}"


def append_audit(
    where: Where, fmt: SessionFormat, record: dict[str, Any], mode: int
) -> tuple[Path, str | None]:
    log = audit_path(where, fmt)
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, (mode & 0o666) | 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        return log, f"{log}: audit record not written ({exc.strerror or exc})"
    return log, None


def read_audit(where: Where, fmt: SessionFormat | None = None) -> list[dict[str, Any]]:
    """The audit records of the session ``where`` of format ``fmt``
    (unreadable lines are skipped)."""
    try:
        data = audit_path(where, fmt).read_bytes()
    except OSError:
        return []
    out = []
    for line in data.split(b"\n"):
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                out.append(value)
    return out


def logged_format(path: Path, formats: Sequence[SessionFormat]) -> SessionFormat | None:
    """The format of the session file ``path`` (gone) as its audit log says: the
    log in a format's restore folder whose last record names a format keeping
    its log there."""
    names = {fmt.name: fmt for fmt in formats}
    for fmt in formats:
        folder = fmt.restore_folder(path)
        for name in reversed([r.get("format") for r in read_audit(path, fmt)]):
            named = names.get(name) if isinstance(name, str) else None
            if named is not None and named.restore_folder(path) == folder:
                return named
    return None

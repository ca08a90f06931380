"""The audit log: one JSON line per write and restore, beside the session.

``<session file name>.compact-audit.jsonl`` (the agents ignore it), in the
session's restore folder (:func:`store.keep.restore_folder`). A record
holds times, paths, sizes and sha256s, the plan's indices, the prompt's
source and sha256, the provider (with any user:password removed from URLs),
the model, the usage numbers and the summary's sha256: never a key, never
the text of the session or the summary. Both front ends write the same
record, built here from the compaction job's draft.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

from kimi_compact_tui.store.keep import restore_folder

AUDIT_SUFFIX = ".compact-audit.jsonl"

_SECRETISH = re.compile(r"(key|secret|authori[sz]ation|password|bearer)", re.I)
_URL_USERINFO = re.compile(r"(\w+://)[^/@\s]*@")


def audit_path(path: str | Path) -> Path:
    p = Path(path)
    return restore_folder(p) / (p.name + AUDIT_SUFFIX)


def scrub_text(text: str) -> str:
    return _URL_USERINFO.sub(r"\1", text)


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


def provider_kind(provider: Any) -> str | None:
    """The provider's kind ("offline", "openai", ...): the audit's ``provider``."""
    if provider is None:
        return None
    return scrub_text(str(getattr(provider, "kind", provider)))


def provider_text(provider: Any) -> str | None:
    """The provider in one line (kind, model, URL without credentials)."""
    if provider is None:
        return None
    describe = getattr(provider, "describe", None)
    text = describe() if callable(describe) else str(provider)
    return scrub_text(str(text))


def prompt_json(prompt: Any) -> dict[str, Any] | None:
    if prompt is None:
        return None
    to_json = getattr(prompt, "to_json", None)
    if callable(to_json):
        data = to_json()
        return {k: data.get(k) for k in ("source", "path", "sha256", "upstream_exact")}
    return {"source": str(prompt)}


def tool_name() -> str:
    from kimi_compact_tui import __version__

    return f"kimi-compact-tui {__version__}"


def append_audit(path: Path, record: dict[str, Any], mode: int) -> tuple[Path, str | None]:
    log = audit_path(path)
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        if log.parent != Path(path).parent:
            log.parent.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, (mode & 0o666) | 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        return log, f"{log}: audit record not written ({exc.strerror or exc})"
    return log, None


def read_audit(path: str | Path) -> list[dict[str, Any]]:
    """The audit records of the session file at ``path`` (unreadable lines
    are skipped)."""
    try:
        data = audit_path(path).read_bytes()
    except OSError:
        return []
    out = []
    for line in data.split(b"\n"):
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                out.append(value)
    return out

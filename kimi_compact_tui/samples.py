"""The bundled sample sessions, and the copies they are opened as.

A sample is never modified: the review opens a copy of it in a scratch
folder, ``<state>/samples/<time>/<sample>`` (``<state>`` is
``$XDG_STATE_HOME/kimi-compact-tui``, else ``~/.local/state/kimi-compact-tui``),
and says so in its title. This module is the one place that knows what a
sample is: anything inside the package's bundled ``sample_sessions`` folder
(an installed wheel) or the checkout's ``sample_sessions/`` beside the
package. Plain Python: no Textual, no formats.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
#: Where the samples are, in the order they are looked for.
SAMPLE_FOLDERS = (PACKAGE / "_bundled" / "sample_sessions", PACKAGE.parent / "sample_sessions")
APP_DIR = "kimi-compact-tui"
COPIES = "samples"


def state_dir(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """This app's state folder: ``$XDG_STATE_HOME/kimi-compact-tui``, else
    ``~/.local/state/kimi-compact-tui`` (not created here)."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or ""
    root = Path(base).expanduser() if base else (home or Path.home()) / ".local" / "state"
    return root / APP_DIR


def samples_dir() -> Path | None:
    """The folder the bundled samples are listed from (None when there is none)."""
    for folder in SAMPLE_FOLDERS:
        if folder.is_dir():
            return folder
    return None


def _inside(path: Path, folder: Path) -> Path | None:
    """``path`` relative to ``folder`` when it is inside it (None otherwise)."""
    try:
        rel = path.relative_to(folder)
    except ValueError:
        return None
    return rel if rel.parts else None


def sample_of(path: str | Path) -> tuple[Path, Path] | None:
    """``(the sample's top entry, path inside it)`` when ``path`` is (inside) a
    bundled sample, else None. Links are followed, so a link to a sample is one."""
    try:
        resolved = Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    for folder in SAMPLE_FOLDERS:
        try:
            real = folder.resolve()
        except (OSError, RuntimeError):
            continue
        rel = _inside(resolved, real)
        if rel is not None:
            top = real / rel.parts[0]
            return top, Path(*rel.parts[1:]) if len(rel.parts) > 1 else Path()
    return None


def is_sample(path: str | Path) -> bool:
    return sample_of(path) is not None


def copy_sample(path: str | Path, *, state: Path | None = None) -> Path:
    """Copy the sample ``path`` belongs to into a new scratch folder and return
    the same path inside the copy (OSError when it cannot be copied)."""
    found = sample_of(path)
    if found is None:
        raise ValueError(f"{path} is not a bundled sample")
    top, inner = found
    root = (state or state_dir()) / COPIES
    root.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    scratch = Path(tempfile.mkdtemp(prefix=f"{stamp}-", dir=root))
    target = scratch / top.name
    if top.is_dir():
        shutil.copytree(top, target, symlinks=False)
    else:
        shutil.copy2(top, target)
    return target / inner if inner.parts else target


def open_path(path: str | Path) -> Path:
    """What the review opens for ``path``: a fresh copy when it is a sample,
    else ``path`` itself."""
    return copy_sample(path) if is_sample(path) else Path(path)


def copied_sample(path: str | Path | None) -> str | None:
    """The name of the sample ``path`` is a copy of (made by :func:`copy_sample`
    under this state folder), else None."""
    if path is None:
        return None
    try:
        resolved = Path(path).expanduser().resolve()
        root = (state_dir() / COPIES).resolve()
    except (OSError, RuntimeError):
        return None
    rel = _inside(resolved, root)
    if rel is None or len(rel.parts) < 2:
        return None
    return rel.parts[1]


#: How a bundled sample is named wherever a session is (the picker's own name).
SAMPLE_PREFIX = "sample:"


def resolve_sample_name(text: str) -> Path | None:
    """The bundled sample ``text`` names as ``sample:NAME`` (NAME as the
    picker shows it: the sample's file or folder name, its extension
    optional), or None when ``text`` is not of that form. A name that is no
    sample is a ``LookupError`` listing the samples there are."""
    if not text.startswith(SAMPLE_PREFIX):
        return None
    name = text[len(SAMPLE_PREFIX) :].strip()
    folder = samples_dir()
    entries = (
        sorted(e for e in folder.iterdir() if not e.name.startswith("."))
        if folder is not None
        else []
    )
    for entry in entries:
        if name and name in (entry.name, entry.stem) and "/" not in name:
            return entry
    known = ", ".join(SAMPLE_PREFIX + e.name for e in entries) or "none are installed"
    raise LookupError(f"{text}: no such sample (the samples: {known})")

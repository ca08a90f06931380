"""The bundled sample sessions, and the copies they are opened as.

A sample is never modified: the review opens a copy of it in a scratch
folder, ``<state>/samples/<time>/<sample>`` (``<state>`` is
``$XDG_STATE_HOME/kimi-compact-tui``, else ``~/.local/state/kimi-compact-tui``),
and says so in its title. This module is the one place that knows what a
sample is: anything inside the package's bundled ``sample_sessions`` folder
(an installed wheel) or the checkout's ``sample_sessions/`` beside the
package. Plain Python: no Textual, no formats.

Copies do not pile up: each new copy first removes the earlier copies that
are unmodified and old (:func:`prune_copies`). A copy is *unmodified* when it
holds exactly the sample's files, each equal to the bundled one byte for byte
(no write, no restore point, no audit log, nothing added); it is *old* when it
was made more than :data:`PRUNE_AFTER` seconds ago (one day: a review still
open on it is never pulled away). A modified copy holds the user's work and is
never deleted; neither is anything in the folder this module did not make.
"""

from __future__ import annotations

import filecmp
import os
import re
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
#: An unmodified copy older than this (seconds) is removed when a new copy is made.
PRUNE_AFTER = 24 * 60 * 60
#: The name of a copy's scratch folder: ``<YYYYmmdd-HHMMSS>-<random>``.
SCRATCH_NAME = re.compile(r"\d{8}-\d{6}-[A-Za-z0-9_]+")


def state_dir(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """This app's state folder: ``$XDG_STATE_HOME/kimi-compact-tui``, else
    ``~/.local/state/kimi-compact-tui`` (not created here)."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or ""
    root = Path(base).expanduser() if base else (home or Path.home()) / ".local" / "state"
    return root / APP_DIR


def copies_dir(state: Path | None = None) -> Path:
    """Where the copies of the samples are made: ``<state>/samples``."""
    return (state or state_dir()) / COPIES


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
    root = copies_dir(state)
    root.mkdir(parents=True, exist_ok=True)
    prune_copies(root)
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


def _files(top: Path) -> dict[Path, Path] | None:
    """Every file under ``top`` (itself when a file) by its path relative to
    ``top``; None when ``top`` holds anything but plain files and folders."""
    if top.is_symlink():
        return None
    if top.is_file():
        return {Path(): top}
    if not top.is_dir():
        return None
    out: dict[Path, Path] = {}
    for folder, dirs, names in os.walk(top):
        for name in dirs + names:
            entry = Path(folder) / name
            if entry.is_symlink() or not (entry.is_dir() or entry.is_file()):
                return None
            if entry.is_file():
                out[entry.relative_to(top)] = entry
    return out


def is_unmodified_copy(copy: Path, sample: Path) -> bool:
    """``copy`` holds exactly ``sample``'s files, each the same bytes."""
    mine, theirs = _files(copy), _files(sample)
    if mine is None or theirs is None or mine.keys() != theirs.keys():
        return False
    try:
        return all(filecmp.cmp(mine[rel], theirs[rel], shallow=False) for rel in mine)
    except OSError:
        return False


def prune_copies(
    root: Path | None = None, *, now: float | None = None, older_than: float = PRUNE_AFTER
) -> list[Path]:
    """Remove the copies under ``root`` (``<state>/samples``) that are
    unmodified and made more than ``older_than`` seconds ago (the scratch
    folder's time); returns the scratch folders removed. Anything else is
    left alone: a modified copy, a copy of a sample no longer bundled, a
    folder this module did not make. Never raises for a file system error."""
    root = copies_dir() if root is None else root
    now = time.time() if now is None else now
    folder = samples_dir()
    removed: list[Path] = []
    if folder is None:
        return removed
    try:
        scratches = sorted(root.iterdir())
    except OSError:
        return removed
    for scratch in scratches:
        try:
            if not SCRATCH_NAME.fullmatch(scratch.name) or scratch.is_symlink():
                continue
            if not scratch.is_dir() or now - scratch.stat().st_mtime <= older_than:
                continue
            entries = list(scratch.iterdir())
            if len(entries) != 1:
                continue
            (copy,) = entries
            sample = folder / copy.name
            if not os.path.lexists(sample) or not is_unmodified_copy(copy, sample):
                continue
            shutil.rmtree(scratch)
        except OSError:
            continue
        removed.append(scratch)
    return removed


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

"""The registry of session formats, the one place that knows which exist, and
the one place a session's name is read (:func:`resolve`).

``FORMATS`` is one :class:`Entry` line per format, each loaded when it is first
asked for. Detection asks each specific format in turn (``recognise``), then
checks for a known file that is not a session this tool opens
(``formats.foreign``), then the fallback formats (OpenAI ``.jsonl`` and
``.json``). A folder is resolved by the first format that finds its session
file in it; a database named alone, by its format's ``only_session``.
"""

from __future__ import annotations

import bisect
import importlib
import os
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

from kimi_compact_tui import samples
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import foreign
from kimi_compact_tui.formats.base import SessionFormat, SessionInfo
from kimi_compact_tui.formats.storage import SQLITE_MAGIC, SessionRef, split_key
from kimi_compact_tui.sanitize import one_line


@dataclass(frozen=True)
class Entry:
    """One registered format: where its instance is (``module:NAME``) and its
    label (the help text lists it without loading the format)."""

    where: str
    label: str

    def load(self) -> SessionFormat:
        module, _, name = self.where.partition(":")
        fmt = getattr(importlib.import_module(module), name)
        assert isinstance(fmt, SessionFormat), self.where
        return fmt


class Registered(Sequence[SessionFormat]):
    """The registered formats, in order, each loaded when it is first asked for:
    detecting a session asks them in turn and stops at the first that
    recognises it, so a command loads only the formats it reaches (a format's
    writer and helpers load with it, or when it writes)."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = tuple(entries)
        self._loaded: list[SessionFormat | None] = [None] * len(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    @overload
    def __getitem__(self, index: int) -> SessionFormat: ...

    @overload
    def __getitem__(self, index: slice) -> list[SessionFormat]: ...

    def __getitem__(self, index: int | slice) -> SessionFormat | list[SessionFormat]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        fmt = self._loaded[index]
        if fmt is None:
            fmt = self._loaded[index] = self.entries[index].load()
            if fmt.fallback:  # it reads any agent's messages: every agent's tool roles
                fmt.know_agents([f for f in self if not f.fallback])
        return fmt

    def __iter__(self) -> Iterator[SessionFormat]:
        for i in range(len(self)):
            yield self[i]


# One line per format, specific formats first (the order detection asks in).
FORMATS: Sequence[SessionFormat] = Registered(
    [
        Entry("kimi_compact_tui.formats.kimi_code.plugin:FORMAT", "kimi-code wire.jsonl"),
        Entry("kimi_compact_tui.formats.claude_code.plugin:FORMAT", "Claude Code transcript"),
        Entry("kimi_compact_tui.formats.codex.plugin:FORMAT", "Codex rollout"),
        Entry("kimi_compact_tui.formats.kimi_cli.plugin:FORMAT", "kimi-cli context.jsonl"),
        Entry("kimi_compact_tui.formats.gemini_cli.plugin:FORMAT", "Gemini CLI session"),
        Entry("kimi_compact_tui.formats.opencode.plugin:FORMAT", "opencode database"),
        Entry("kimi_compact_tui.formats.openai:JSONL_FORMAT", "OpenAI messages .jsonl"),
        Entry("kimi_compact_tui.formats.openai:JSON_FORMAT", "OpenAI messages .json"),
    ]
)


def labels() -> list[str]:
    """The label of every registered format, for people (loads none)."""
    if isinstance(FORMATS, Registered):
        return [entry.label for entry in FORMATS.entries]
    return [fmt.label for fmt in FORMATS]


HEAD_BYTES = 65536


def names() -> list[str]:
    return [f.name for f in FORMATS]


def get(name: str) -> SessionFormat:
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt
    raise SessionFormatError(f"unknown format {name!r} (known: {', '.join(names())})")


def specific() -> list[SessionFormat]:
    """The formats recognised by their own marks (not the fallbacks)."""
    return [f for f in FORMATS if not f.fallback]


#: What may be the start of a session id: letters, digits, ``-`` and ``_``, at
#: least this many (shorter ones are typos far more often than ids). Any such
#: start names the one session whose id starts so, letters or digits alike.
MIN_PREFIX = 4
#: The picker shows ids this long, longer where two sessions share the start.
SHORT_ID = 8
#: Sessions named in a one-line message (a folder's, an ambiguous id's).
LISTED = 5


class SessionNameError(SessionFormatError):
    """A name of a session that names none to open: an id (or the start of
    one) that more than one session has, or ``sample:NAME`` of no sample."""


def _id_like(text: str) -> bool:
    return len(text) >= MIN_PREFIX and all(c.isalnum() or c in "-_" for c in text)


def _agent(name: str) -> str:
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt.agent or fmt.label
    return name


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return a == b


def _same_ref(a: SessionRef, b: SessionRef) -> bool:
    return a.key == b.key and _same(a.path, b.path)


Found = tuple[str, SessionRef, str]  # (id, where, format name)


def _distinct(found: list[Found]) -> list[Found]:
    """``(id, ref, format name)`` with the same session (one reference) once."""
    out: list[Found] = []
    for entry in found:
        if not any(_same_ref(entry[1], seen[1]) for seen in out):
            out.append(entry)
    return out


def _ambiguous(text: str, found: list[Found]) -> SessionNameError:
    shown = [f"{sid} ({_agent(name)}, {ref})" for sid, ref, name in found[:LISTED]]
    more = f", and {len(found) - LISTED:,} more" if len(found) > LISTED else ""
    return SessionNameError(
        f"{text}: {len(found):,} sessions have an id starting so: "
        f"{', '.join(shown)}{more}; give more of the id"
    )


def find_by_id(
    text: str, env: Mapping[str, str] | None = None, home: Path | None = None
) -> SessionRef | None:
    """The session named by ``text`` when it is not a path: ``sample:NAME``
    (a bundled sample), a session id a format knows, or the start of one that
    only one session's id has (the picker's short ids are such starts). None
    when nothing is named so; :class:`SessionNameError` (one line naming the
    matches, their agents and full ids) when more than one session is, or
    ``sample:NAME`` names no sample."""
    try:
        sample = samples.resolve_sample_name(text)
    except LookupError as exc:
        raise SessionNameError(str(exc.args[0])) from None
    if sample is not None:
        return SessionRef(sample)
    if not text or "/" in text or "\\" in text or text.startswith("."):
        return None
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    exact: list[Found] = []
    for fmt in FORMATS:
        found = fmt.find_session(text, env, home)
        if found is not None:
            exact.append((text, found, fmt.name))
    exact = _distinct(exact)
    if len(exact) == 1:
        return exact[0][1]
    if len(exact) > 1:
        raise _ambiguous(text, exact)
    if not _id_like(text):
        return None
    # The start of an id: the sessions the picker lists are the ones it may name.
    wanted = text.lower()
    starts = [
        (info.session_id, info.ref, info.format)
        for info in discover_all(env, home)
        if info.session_id and info.session_id.lower().startswith(wanted)
    ]
    starts = _distinct(starts)
    if len(starts) == 1:
        return starts[0][1]
    if len(starts) > 1:
        raise _ambiguous(text, starts)
    return None


def short_ids(sessions: list[SessionInfo]) -> dict[str, str]:
    """Each session id in ``sessions`` -> its first :data:`SHORT_ID` characters,
    or more where another session's id starts the same (each shown id names
    one session, as :func:`find_by_id` reads it)."""
    ids = sorted({info.session_id.lower() for info in sessions if info.session_id})
    out: dict[str, str] = {}
    for info in sessions:
        sid = info.session_id
        if not sid or sid in out:
            continue
        low = sid.lower()
        i = bisect.bisect_left(ids, low)
        shared = 0
        for j in (i - 1, i + 1):
            if 0 <= j < len(ids):
                shared = max(shared, len(os.path.commonprefix([ids[j], low])))
        out[sid] = sid[: max(SHORT_ID, shared + 1)]
    return out


def _stat(p: Path) -> os.stat_result:
    try:
        return p.stat()
    except FileNotFoundError:
        raise SessionFormatError(
            f"{p}: no such file or folder (nor a session id any format knows)"
        ) from None
    except PermissionError:
        raise SessionFormatError(f"{p}: permission denied") from None
    except OSError as exc:
        raise SessionFormatError(f"{p}: cannot open ({exc.strerror})") from None


def resolve(text: str | Path | SessionRef) -> SessionRef:
    """The one session ``text`` names, as its one identity: a path (a file, a
    session folder any format recognises, a database holding one session),
    ``DB#KEY``, ``sample:NAME``, a session id or the unique start of one (at
    least :data:`MIN_PREFIX` letters or digits). The reference is absolute.
    Anything else is a :class:`SessionFormatError` of one line: no such
    session, a folder or a database of several (naming them), an id several
    sessions start with."""
    if isinstance(text, SessionRef):
        return text if text.key is not None else _session_at(text.path)
    raw = str(text)
    keyed = split_key(raw)
    if keyed is not None:
        return SessionRef(*keyed)
    p = Path(raw).expanduser()
    if not os.path.lexists(p):
        found = find_by_id(raw)
        if found is not None:
            return found if found.key is not None else _session_at(found.path)
    return _session_at(p)


def _session_at(p: Path) -> SessionRef:
    """The session held at the path ``p`` (a file or a session folder)."""
    st = _stat(p)
    if stat.S_ISDIR(st.st_mode):
        for fmt in FORMATS:
            found = fmt.resolve_folder(p)
            if found is not None:
                return SessionRef(found)
        raise SessionFormatError(folder_message(p))
    if not stat.S_ISREG(st.st_mode):
        raise SessionFormatError(f"{p}: not a regular file")
    return _only_session(SessionRef(p))


def _only_session(ref: SessionRef) -> SessionRef:
    """A file that holds many sessions (a SQLite database) named alone: its one
    session (the format's :meth:`SessionFormat.only_session`), or the file itself."""
    try:
        with open(ref.path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return ref  # the loader says why, in its own words
    if not head.startswith(SQLITE_MAGIC):
        return ref  # a file of one session
    for fmt in FORMATS:
        if not fmt.fallback and fmt.recognise(ref.path, head):
            return fmt.only_session(ref.path) or ref
    return ref


#: Entries of a folder looked at when it is not a session (the rest are not).
SCAN_LIMIT = 2000


def _within(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def _reader(entry: Path) -> SessionFormat | None:
    """The specific format that reads ``entry`` (a file, or a session folder), or None."""
    try:
        if entry.is_dir():
            for fmt in specific():
                target = fmt.resolve_folder(entry)
                if target is not None and target == entry.parent / target.name:
                    return None  # a session's own folder beside its file: the file is listed
                if target is not None:
                    return fmt
            return None
        if not entry.is_file():
            return None
        with open(entry, "rb") as fh:
            head = fh.read(HEAD_BYTES)
        for fmt in specific():
            if fmt.recognise(entry, head):
                return fmt
    except OSError:
        return None
    return None


def sessions_in(folder: Path) -> tuple[list[SessionInfo], dict[str, str]]:
    """The sessions held in ``folder`` (at any depth), newest first, and the
    short ids they are named by: those the picker lists under it, else the
    files and session folders right in it that a specific format reads (named
    by path: an id works only for the sessions the picker lists)."""
    listed = discover_all()
    inside = [info for info in listed if _within(info.path, folder)]
    if inside:
        return inside, short_ids(listed)
    found: list[SessionInfo] = []
    try:
        entries = sorted(folder.iterdir())[:SCAN_LIMIT]
    except OSError:
        return [], {}
    for entry in entries:
        fmt = _reader(entry)
        if fmt is None:
            continue
        info = fmt.describe(entry)
        if not info.error:
            found.append(info)
    found.sort(key=lambda info: info.updated or 0.0, reverse=True)
    return found, {}


def folder_message(folder: Path) -> str:
    """Why ``folder`` is not one session: the sessions it holds, each with its
    short id (or path), agent, time and title, and how to name one; or that
    it holds none."""
    found, short = sessions_in(folder)
    itself = next((info for info in found if _same(info.path, folder)), None)
    if itself is not None:  # a session's folder the picker lists, that cannot be opened
        return f"{folder}: {itself.error or 'no session file in the session folder'}"
    if not found:
        kinds = ", ".join(f.label for f in specific())  # (loads every format: a rare message)
        return f"{folder}: folder holds no session ({kinds})"
    shown, names = [], []
    for info in found[:LISTED]:
        name = short.get(info.session_id or "") or str(info.path)
        details = [_agent(info.format)]
        if info.updated:
            details.append(time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated)))
        if info.title:
            details.append(repr(one_line(info.title, 40)))
        if info.error:
            details.append("cannot be opened")
        names.append(name)
        shown.append(f"{name} ({', '.join(details)})")
    more = f", and {len(found) - LISTED:,} more" if len(found) > LISTED else ""
    n = len(found)
    what = f"{n:,} sessions, not one" if n > 1 else "one session, not a session's own folder"
    return (
        f"{folder}: a folder of {what}: {'; '.join(shown)}{more}; "
        f"name one by its id or path (e.g. kimi-compact-tui plan {names[0]})"
    )


def detect(path: Path, head: bytes) -> SessionFormat:
    """The format of the file at ``path`` whose first bytes are ``head``: the
    specific formats are asked in turn (each loaded only when reached)."""
    for fmt in FORMATS:
        if not fmt.fallback and fmt.recognise(path, head):
            return fmt
    refused = foreign.refusal(path, head)
    if refused is not None:
        raise SessionFormatError(refused)
    for fmt in FORMATS:
        if fmt.fallback and fmt.recognise(path, head):
            return fmt
    raise SessionFormatError(f"{path}: unknown session format (expected {', '.join(labels())})")


def discover_all(
    env: Mapping[str, str] | None = None, home: Path | None = None
) -> list[SessionInfo]:
    """Every session the formats find on this machine, newest first."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    found: list[SessionInfo] = []
    for fmt in FORMATS:
        found.extend(fmt.discover(env, home))
    found.sort(key=lambda info: info.updated or 0.0, reverse=True)
    return found


def describe_path(path: Path) -> SessionInfo:
    """A picker row for a session given by path (a file or a folder): the
    format that reads it describes it cheaply; one line of error otherwise."""
    try:
        target = resolve(path).path
        with open(target, "rb") as fh:
            head = fh.read(HEAD_BYTES)
        fmt = detect(target, head)
    except (SessionFormatError, OSError) as exc:
        return SessionInfo(SessionRef(path), "?", title=path.name, error=str(exc))
    info = fmt.describe(path)
    info.title = info.title or path.name
    return info


def discovery_note(
    sessions: list[SessionInfo], env: Mapping[str, str] | None = None, home: Path | None = None
) -> str:
    """One line saying what was found where, e.g. "4 kimi-cli sessions under
    ~/.kimi/sessions", or where nothing was found."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    parts, nowhere = [], []
    for fmt in FORMATS:
        roots = fmt.discovery_roots(env, home)
        if not roots:
            continue
        where = ", ".join(str(p) for p in roots)
        n = sum(1 for info in sessions if info.format == fmt.name)
        agent = fmt.agent or fmt.name
        if n:
            parts.append(f"{n:,} {agent} session{'s' if n != 1 else ''} under {where}")
        else:
            nowhere.append(f"{agent} sessions found under {where}")
    if not parts and not nowhere:
        return "No sessions found"
    missing = [("no " if parts or i else "No ") + what for i, what in enumerate(nowhere)]
    return "; ".join(parts + missing)

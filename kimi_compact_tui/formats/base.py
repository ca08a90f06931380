"""The session format contract, split by capability, and the session it produces.

A format plugin owns one kind of session. Its contract is four capabilities:
:class:`Finder` (recognising a file, finding sessions on this machine, by id,
in a folder or a database), :class:`Codec` (making and writing sessions: the
summary message, the compacted session, the refusals), :class:`Lexicon` (the
agent's vocabulary, for the extractor and the preserved-tail scan) and
:class:`Stored` (its :class:`WriteStrategy`, bound to the format instance, and
where restore points go). :class:`SessionFormat` is the four together;
:class:`FileFormat` is one for a session that is a file of bytes (``parse``),
``formats.database.DatabaseFormat`` one for a session of many in a database
(``read``; no ``parse``). Nothing outside ``formats/`` reads a format any other
way (no ``getattr``, no format names or file names). The registry
(:mod:`formats.registry`) holds the one list of plugins.

A :class:`Session` is what a plugin reads: its reference (``ref``, its one
identity), the messages the engine compacts, the warnings for lines the agent
itself skips, what the file says of the agent (:class:`SessionMeta`), and the
plugin's own typed ``format_state`` (what its lossless round trip and its
write need). ``Session.format`` is the plugin object itself, so nothing looks a
format up again by name.

Adding a format: one module with a subclass of :class:`FileFormat` or
``DatabaseFormat`` declaring its :class:`WriteStrategy`
(``formats/strategies.py``), one line in ``formats/registry.py`` (its
``Entry`` in ``FORMATS``) and a writer in ``tests/factories/writers.py``
(``docs/ARCHITECTURE.md`` walks through it).
"""

from __future__ import annotations

import copy
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

from kimi_compact_tui.compaction.plan import CompactionPlan, count_leading_system
from kimi_compact_tui.compaction.summary import plain_summary_message
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.storage import KEY_MARK, Fingerprint, Located, SessionRef
from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import PLAIN, SUMMARY, ToolRoles, Vocabulary

if TYPE_CHECKING:
    from kimi_compact_tui.formats.context import ContextUsage
    from kimi_compact_tui.formats.lines import Lines

S = TypeVar("S")


@dataclass(frozen=True)
class SessionMeta:
    """What a session file records about the agent, beside the history (every
    format may fill either; None when the file does not say)."""

    # The agent's system prompt as the file records it, when it is metadata and
    # not part of the history (shown and kept, never compacted).
    system_prompt: str | None = None
    # The agent's own last count of the context's tokens.
    recorded_tokens: int | None = None


#: The reference of a session made in memory (``from_messages``), held by no file.
UNSAVED = SessionRef(Path(os.devnull))


def ref_of(path: Path | None) -> SessionRef:
    """The reference of a session held by the file ``path`` (None: made in memory)."""
    return UNSAVED if path is None else SessionRef(path)


@dataclass
class Session:
    """A loaded session: ``ref`` is where it lives (its one identity, made once
    by :func:`formats.registry.resolve`), ``messages`` the compactable history."""

    ref: SessionRef
    format: SessionFormat
    messages: list[Message]
    # Lines the format skipped on load (as the agent does), each naming file:line.
    warnings: list[str] = field(default_factory=list)
    meta: SessionMeta = field(default_factory=SessionMeta)
    # The plugin's own typed state: owned, built and read by ``format`` alone.
    format_state: object = None

    @property
    def path(self) -> Path | None:
        """The file that holds the session (``ref.path``); None for a session
        made in memory."""
        return None if self.ref is UNSAVED else self.ref.path

    @property
    def saved(self) -> bool:
        """Whether a file holds the session (False: made in memory)."""
        return self.ref is not UNSAVED

    def __len__(self) -> int:
        return len(self.messages)

    @property
    def format_name(self) -> str:
        return self.format.name

    def leading_system_indices(self) -> list[int]:
        """The leading run of ``system`` (and ``developer``, OpenAI's name for
        it) messages: the spec's "leading system message(s)"."""
        return list(range(count_leading_system(self.messages)))


@dataclass
class SessionInfo(Located):
    """One session found on this machine, for the picker."""

    ref: SessionRef  # what the loader takes (a file or a folder, or DB#KEY)
    format: str  # the plugin's name ("?" when no format reads it)
    title: str | None = None  # first user message, or the agent's title
    work_dir: str | None = None
    updated: float | None = None  # seconds since the epoch (the file's time when nothing better)
    # The time of the session's last record, as the session itself records it
    # (seconds since the epoch; None when the format records no time).
    last_record: float | None = None
    message_count: int | None = None
    session_id: str | None = None
    error: str | None = None  # set when the session cannot be read
    # Marks of the agent's own, for the picker (e.g. "archived", "a sub-agent's").
    marks: tuple[str, ...] = ()


@dataclass
class WriteOp:
    """What a byte format writes for a compaction: ``data`` is the whole new
    file (``Rotate``, ``BackupReplace``) or the bytes to append
    (``AppendTruncate``). A format whose strategy is not byte-based writes
    through its strategy and has no WriteOp."""

    data: bytes


@dataclass(frozen=True)
class Current:
    """A session's content as it is now, read at once: ``data`` (a file's
    bytes, or a database session's rows exported), its fingerprint and the
    file mode new copies take."""

    data: bytes
    fingerprint: Fingerprint
    mode: int


@dataclass(frozen=True)
class Written:
    """What a strategy's write did: the restore point holding the previous
    content, the fingerprints before and after, and what the audit record must
    hold for this strategy's undo (``undo``: e.g. the offset an append starts at)."""

    backup: Path
    before: Fingerprint
    after: Fingerprint
    undo: dict[str, Any] | None = None


class WriteStrategy(ABC):
    """How a session is written back and undone: a format declares one
    (:attr:`SessionFormat.storage`) and the store drives it, never asking its
    name. A strategy owns the conflict check, the copy kept before a write
    (the restore point), the write, undo, and which restore points exist.

    The format's own copy of its strategy is bound to it (:meth:`bind`, done
    when the format is made), so a method reads the format's hooks
    (``restore_folder``, ``rotation_name``, ``write_op``, ...) from
    :attr:`format` and takes only the session's reference.
    ``formats/strategies.py`` has the four there are: rotate, backup-and-replace,
    append-and-truncate, and a transactional one for databases."""

    #: Recorded in the audit log (as "policy") and shown to people; never compared.
    name: ClassVar[str]
    #: What a write keeps of the current session, for people.
    keeps: ClassVar[str]
    #: How a write is told, for people ("wrote", "appended to").
    verb: ClassVar[str] = "wrote"
    #: True when the session is a file of bytes (the loader reads it, refuses
    #: NUL bytes, and ``--output`` can write a copy); False for rows in a
    #: database (the format's ``read_session`` loads it).
    byte_based: ClassVar[bool] = True
    #: The format this strategy writes for (set by :meth:`bind`).
    format: SessionFormat

    def bind(self, fmt: SessionFormat) -> Self:
        """This strategy, bound to ``fmt`` (a copy: the declared one is shared
        by every format declaring it)."""
        bound = copy.copy(self)
        bound.format = fmt
        return bound

    @abstractmethod
    def current(self, ref: SessionRef) -> Current:
        """The session's content now (raises ``FileNotFoundError`` when there
        is none, ``OSError`` when it cannot be read)."""

    @abstractmethod
    def write(self, old: Session, new: Session, loaded: Fingerprint, now: datetime) -> Written:
        """Write ``new`` (the compacted session) over the loaded ``old``, whose
        format is the strategy's, in this order: the conflict check (the
        content must still have the ``loaded`` fingerprint), the restore point,
        the write. All or nothing: on any failure an ``ApplyError`` of one
        line, and the copy made is removed."""

    @abstractmethod
    def restore_points(self, ref: SessionRef) -> list[tuple[str, Path]]:
        """``(kind, file)`` of each restore point there is, newest first."""

    @abstractmethod
    def keep(
        self, ref: SessionRef, current: Current, now: datetime, *, replaced: bool = False
    ) -> Path:
        """Keep ``current`` as a new restore point; returns it."""

    @abstractmethod
    def put_back(self, ref: SessionRef, data: bytes, current: Current | None) -> None:
        """Make ``data`` (a restore point's content) the session's content
        again; ``current`` is what it holds now (None: nothing)."""

    @abstractmethod
    def keep_description(self, ref: SessionRef) -> str:
        """One line saying what copy of the current session a write keeps."""

    @abstractmethod
    def next_point(self, ref: SessionRef) -> str:
        """The name a new restore point of ``ref`` would take, for people."""

    @abstractmethod
    def count_messages(self, ref: SessionRef, data: bytes) -> int:
        """How many messages the content ``data`` holds (raises
        SessionFormatError when it is not a valid session)."""

    def changed_since(self, record: dict[str, Any], current: Current) -> str:
        """Why the session is no longer what the write ``record`` records left
        (the undo's refusal, after the session's name)."""
        return (
            f"changed since this tool wrote it at {record.get('time')} "
            "(the agent may have added turns)"
        )

    def read_point(self, path: Path) -> bytes:
        """The content a restore point holds (raises OSError)."""
        return path.read_bytes()

    def undo_in_place(self, record: dict[str, Any]) -> int | None:
        """For an undo of the write ``record`` records: a length to cut the
        session back to instead of putting the restore point back (append
        strategies), or None."""
        return None

    def cut(self, ref: SessionRef, current: Current, data: bytes) -> None:
        """Undo in place: cut the session back to ``data``, which it must
        still start with (see :meth:`undo_in_place`)."""
        raise NotImplementedError(f"{self.name} does not undo in place")


def splice(session: Session, plan: CompactionPlan, summary_message: Message) -> list[Message]:
    """The compacted history: leading system message(s), the summary message,
    the kept messages (the spec's compacted session)."""
    if plan.noop:
        raise ValueError(f"cannot compact: {plan.noop}")
    messages = session.messages
    leading = [messages[i] for i in plan.leading_system_indices]
    kept = [messages[i] for i in plan.preserved_indices]
    return leading + [summary_message] + kept


class Named:
    """What every capability of a format names it by."""

    #: The registry key (also shown in the status line and recorded in the audit log).
    name: ClassVar[str]
    #: The file kind, for people ("kimi-cli context.jsonl").
    label: ClassVar[str]
    #: The agent that writes these sessions, for people ("kimi-cli"); "" for none.
    agent: ClassVar[str] = ""


class Finder(Named, ABC):
    """Finding sessions: recognising a file, a session folder, an id, a database
    named alone, and the picker's rows."""

    @abstractmethod
    def recognise(self, path: Path, head: bytes) -> bool:
        """True when ``path`` (its first 64 KiB in ``head``) is this format."""

    def resolve_folder(self, folder: Path) -> Path | None:
        """The session file this format finds in ``folder``, or None."""
        return None

    def find_session(
        self, session_id: str, env: Mapping[str, str], home: Path
    ) -> SessionRef | None:
        """The session (a file, a session folder, or ``DB#KEY``) this format knows
        by ``session_id``, or None."""
        return None

    def only_session(self, path: Path) -> SessionRef | None:
        """For a file that holds many sessions (a database) named alone: the one
        session it holds, else a ``SessionFormatError`` listing them. None for a
        format whose file is the session (the default)."""
        return None

    def discovery_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Where :meth:`discover` looks (for the picker's note); [] when it does not."""
        return []

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        """The sessions of this format on this machine (may be empty)."""
        return []

    def describe(self, path: Path) -> SessionInfo:
        """A cheap picker row for a session given by path."""
        return SessionInfo(SessionRef(path), self.name)

    def short_name(self, ref: SessionRef) -> str:
        """A short name people recognise the session by (titles, the status
        line): the file name (``DB#KEY``'s file name and key for a session in a
        database), unless the agent gives every session the same file name
        (then its session folder says which)."""
        return ref.path.name if ref.key is None else f"{ref.path.name}{KEY_MARK}{ref.key}"


class Codec(Named):
    """Reading and making sessions: a session from messages, its bytes back
    (``dump``), the summary message and the compacted session with what the
    format will write, and the refusals of a write. Reading the store is the
    base's (:class:`FileFormat` ``parse``, or a database's ``read_session``)."""

    def from_messages(
        self, messages: list[Message], path: Path | None = None, meta: SessionMeta | None = None
    ) -> Session:
        """A session of this format holding ``messages``, as a new file of it
        would (the facade's and the tests' way to make one in memory). By
        default refused in one line: an agent's session is only ever a file read
        from disk (its records, not its messages, are what the agent resumes).
        A format whose file is the messages themselves overrides this."""
        raise SessionFormatError(
            f"{path or 'a new session'}: a {self.label} is read from its file; "
            "it cannot be made from messages"
        )

    def dump(self, session: Session) -> bytes:
        """The file's bytes for ``session``: a session loaded and not changed
        dumps to the bytes it was read from. Every byte format implements it;
        by default (a session that is not a file of its own) refused in one line."""
        raise SessionFormatError(
            f"{session.ref}: a {self.label} is not a file of its own, so it "
            "cannot be written to another file; write it in place instead"
        )

    def summary_message(self, summary: str) -> Message:
        """The summary user message as this format writes it."""
        return plain_summary_message(summary)

    def write_refusal(self, session: Session) -> str | None:
        """Why a compaction cannot be written to this loaded session at all
        (e.g. the agent stopped mid-turn), or None. Checked before any request."""
        return None

    def plan_refusal(self, session: Session, plan: CompactionPlan) -> str | None:
        """Why a compaction with this ``plan`` cannot be written to this loaded
        session (e.g. a boundary inside one of the agent's records), naming the
        nearest boundary that can; None when it can. Checked before any request,
        beside the split tool-call check (default: every boundary can)."""
        return None


class Lexicon:
    """The agent's vocabulary, for the extractor and the preserved-tail scan."""

    #: The agent's roles, for the extractor: what its tools do (which write
    #: files, run commands and keep the plan: their real names and argument
    #: names), which of its messages are its bookkeeping and which tool results
    #: its records mark as failed (a plugin's ``roles.ROLES``).
    roles: Vocabulary = PLAIN
    #: Whether the preserved-tail scan skips the agent's bookkeeping
    #: (:meth:`bookkeeping`); False keeps kimi-cli's own scan, which counts it.
    tail_skips_bookkeeping: ClassVar[bool] = True

    @property
    def tools(self) -> ToolRoles:
        """What the agent's tools do (:attr:`roles`' own)."""
        return self.roles.tools

    def bookkeeping(self, message: Message) -> str | None:
        """The kind of the agent's own bookkeeping ``message`` is (a reminder it
        injected, a command's echo, its context, a checkpoint, an attachment, an
        earlier summary: the names in :mod:`kimi_compact_tui.specifics.declare`),
        or None for a message of the conversation. Bookkeeping is never a request
        or an instruction; a user message of it belongs to the turn it was
        injected into, so the preserved-tail scan does not count it and keeps it
        with its prompt (by default :attr:`roles`' own)."""
        return self.roles.bookkeeping(message)

    def tool_failed(self, message: Message) -> bool:
        """True for a tool result the record itself marks as failed."""
        return self.roles.tool_failed(message)

    def know_agents(self, agents: Sequence[Lexicon]) -> None:
        """A fallback format reads messages any agent may have written: it takes
        the tool roles of every agent's format (the registry calls this with its
        specific formats, so a new agent's tools are known without a line here)."""
        self.roles = replace(self.roles, tools=self.roles.tools.merged(*(a.tools for a in agents)))

    def vocabulary(self) -> Vocabulary:
        """What the extractor is told of this format: its tools and bookkeeping."""
        return Vocabulary(self.tools, self.bookkeeping, self.tool_failed)

    def tail_bookkeeping(self, message: Message) -> bool:
        """The preserved-tail scan's predicate: bookkeeping it does not count (an
        earlier summary is not skipped: it stands for the turns it replaced)."""
        if not self.tail_skips_bookkeeping:
            return False
        kind = self.bookkeeping(message)
        return kind is not None and kind != SUMMARY


class Stored(Named):
    """Where a session's restore points go and what a restore must bring back
    in line; the write strategy itself is :attr:`storage`, bound to the format."""

    #: How a compaction is written back and undone (:class:`WriteStrategy`),
    #: declared on the class and bound to the instance when it is made.
    storage: WriteStrategy
    #: Lines a person must read before a write (e.g. "close the agent first").
    write_notes: ClassVar[tuple[str, ...]] = ()

    def rotation_name(self, path: Path, number: int) -> str:
        """The file name of rotation ``number`` (1, 2, ...) of ``path``, for the
        rotate strategy: the agent's own numbering."""
        raise NotImplementedError(f"{self.name} keeps no rotations")

    def rotation_number(self, path: Path, name: str) -> int | None:
        """The rotation number of the file ``name`` beside ``path``, or None
        when it is not a rotation of it."""
        return None

    def restore_folder(self, path: Path) -> Path:
        """Where the restore points (backups) of ``path`` are kept: beside it,
        unless the agent would take them for sessions of its own."""
        return path.parent

    def after_restore(self, path: Path, replaced: bytes | None, restored: bytes) -> list[str]:
        """Run after a restore or undo put ``restored`` in place of ``replaced``
        (None: there was no file) at ``path``: bring what the agent keeps
        derived from the file (an index, a UI projection) back in line with it.
        Returns warning lines for what could not be done (default: nothing to do)."""
        return []


class SessionFormat(Finder, Codec, Lexicon, Stored):
    """One kind of session: its finder, its codec, its vocabulary and its
    storage. Subclass :class:`FileFormat` for a session that is a file of bytes,
    or ``formats.database.DatabaseFormat`` for one session of many in a
    database; set the class attributes and implement the abstract methods;
    every other hook has a default."""

    #: A fallback format is asked only when no specific format (nor a known
    #: unsupported agent file) recognises a file.
    fallback: ClassVar[bool] = False

    def __init__(self) -> None:
        self.storage = self.storage.bind(self)

    def context_usage(
        self, session: Session, env: Mapping[str, str] | None = None
    ) -> ContextUsage | None:
        """The context meter: ``session``'s fill against the point where its agent
        compacts on its own, read by this format's ``usage.py``
        (:mod:`formats.context`); None when the format has none."""
        from kimi_compact_tui.formats.context import reader_of

        reader = reader_of(self.name)
        return None if reader is None else reader(session, env)

    def compacted_session(
        self, session: Session, plan: CompactionPlan, summary: str, output_tokens: int | None
    ) -> Session:
        """The session after the compaction (leading system messages, the
        summary message, the kept messages), with this format's state for the
        write (its usage record, its records to append, ...)."""
        messages = splice(session, plan, self.summary_message(summary))
        return Session(session.ref, self, messages, meta=session.meta)


class FileFormat(SessionFormat):
    """A session that is one file of bytes, read by the loader (NUL bytes
    refused) and parsed here; written by a byte strategy from :meth:`write_op`."""

    #: True when the file is line-based: the loader streams it to
    #: :meth:`parse_lines` instead of reading it whole for :meth:`parse`.
    streams_lines: ClassVar[bool] = False

    @abstractmethod
    def parse(self, data: bytes, path: Path) -> Session:
        """Parse a file's bytes; raise SessionFormatError with one line naming
        the file and place, or skip (with a warning) what the agent skips."""

    def find_session(
        self, session_id: str, env: Mapping[str, str], home: Path
    ) -> SessionRef | None:
        """The session :meth:`find_file` finds by ``session_id``, or None."""
        found = self.find_file(session_id, env, home)
        return None if found is None else SessionRef(found)

    def find_file(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        """The file or session folder this format knows by ``session_id``, or None."""
        return None

    def parse_lines(self, lines: Lines, path: Path) -> Session:
        """Parse a line-based file streamed by :class:`formats.lines.Lines`
        (used when :attr:`streams_lines` is set)."""
        raise NotImplementedError(f"{self.name} does not stream lines")

    def write_op(self, session: Session, compacted: Session) -> WriteOp:
        """What a byte strategy writes for ``compacted`` over the loaded
        ``session`` (the whole file, or the bytes to append). Formats whose
        storage is not byte-based write through their strategy instead."""
        raise NotImplementedError(f"{self.name} writes through its storage strategy")


class MessagesFile(FileFormat):
    """A file that is the messages themselves (no records of an agent around
    them): a session of it can be made from messages, with the state
    :meth:`new_state` gives, and a write is the whole file as :meth:`dump`
    makes it."""

    def new_state(self) -> object:
        """The format state of a session made from messages (None: the format keeps none)."""
        return None

    def from_messages(
        self, messages: list[Message], path: Path | None = None, meta: SessionMeta | None = None
    ) -> Session:
        return Session(
            ref_of(path),
            self,
            list(messages),
            meta=meta or SessionMeta(),
            format_state=self.new_state(),
        )

    def write_op(self, session: Session, compacted: Session) -> WriteOp:
        return WriteOp(self.dump(compacted))


def state_of(session: Session, kind: type[S]) -> S:
    """``session.format_state``, checked to be a ``kind`` (a plugin reads its
    own state only)."""
    state = session.format_state
    if not isinstance(state, kind):
        raise TypeError(
            f"{session.ref}: the session holds no {kind.__name__} "
            f"(it is a {session.format.name} session)"
        )
    return state

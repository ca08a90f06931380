"""The session format contract, and the session it produces.

A format plugin owns one kind of session file. :class:`SessionFormat` declares
every hook the rest of the code calls, with a default where the hook is
optional; nothing outside ``formats/`` reads a format any other way (no
``getattr``, no format names or file names). The registry
(:mod:`formats.registry`) holds the one list of plugins.

A :class:`Session` is what a plugin reads: the messages the engine compacts,
the warnings for lines the agent itself skips, what the file says of the agent
(:class:`SessionMeta`), and the plugin's own typed ``format_state`` (what its
lossless round trip and its write need). ``Session.format`` is the plugin
object itself, so nothing looks a format up again by name.

Adding a format: one module with a subclass of :class:`SessionFormat`, and one
line in ``formats/registry.py`` (``docs/ARCHITECTURE.md`` walks through it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal, TypeVar

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.summary import plain_summary_message
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import ToolRoles, Vocabulary

if TYPE_CHECKING:
    from kimi_compact_tui.formats.lines import Lines

# How a compaction is written back, and so how it is undone:
#   "rotate": the current file is kept under the format's next rotation name
#             (``rotation_name``) and the new file replaces it atomically; undo
#             puts the rotation back;
#   "backup": the current file is copied to a timestamped backup, then replaced;
#             undo puts the backup back;
#   "append": records are appended to a journal (a backup is kept too); earlier
#             bytes never change; undo cuts the journal back to its length
#             before our records, only while it still ends with exactly them.
WritePolicy = Literal["rotate", "backup", "append"]

S = TypeVar("S")

#: What each policy keeps of the current file before a write (for people).
KEEPS = {
    "rotate": "kept as the next rotation",
    "backup": "copied to a timestamped .bak- file",
    "append": "copied to a timestamped .bak- file, then the compaction is appended",
}


@dataclass(frozen=True)
class SessionMeta:
    """What a session file records about the agent, beside the history (every
    format may fill either; None when the file does not say)."""

    # The agent's system prompt as the file records it, when it is metadata and
    # not part of the history (shown and kept, never compacted).
    system_prompt: str | None = None
    # The agent's own last count of the context's tokens.
    recorded_tokens: int | None = None


@dataclass
class Session:
    """A loaded session: ``messages`` is the compactable history."""

    path: Path | None
    format: SessionFormat
    messages: list[Message]
    # Lines the format skipped on load (as the agent does), each naming file:line.
    warnings: list[str] = field(default_factory=list)
    meta: SessionMeta = field(default_factory=SessionMeta)
    # The plugin's own typed state: owned, built and read by ``format`` alone.
    format_state: object = None

    def __len__(self) -> int:
        return len(self.messages)

    @property
    def format_name(self) -> str:
        return self.format.name

    def leading_system_indices(self) -> list[int]:
        """The leading run of ``system`` messages (the spec's "leading system
        message(s)")."""
        out = []
        for i, m in enumerate(self.messages):
            if m.role != "system":
                break
            out.append(i)
        return out


@dataclass
class SessionInfo:
    """One session found on this machine, for the picker."""

    path: Path  # what the loader takes (a file or a folder)
    format: str  # the plugin's name ("?" when no format reads it)
    title: str | None = None  # first user message, or the agent's title
    work_dir: str | None = None
    updated: float | None = None  # seconds since the epoch
    message_count: int | None = None
    session_id: str | None = None
    error: str | None = None  # set when the session cannot be read


@dataclass
class WriteOp:
    """What a compaction writes, as the format's policy says: ``data`` is the
    whole new file ("rotate", "backup") or the bytes to append ("append")."""

    policy: WritePolicy
    data: bytes


def splice(session: Session, plan: CompactionPlan, summary_message: Message) -> list[Message]:
    """The compacted history: leading system message(s), the summary message,
    the kept messages (the spec's compacted session)."""
    if plan.noop:
        raise ValueError(f"cannot compact: {plan.noop}")
    messages = session.messages
    leading = [messages[i] for i in plan.leading_system_indices]
    kept = [messages[i] for i in plan.preserved_indices]
    return leading + [summary_message] + kept


class SessionFormat(ABC):
    """One kind of session file. Subclasses set the class attributes and
    implement the abstract methods; every other hook has a default."""

    #: The registry key (also shown in the status line and recorded in the audit log).
    name: ClassVar[str]
    #: The file kind, for people ("kimi-cli context.jsonl").
    label: ClassVar[str]
    #: The agent that writes these sessions, for people ("kimi-cli"); "" for none.
    agent: ClassVar[str] = ""
    #: How a compaction is written back and undone (see :data:`WritePolicy`).
    write_policy: ClassVar[WritePolicy]
    #: Lines a person must read before a write (e.g. "close the agent first").
    write_notes: ClassVar[tuple[str, ...]] = ()
    #: A fallback format is asked only when no specific format (nor a known
    #: unsupported agent file) recognises a file.
    fallback: ClassVar[bool] = False
    #: True when the file is line-based: the loader streams it to
    #: :meth:`parse_lines` instead of reading it whole for :meth:`parse`.
    streams_lines: ClassVar[bool] = False
    #: What the agent's tools do: which write files, run commands and keep the
    #: plan (their real names and argument names), for the extractor.
    tools: ClassVar[ToolRoles] = ToolRoles()
    #: Whether the preserved-tail scan skips the agent's bookkeeping
    #: (:meth:`bookkeeping`); False keeps kimi-cli's own scan, which counts it.
    tail_skips_bookkeeping: ClassVar[bool] = True

    # --- finding sessions -----------------------------------------------------------
    @abstractmethod
    def recognise(self, path: Path, head: bytes) -> bool:
        """True when ``path`` (its first 64 KiB in ``head``) is this format."""

    def resolve_folder(self, folder: Path) -> Path | None:
        """The session file this format finds in ``folder``, or None."""
        return None

    def find_session(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        """The session (file or folder) this format knows by ``session_id``, or None."""
        return None

    def discovery_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Where :meth:`discover` looks (for the picker's note); [] when it does not."""
        return []

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        """The sessions of this format on this machine (may be empty)."""
        return []

    def describe(self, path: Path) -> SessionInfo:
        """A cheap picker row for a session given by path."""
        return SessionInfo(path, self.name)

    def short_name(self, path: Path) -> str:
        """A short name people recognise the session file by (titles, the
        status line): the file name, unless the agent gives every session the
        same file name (then its session folder says which)."""
        return path.name

    # --- reading and writing the file -------------------------------------------------
    @abstractmethod
    def parse(self, data: bytes, path: Path) -> Session:
        """Parse a file's bytes; raise SessionFormatError with one line naming
        the file and place, or skip (with a warning) what the agent skips."""

    def parse_lines(self, lines: Lines, path: Path) -> Session:
        """Parse a line-based file streamed by :class:`formats.lines.Lines`
        (used when :attr:`streams_lines` is set)."""
        raise NotImplementedError(f"{self.name} does not stream lines")

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

    @abstractmethod
    def dump(self, session: Session) -> bytes:
        """The file's bytes for ``session``: a session loaded and not changed
        dumps to the bytes it was read from."""

    # --- the compaction ---------------------------------------------------------------
    def bookkeeping(self, message: Message) -> str | None:
        """The kind of the agent's own bookkeeping ``message`` is (a reminder it
        injected, a command's echo, its context, a checkpoint, an attachment, an
        earlier summary: the names in :mod:`kimi_compact_tui.specifics.declare`),
        or None for a message of the conversation. Bookkeeping is never a request
        or an instruction; a user message of it belongs to the turn it was
        injected into, so the preserved-tail scan does not count it and keeps it
        with its prompt (formats that mark none: None)."""
        return None

    def tool_failed(self, message: Message) -> bool:
        """True for a tool result the record itself marks as failed."""
        return False

    def vocabulary(self) -> Vocabulary:
        """What the extractor is told of this format: its tools and bookkeeping."""
        return Vocabulary(self.tools, self.bookkeeping, self.tool_failed)

    def tail_bookkeeping(self, message: Message) -> bool:
        """The preserved-tail scan's predicate: bookkeeping it does not count."""
        return self.tail_skips_bookkeeping and self.bookkeeping(message) is not None

    def summary_message(self, summary: str) -> Message:
        """The summary user message as this format writes it."""
        return plain_summary_message(summary)

    def compacted_session(
        self,
        session: Session,
        plan: CompactionPlan,
        summary: str,
        output_tokens: int | None,
    ) -> Session:
        """The session after the compaction (leading system messages, the
        summary message, the kept messages), with this format's state for the
        write (its usage record, its records to append, ...)."""
        messages = splice(session, plan, self.summary_message(summary))
        return Session(session.path, self, messages, meta=session.meta)

    def write_refusal(self, session: Session) -> str | None:
        """Why a compaction cannot be written to this loaded session at all
        (e.g. the agent stopped mid-turn), or None. Checked before any request."""
        return None

    @abstractmethod
    def write_op(self, session: Session, compacted: Session) -> WriteOp:
        """What to write for ``compacted`` over the loaded ``session``."""

    # --- restore points (the undo rule) ------------------------------------------------
    def rotation_name(self, path: Path, number: int) -> str:
        """The file name of rotation ``number`` (1, 2, ...) of ``path``, for the
        "rotate" policy: the agent's own numbering."""
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


def state_of(session: Session, kind: type[S]) -> S:
    """``session.format_state``, checked to be a ``kind`` (a plugin reads its
    own state only)."""
    state = session.format_state
    if not isinstance(state, kind):
        raise TypeError(
            f"{session.path}: the session holds no {kind.__name__} "
            f"(it is a {session.format.name} session)"
        )
    return state

"""The base of the journal formats: sessions an agent appends records to.

kimi-code's ``wire.jsonl``, Claude Code transcripts, Codex rollouts and Gemini
CLI sessions are all written the same way: the bytes read are never changed,
and a compaction is records appended after them (:class:`AppendTruncate`).
:class:`JournalFormat` holds what that means once:

- the state a plugin keeps is a :class:`JournalState`: the bytes read
  (``data``) and, for a compacted session, the records to append
  (``appended``); ``dump`` is the two together;
- ``write_op``: the plugin's refusals, then a check that the compacted session
  was built from this very one, then the bytes to append;
- ``compacted_session``: the no-op guard, and the leading-system guard for
  agents whose compaction cannot keep system messages, then the plugin's
  :meth:`JournalFormat.compaction` (one :class:`Compaction` in);
- discovery through the plugin's ``finder`` (a module of its own, or a
  :class:`FileFinder` for one file a session), named with its state type and
  its agent's roles in the class line
  (``class X(JournalFormat, state=S, finder=discover, roles=roles.ROLES)``);
  what the finder finds is sorted newest first here.

A plugin supplies its records (``parse``, ``compaction``), its message mapping
and its refusals (``refusal_of``, ``compacted_refusal``, ``write_refusal``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol, cast

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats.base import (
    FileFormat,
    Session,
    SessionInfo,
    SessionMeta,
    WriteOp,
)
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.formats.strategies import AppendTruncate
from kimi_compact_tui.model import Message
from kimi_compact_tui.specifics.declare import Vocabulary
from kimi_compact_tui.wording import count


@dataclass(frozen=True)
class Compaction:
    """What a journal plugin turns into the records it appends."""

    session: Session
    plan: CompactionPlan  # checked: not a no-op, and no leading system it cannot keep
    summary: str
    output_tokens: int | None
    now: datetime | None = None  # the records' time (None: the clock; tests fix it)
    new_id: Callable[[], str] | None = None  # fresh record ids (None: random; tests fix them)


class JournalState(Protocol):
    """What every journal plugin's state holds."""

    @property
    def data(self) -> bytes:
        """The journal's bytes as read (a write appends to exactly them)."""

    @property
    def appended(self) -> bytes:
        """The records a compaction appends (b"" for a session as loaded)."""


class SessionFiles(Protocol):
    """What a journal plugin finds its sessions with: a module of its own, or a
    :class:`FileFinder`."""

    def discover(
        self,
        env: Mapping[str, str],
        home: Path,
        format_name: str,
        read: Callable[[bytes, Path], Any],
    ) -> Iterable[SessionInfo]:
        """The sessions found on this machine (in any order), each file read
        with ``read``."""

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Where the picker looks for these sessions."""


@dataclass(frozen=True)
class FileFinder:
    """A :class:`SessionFiles` for an agent that keeps each session in a file of its
    own: the files there are (``files``), a picker row for one (``describe``)
    and where they are looked for (``where``)."""

    files: Callable[[Mapping[str, str], Path], Iterable[Path]]
    describe: Callable[[Path, str, Callable[[bytes, Path], Any]], SessionInfo]
    where: Callable[[Mapping[str, str], Path], list[Path]]

    def discover(
        self, env: Mapping[str, str], home: Path, name: str, read: Callable[[bytes, Path], Any]
    ) -> list[SessionInfo]:
        return [self.describe(path, name, read) for path in self.files(env, home)]

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return self.where(env, home)


class JournalFormat(FileFormat):
    """A session the agent appends records to (see the module docstring)."""

    storage = AppendTruncate()
    #: The plugin's state type (a :class:`JournalState`).
    state_type: ClassVar[type[Any]]
    #: The module that finds these sessions on this machine.
    finder: ClassVar[SessionFiles]

    def __init_subclass__(
        cls, *, state: type[Any], finder: SessionFiles, roles: Vocabulary, **kw: Any
    ) -> None:
        """A plugin names its state type, its finder module and its agent's
        roles in its class line:
        ``class MyFormat(JournalFormat, state=MyState, finder=discover, roles=roles.ROLES)``."""
        super().__init_subclass__(**kw)
        cls.state_type, cls.finder, cls.roles = state, finder, roles

    #: True when the agent's compaction cannot keep leading system messages.
    drops_leading_system: ClassVar[bool] = True

    # --- finding sessions -----------------------------------------------------------
    def reader(self, data: bytes, path: Path) -> Any:
        """How discovery reads a file (default: :meth:`parse`)."""
        return self.parse(data, path)

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        found = self.finder.discover(env, home, self.name, self.reader)
        return sorted(found, key=lambda info: info.updated or 0, reverse=True)

    def discovery_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return self.finder.roots(env, home)

    # --- reading and writing ----------------------------------------------------------
    def loaded(self, path: Path, state: Any, messages: Iterable[Message]) -> Session:
        """The session read from ``path``: ``state`` (the plugin's) holds the
        ``warnings`` and the agent's ``recorded_tokens``."""
        meta = SessionMeta(recorded_tokens=state.recorded_tokens)
        return Session(SessionRef(path), self, list(messages), list(state.warnings), meta, state)

    def journal(self, session: Session) -> JournalState | None:
        """The session's journal state, or None when it is not one of ours."""
        state = session.format_state
        return cast(JournalState, state) if isinstance(state, self.state_type) else None

    def dump(self, session: Session) -> bytes:
        state = self.journal(session)
        if state is None:
            raise SessionFormatError(
                f"{session.path}: a {self.label} is written by appending records to the file "
                "it was read from"
            )
        return state.data + state.appended

    def write_refusal(self, session: Session) -> str | None:
        state = self.journal(session)
        return f"not a loaded {self.agent} session" if state is None else self.refusal_of(state)

    def refusal_of(self, state: Any) -> str | None:
        """Why a compaction cannot be appended to this loaded journal (e.g.
        it ends mid-turn), or None."""
        return None

    def compacted_refusal(self, state: Any) -> str | None:
        """Why the compacted session's records cannot be written (e.g. a
        boundary inside a record), or None."""
        return None

    def write_op(self, session: Session, compacted: Session) -> WriteOp:
        refusal = self.write_refusal(session)
        if refusal:
            raise ApplyError(f"{session.path}: {refusal}")
        state, new = self.journal(session), self.journal(compacted)
        refused = None if new is None else self.compacted_refusal(new)
        if refused:
            raise ApplyError(f"{session.path}: {refused}")
        if state is None or new is None or new.data is not state.data or not new.appended:
            raise ApplyError(f"{session.path}: the compacted session was not built from this one")
        return WriteOp(new.appended)

    # --- the compaction ---------------------------------------------------------------
    def compacted_session(
        self,
        session: Session,
        plan: CompactionPlan,
        summary: str,
        output_tokens: int | None,
        *,
        now: datetime | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> Session:
        """The guards (:meth:`check_plan`), then the plugin's :meth:`compaction`."""
        self.check_plan(session, plan)
        return self.compaction(Compaction(session, plan, summary, output_tokens, now, new_id))

    @abstractmethod
    def compaction(self, c: Compaction) -> Session:
        """The session after the compaction ``c``, its state holding the
        records to append (``appended``)."""

    def check_plan(self, session: Session, plan: CompactionPlan) -> None:
        """The guards before the records of a compaction are built."""
        if plan.noop:
            raise ValueError(f"cannot compact: {plan.noop}")
        if plan.leading and self.drops_leading_system:
            raise ApplyError(
                f"{session.path}: the history starts with {count(plan.leading, 'system message')}, "
                f"which a {self.agent} compaction cannot keep"
            )

"""The one walk over a range's messages that every collector shares.

Each message is read once into a :class:`Seen` (its role, its text as a
terminal shows it, its tool calls, and for a person's prompt the text without
the agent's inline blocks); the agent's bookkeeping is skipped and an earlier
summary is handed to the collectors apart. What several kinds need (the
commands run and their results, the files written, the test runs that passed,
the paths named) is kept on the :class:`Walk` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from kimi_compact_tui.model import Message
from kimi_compact_tui.sanitize import plain_text
from kimi_compact_tui.specifics.declare import SUMMARY, UNSENT, Vocabulary
from kimi_compact_tui.specifics.items import Buckets, Item
from kimi_compact_tui.specifics.patterns import SYSTEM_TAG_RE
from kimi_compact_tui.specifics.views import Call, arg_strings, parsed_calls, without_tags


@dataclass
class Run:
    """One command run: its call, and what its result (or a later poll) recorded."""

    command: str
    key: str
    index: int
    call_id: str | None
    status: str | None = None
    failed: bool | None = None


@dataclass(slots=True)
class Seen:
    """One message of the conversation as the collectors see it."""

    index: int
    message: Message
    role: str
    text: str  # as a terminal shows it; a prompt: the person's own words only
    calls: list[Call]
    is_tool: bool
    #: A tool result's errors, (key, shown, (type, message)) each, once read.
    errors: list[tuple[str, str, tuple[str, str]]] | None = None
    #: A tool result: the command run it is the result of (a poll's too).
    run: Run | None = None
    #: A tool result the record marks as failed or refused, once read.
    flagged: bool | None = None
    #: A prompt the person saw in the agent's UI that the agent never sent to its
    #: model (declared :data:`~.declare.UNSENT`).
    unsent: bool = False

    # read once, by every collector that needs them (plain fields, not
    # cached_property: its lock costs more than the lower-casing of a short text)
    _low: str | None = None
    _hay: str | None = None

    @property
    def low(self) -> str:
        """The text lower-cased."""
        low = self._low
        if low is None:
            low = self._low = self.text.lower()
        return low

    @property
    def hay(self) -> str:
        """The text and the tool calls (names and argument strings)."""
        hay = self._hay
        if hay is None:
            if not self.calls:
                hay = self.text
            else:
                parts = [self.text]
                for name, args, _ in self.calls:
                    parts.append(name)
                    parts.extend(arg_strings(args))
                hay = plain_text("\n".join(c for c in parts if c))
            self._hay = hay
        return hay


@dataclass
class Walk:
    """The state the collectors share: the buckets, the vocabulary, and what
    several kinds read (runs, files written, passing test runs, paths)."""

    messages: Sequence[Message]
    vocabulary: Vocabulary
    out: Buckets = field(default_factory=Buckets)
    runs: list[Run] = field(default_factory=list)
    runs_by_id: dict[str, Run] = field(default_factory=dict)
    edits: list[int] = field(default_factory=list)  # messages that wrote a file
    #: A file only refused or failed writes named (never written): its path → status.
    unwritten: dict[str, str] = field(default_factory=dict)
    passes: list[int] = field(default_factory=list)  # results: tests passed, none failed
    raw_paths: list[tuple[str, int]] = field(default_factory=list)
    replies: list[int] = field(default_factory=list)  # the assistant's messages
    errors_at: list[tuple[Item, int, Run | None]] = field(default_factory=list)
    processes: dict[str, Run] = field(default_factory=dict)  # still running, by their id
    polls_by_id: dict[str, Run] = field(default_factory=dict)  # poll call id → its run
    #: A command's errors: its key → the keys of the errors its last failed result showed.
    causes: dict[str, list[str]] = field(default_factory=dict)
    fixes: dict[str, str] = field(default_factory=dict)  # a resolved error → what fixed it
    findings: list[tuple[int, str]] = field(default_factory=list)  # each turn's last words
    root: str | None = None
    plan_message: int | None = None

    def run_of(self, message: Message) -> Run | None:
        return self.runs_by_id.get(message.tool_call_id or "")


#: What :attr:`Collector.yields` calls :attr:`Walk.findings`.
FINDINGS = "findings"


class Collector:
    """One kind (or a few tied ones): sees each message in order, then finishes."""

    #: False: :meth:`see` ignores tool results (the walk does not call it for them).
    reads_tool_results = True
    #: The roles of the other messages :meth:`see` reads (None: every role); the
    #: walk calls it for no other.
    roles: frozenset[str] | None = None
    #: The messages without a tool call :meth:`see` reads: ``"tool"`` for tool
    #: results, a role for the others (None: all it reads); the walk calls it for
    #: no other message without a call.
    reads_without_calls: frozenset[str] | None = None
    #: What it yields that no other collector reads (a kind, or ``"findings"``):
    #: a caller that reads none of it may leave it out. None: it yields a kind
    #: every caller reads, or feeds another collector.
    yields: frozenset[str] | None = None

    def see(self, m: Seen, w: Walk) -> None:
        """Read one message of the conversation."""

    def earlier_summary(self, index: int, text: str, w: Walk) -> None:
        """Read an earlier compaction's summary at ``index`` (never a request)."""

    def finish(self, w: Walk) -> None:
        """Add what needs the whole range."""


def reads(c: Collector, is_tool: bool, role: str, of: tuple[str, bool]) -> bool:
    """Whether ``c`` reads a message of kind ``of`` (see :func:`walk`)."""
    if not (c.reads_tool_results if is_tool else c.roles is None or role in c.roles):
        return False
    kind, calls = of
    return calls or c.reads_without_calls is None or kind in c.reads_without_calls


def walk(
    messages: Sequence[Message],
    indices: Iterable[int],
    vocabulary: Vocabulary,
    collectors: Sequence[Collector],
    is_earlier_summary: Callable[[str], bool],
) -> Walk:
    """Run ``collectors`` over ``messages[i]`` for ``i`` in ``indices``, then
    finish each in order."""
    w = Walk(messages, vocabulary)
    tags = vocabulary.tools.inline_tags
    tags = ("system-reminder", *tags) if tags else ()
    # who sees what: a collector that reads no message is never called for one
    seeing = [c for c in collectors if type(c).see is not Collector.see]
    # who reads a message of each kind (a tool result or a role, with or without calls)
    readers_of: dict[tuple[str, bool], list[Callable[[Seen, Walk], None]]] = {}
    for index in indices:
        message = messages[index]
        role = message.role
        kind = vocabulary.bookkeeping(message)
        raw = message.text()
        if kind == SUMMARY or (role == "user" and is_earlier_summary(raw)):
            text = plain_text(raw)
            for c in collectors:
                c.earlier_summary(index, text, w)
            continue
        if kind is not None and kind != UNSENT:
            continue  # the agent's bookkeeping: never a request, a rule, a path or a number
        text = plain_text(raw)
        is_tool = message.is_tool_result()
        if role == "user" and not is_tool:
            text = without_tags(text, tags) if tags else text.strip()
            text = SYSTEM_TAG_RE.sub("", text).strip() if "<system>" in text else text
        if role == "assistant":
            w.replies.append(index)
        seen = Seen(
            index, message, role, text, parsed_calls(message), is_tool, unsent=kind == UNSENT
        )
        of = ("tool" if is_tool else role, bool(seen.calls))
        readers = readers_of.get(of)
        if readers is None:
            readers = readers_of[of] = [c.see for c in seeing if reads(c, is_tool, role, of)]
        for see in readers:
            see(seen, w)
    for c in collectors:
        c.finish(w)
    return w

"""Reading the messages out of a compaction request.

The request's synthetic user message is a list of text parts: for each sent
message a header part (``## Message N\\nRole: <role>\\nContent:\\n``, numbered from
1) followed by that message's own text parts unchanged, then one final prompt
part. The messages are read back from that list part by part: a part is a header
only when it is exactly the header of the next message number, so no text is
split apart or searched. The leading system messages (sent but kept, the plan's
``leading``) are told apart from the range the summary replaces.

A request not yet built is read from what it is built from
(:class:`~kimi_compact_tui.compaction.request.SentRange`) instead, each
message's parts masked and read when first asked for: the offline summary reads
only the few messages it needs whole, and the request is never built for it
(but for a custom instruction, which has it read every message: they are then
masked in one pass, as the request is built).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from kimi_compact_tui.compaction.plan import LEADING_ROLES
from kimi_compact_tui.compaction.request import CUSTOM_INSTRUCTION_HEADER, SentRange
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.providers.base import SummaryInput
from kimi_compact_tui.sanitize import plain_text

_HEADER_END = "\nContent:\n"
FENCE_RE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1[ \t]*$", re.M | re.S)
SYSTEM_TAG_RE = re.compile(r"<system>(.*?)</system>", re.S)
# Injected blocks: ``<system>`` notes and ``<system-reminder>`` (plan mode).
REMINDER_RE = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)
INJECTED_RE = re.compile(
    r"\A(?:\s*(?:<system-reminder>.*?(?:</system-reminder>|\Z)|<system>.*?</system>))+\s*\Z",
    re.S,
)


class TMessage:
    """One sent message: its number in the request, its role and its text parts
    (read when first asked for, when given as a function that reads them)."""

    __slots__ = ("number", "role", "_parts", "_read")

    def __init__(
        self,
        number: int,
        role: str,
        parts: list[str] | None = None,
        *,
        read: Callable[[], list[str]] | None = None,
    ) -> None:
        self.number = number
        self.role = role
        self._parts = parts if parts is not None or read is not None else []
        self._read = read

    def __repr__(self) -> str:
        return f"TMessage({self.number!r}, {self.role!r}, {self.parts!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TMessage):
            return NotImplemented
        return (self.number, self.role, self.parts) == (other.number, other.role, other.parts)

    __hash__ = None  # type: ignore[assignment]

    @property
    def parts(self) -> list[str]:
        parts = self._parts
        if parts is None:
            read = self._read
            assert read is not None  # __init__ sets one of the two
            parts = self._parts = read()
            self._read = None
        return parts

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def injected(self) -> bool:
        """A user message that is only injected blocks (``<system-reminder>`` such as
        plan mode's, or ``<system>`` notes): not something the user asked."""
        return self.role == "user" and bool(self.parts) and bool(INJECTED_RE.match(self.text))

    @property
    def own_text(self) -> str:
        """The text with injected ``<system-reminder>`` blocks removed."""
        return (
            REMINDER_RE.sub("", self.text).strip()
            if "<system-reminder>" in self.text
            else (self.text)
        )

    @property
    def prose(self) -> str:
        """The text without code fences, ``<system>`` notes and reminders, parts on
        separate lines."""
        joined = "\n".join(SYSTEM_TAG_RE.sub(" ", REMINDER_RE.sub(" ", p)) for p in self.parts)
        return FENCE_RE.sub(" ", joined)


@dataclass
class Transcript:
    """The sent messages; the first ``leading`` are leading system messages that the
    compaction keeps, the rest (``compacted``) are what the summary replaces.
    ``instruction`` is the user's custom instruction (from the prompt part)."""

    messages: list[TMessage]
    leading: int = 0
    instruction: str = ""

    @property
    def compacted(self) -> list[TMessage]:
        return self.messages[self.leading :]


def header_role(part: str, number: int) -> str | None:
    """The role when ``part`` is exactly the header of message ``number``, else None."""
    prefix = f"## Message {number}\nRole: "
    if not (part.startswith(prefix) and part.endswith(_HEADER_END)):
        return None
    role = part[len(prefix) : len(part) - len(_HEADER_END)]
    return None if "\n" in role else role.strip()


def _request_parts(request_messages: Any) -> list[str]:
    if not isinstance(request_messages, Sequence) or not request_messages:
        return []
    user = request_messages[-1] if len(request_messages) < 2 else request_messages[1]
    content = user.get("content") if isinstance(user, Mapping) else None
    if not isinstance(content, list):
        return []  # not a compaction request: it always sends a list of parts
    return [
        str(p.get("text") or "")
        for p in content
        if (type(p) is dict or isinstance(p, Mapping)) and p.get("type") == "text"
    ]


def read_parts(parts: Sequence[str]) -> list[TMessage]:
    """The messages in a request's text parts (the final prompt part dropped), as a
    terminal shows them: escape sequences and controls dropped, an OSC 8 link's
    target written out (:func:`~kimi_compact_tui.sanitize.plain_text`)."""
    out: list[TMessage] = []
    with gc_paused():  # a message and its list each: no cycles for a collection to find
        for part in parts[:-1]:  # the final part is the prompt (and any custom instruction)
            if part.endswith(_HEADER_END):  # what every header ends with: one test, no f-string
                role = header_role(part, len(out) + 1)
                if role is not None:
                    out.append(TMessage(len(out) + 1, role))
                    continue
            if out:
                out[-1].parts.append(plain_text(part))
    return out


def custom_instruction_of(prompt_part: str) -> str:
    """The custom instruction appended to the prompt part (kimi-cli's wording:
    :data:`~kimi_compact_tui.compaction.request.CUSTOM_INSTRUCTION_HEADER`), or ""."""
    at = prompt_part.find(CUSTOM_INSTRUCTION_HEADER)
    return "" if at < 0 else prompt_part[at + len(CUSTOM_INSTRUCTION_HEADER) :]


def read_sent(sent: SentRange) -> list[TMessage] | None:
    """The messages a request not yet built will send, each one's parts read
    (masked as the request masks them, then as a terminal shows them) when
    first asked for: what :func:`read_parts` reads from the built request,
    without building it. None when a header could hold a secret (a role
    other than the usual ones): then the request is read as built.

    (Read from the built request's parts, a text part that is exactly the
    next message's header would start a message of its own; read here, it
    stays the text it is.)"""
    if not sent.header_plain():
        return None
    messages = sent.messages
    with gc_paused():
        return [
            TMessage(number, messages[index].role, read=partial(_sent_parts, sent, index))
            for number, index in enumerate(sent.indices, 1)
        ]


def _sent_parts(sent: SentRange, index: int) -> list[str]:
    return [plain_text(t) for t in sent.masked(sent.messages[index].text_parts())]


def read_request(request: SummaryInput) -> Transcript:
    """The transcript of a :class:`CompactionRequest` (or of its body)."""
    if isinstance(request, Mapping):
        parts = _request_parts(request.get("messages"))
        messages = read_parts(parts)
        leading = 0
        while leading < len(messages) and messages[leading].role in LEADING_ROLES:
            leading += 1
        instruction = custom_instruction_of(parts[-1]) if parts else ""
        return Transcript(messages, leading, instruction)
    sent = request.sent
    if sent is not None and not request.built:
        prompt_part = sent.masked([sent.prompt_part])[0]
        instruction = custom_instruction_of(prompt_part)
        # a custom instruction has the summary read every message: masked in one
        # batch as the request is built, they cost less than one by one
        lazy = None if instruction.strip() else read_sent(sent)
        if lazy is not None:
            return Transcript(lazy, min(request.plan.leading, len(lazy)), instruction)
    parts = _request_parts(request.messages)
    messages = read_parts(parts)
    leading = min(request.plan.leading, len(messages))
    return Transcript(messages, leading, custom_instruction_of(parts[-1]) if parts else "")

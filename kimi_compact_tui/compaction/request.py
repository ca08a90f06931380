"""The compaction request: exactly what kimi-cli sends for ``/compact``.

Two messages: the generic compactor system prompt, then one user message
whose content is a list of text parts — for each message in the request
range a header part ``## Message N\\nRole: <role>\\nContent:\\n`` followed by
that message's text parts unchanged, then one final part ``"\\n" + prompt``
with the custom instructions appended to that same part. Secrets in those
texts are masked (:func:`masked_parts`, the one deviation, and only where
a secret was: a session with nothing to mask gives kimi-cli's request byte
for byte; the headers of the usual roles hold none and are left out of it).

A revision (:func:`revision_request`) is a deliberate deviation from those two
messages: the same two, unchanged, then each round's summary (an assistant
message) and the reviewer's feedback on it (a user message), oldest first,
the oldest rounds left out when the request would not fit (:func:`fit_rounds`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.tokens import estimate_tokens, token_counts, tokens_from_counts
from kimi_compact_tui.model import Message
from kimi_compact_tui.secrets import mask_texts

COMPACTOR_SYSTEM_PROMPT = "You are a helpful assistant that compacts conversation context."
CUSTOM_INSTRUCTION_HEADER = (
    "\n\n**User's Custom Compaction Instruction:**\n"
    "The user has specifically requested the following focus during compaction. "
    "You MUST prioritize this instruction above the default compression priorities:\n"
)
# Keys that would bring tools back into the request; never sent.
TOOL_KEYS = ("tools", "tool_choice", "functions", "function_call", "parallel_tool_calls")
# Keys the body builder owns.
RESERVED_KEYS = ("messages", "stream", "disable_all_tools")


def message_header(number: int, role: str) -> str:
    return f"## Message {number}\nRole: {role}\nContent:\n"


def build_prompt_part(prompt_text: str, custom_instruction: str = "") -> str:
    text = "\n" + prompt_text
    if custom_instruction:
        text += CUSTOM_INSTRUCTION_HEADER + custom_instruction
    return text


#: The roles whose header part (``message_header``) holds nothing to mask: a
#: number and fixed words. Masking leaves those parts out (a test checks that
#: the masker leaves them as they are).
PLAIN_ROLES = frozenset({"user", "assistant", "tool", "system", "developer", "function"})


def build_compaction_input_parts(
    messages: Sequence[Message],
    request_indices: Iterable[int],
    prompt_text: str,
    custom_instruction: str = "",
) -> list[str]:
    """The text parts of the synthetic user message, in order."""
    prompt_part = build_prompt_part(prompt_text, custom_instruction)
    return _parts(messages, request_indices, prompt_part)


def _parts(
    messages: Sequence[Message],
    request_indices: Iterable[int],
    prompt_part: str,
    maskable: list[int] | None = None,
) -> list[str]:
    """The text parts; ``maskable`` gets the indices of those that can hold a
    secret: all but the headers of :data:`PLAIN_ROLES`."""
    parts: list[str] = []
    for number, index in enumerate(request_indices, 1):
        message = messages[index]
        role = message.role
        texts = message.text_parts()
        if maskable is not None:
            at = len(parts)
            if not (isinstance(role, str) and role in PLAIN_ROLES):
                maskable.append(at)
            maskable.extend(range(at + 1, at + 1 + len(texts)))
        parts.append(message_header(number, role))
        parts.extend(texts)
    if maskable is not None:
        maskable.append(len(parts))
    parts.append(prompt_part)
    return parts


def estimate_request_tokens(
    messages: Sequence[Message],
    request_indices: Iterable[int],
    prompt_text: str,
    custom_instruction: str = "",
    text_counts: tuple[int, int, int] | None = None,
) -> int:
    """``CompactionRequest.estimated_input_tokens`` without building the request:
    the token counts of the system prompt, every header and text part and the
    prompt part, added up (the same figure, exactly, but for what masking
    changed: a few tokens per masked secret). ``text_counts``: the
    summed counts of the range's text parts, when already known."""
    header_counts: dict[Any, tuple[int, int, int]] = {}
    non_ascii = punct = plain = 0
    known = text_counts is not None
    for number, index in enumerate(request_indices, 1):
        message = messages[index]
        role = message.role
        counts = header_counts.get(role)
        if counts is None:  # the header without its number, once per role
            counts = header_counts[role] = token_counts(message_header(0, role)[:-1] + "!")
        # The number's digits are plain ASCII; "0" and "!" stood in for them above.
        non_ascii, punct = non_ascii + counts[0], punct + counts[1]
        plain += counts[2] - 2 + len(str(number)) + 1
        if not known:
            for piece in message.text_parts():
                a, b, c = token_counts(piece)
                non_ascii, punct, plain = non_ascii + a, punct + b, plain + c
    if text_counts is not None:
        non_ascii, punct, plain = (
            non_ascii + text_counts[0],
            punct + text_counts[1],
            plain + text_counts[2],
        )
    a, b, c = token_counts(build_prompt_part(prompt_text, custom_instruction))
    transcript = tokens_from_counts((non_ascii + a, punct + b, plain + c))
    return estimate_tokens(COMPACTOR_SYSTEM_PROMPT) + transcript


def build_kimi_compaction_request_session(
    messages: Sequence[Message],
    request_indices: Iterable[int],
    prompt_text: str,
    custom_instruction: str = "",
    *,
    mask: bool = False,
) -> list[dict[str, Any]]:
    """The two request messages: generic compactor system prompt, then the
    synthetic user message (a list of text parts); with ``mask``, the
    secrets in those parts masked (:func:`masked_parts`)."""
    prompt_part = build_prompt_part(prompt_text, custom_instruction)
    return _session_messages(SentRange(messages, list(request_indices), prompt_part, mask))


def masked_parts(parts: list[str], maskable: Iterable[int] | None = None) -> list[str]:
    """``parts`` with the secrets masked (the one masker,
    ``secrets.mask_texts``: a quick prefilter, then the masker on the texts it
    lets through), in place: only those at ``maskable`` (all by default) can
    hold one."""
    at = list(range(len(parts)) if maskable is None else maskable)
    texts = [parts[i] for i in at]
    for i, before, after in zip(at, texts, mask_texts(texts), strict=True):
        if after is not before:
            parts[i] = after
    return parts


def merged_request_config(
    compaction_cfg: dict[str, Any],
    compaction_model: str | None = None,
    base_model: str | None = None,
) -> dict[str, Any]:
    """Request config: base model, then ``settings_overrides``, then the
    effective ``compaction_model``, then ``disable_all_tools: True`` — set last
    so that no override can bring tools back."""
    config: dict[str, Any] = {}
    if base_model:
        config["model"] = base_model
    config.update(compaction_cfg.get("settings_overrides") or {})
    model = compaction_model or compaction_cfg.get("compaction_model")
    if model:
        config["model"] = model
    config["disable_all_tools"] = True
    return config


def build_http_body(
    request_messages: list[dict[str, Any]], request_config: dict[str, Any]
) -> dict[str, Any]:
    """The JSON body POSTed to an OpenAI-compatible ``/chat/completions``.
    Never carries ``tools``/``tool_choice`` (the config always disables them),
    never a key or header."""
    body: dict[str, Any] = {"model": request_config.get("model")}
    for key, value in request_config.items():
        if key in RESERVED_KEYS or key in TOOL_KEYS or key == "model":
            continue
        body[key] = value
    body["messages"] = request_messages
    body["stream"] = True
    if not request_config.get("disable_all_tools", False):  # pragma: no cover - guarded above
        raise AssertionError("compaction requests are always built with tools disabled")
    return body


@dataclass(frozen=True)
class RevisionRound:
    """One round of a revision: the summary the model wrote (or the reviewer
    edited), and the reviewer's feedback on it."""

    summary: str
    feedback: str

    def turns(self) -> list[dict[str, Any]]:
        """The round as two request messages: the summary as the assistant's
        answer, then the feedback as the user's reply."""
        return [
            {"role": "assistant", "content": self.summary},
            {"role": "user", "content": self.feedback},
        ]

    def estimated_tokens(self) -> int:
        return estimate_tokens(self.summary) + estimate_tokens(self.feedback)


#: The most a revision request may hold (estimated input tokens) when the
#: provider states no context size: under a 128k-token window, with room left
#: for the revised summary.
REVISION_INPUT_BUDGET = 120_000


def fit_rounds(
    base_tokens: int, rounds: Sequence[RevisionRound], budget: int = REVISION_INPUT_BUDGET
) -> tuple[list[RevisionRound], int]:
    """The rounds a revision request keeps, and how many it leaves out: the
    latest round always stays (it is the one being revised); earlier rounds
    are kept newest first while the request (``base_tokens``: the compaction
    request's own estimate) stays within ``budget``, so the oldest go first,
    and a round is never kept after an older one was left out."""
    if not rounds:
        return [], 0
    kept = [rounds[-1]]
    total = base_tokens + rounds[-1].estimated_tokens()
    for earlier in reversed(rounds[:-1]):
        cost = earlier.estimated_tokens()
        if total + cost > budget:
            break
        kept.insert(0, earlier)
        total += cost
    return kept, len(rounds) - len(kept)


@dataclass(frozen=True)
class SentRange:
    """What a request sends before it is built: the session's messages at
    ``indices``, the prompt part, and whether their secrets are masked."""

    messages: Sequence[Message]
    indices: Sequence[int]
    prompt_part: str
    mask: bool = True

    def header_plain(self) -> bool:
        """Every header holds nothing to mask (the usual roles, :data:`PLAIN_ROLES`)."""
        messages = self.messages
        return all(
            isinstance(role := messages[i].role, str) and role in PLAIN_ROLES for i in self.indices
        )

    def masked(self, texts: list[str]) -> list[str]:
        """``texts`` as the built request holds them (masked, when it masks)."""
        return mask_texts(texts) if self.mask and texts else texts


class CompactionRequest:
    """The request for a plan: its two messages (:attr:`messages`) and the
    HTTP body (:attr:`body`), built, with every secret masked, on first
    access (:attr:`sent` holds what they are built from; a request made from
    messages already built has none). The offline provider, which reads only
    a few of the sent messages whole, reads them from :attr:`sent` one message
    at a time, masked the same way, and never builds the rest."""

    def __init__(
        self,
        plan: CompactionPlan,
        prompt: PromptSource,
        custom_instruction: str,
        messages: list[dict[str, Any]] | None,
        config: dict[str, Any],
        body: dict[str, Any] | None = None,
        *,
        sent: SentRange | None = None,
        specifics: Callable[[], object] | None = None,
        revisions: tuple[RevisionRound, ...] = (),
        dropped_rounds: int = 0,
    ) -> None:
        if messages is None and sent is None:
            raise ValueError("a request needs its messages or what they are built from")
        self.plan = plan
        self.prompt = prompt
        self.custom_instruction = custom_instruction
        self.config = config
        self.sent = sent
        # The specifics of the compacted range (a ``specifics.Specifics``), made on
        # first call: the compaction job sets it for the offline provider, which
        # otherwise reads them from the request's text.
        self.specifics = specifics
        # A revision (``compaction/revision.py``): the earlier summary and feedback
        # pairs sent after the two messages above, in order (the last is the one
        # being revised now), and how many older pairs were left out to fit.
        self.revisions = revisions
        self.dropped_rounds = dropped_rounds
        self._messages = messages
        self._body = body
        self._lock = threading.Lock()  # two workers asking at once: built once

    def __repr__(self) -> str:
        state = "built" if self.built else "not built"
        return f"CompactionRequest(plan={self.plan!r}, {state}, revisions={len(self.revisions)})"

    @property
    def built(self) -> bool:
        """The messages are built (a figure read from them costs no build)."""
        return self._messages is not None

    @property
    def messages(self) -> list[dict[str, Any]]:
        made = self._messages
        if made is None:
            with self._lock:
                made = self._messages
                if made is None:
                    sent = self.sent
                    assert sent is not None  # __init__ checks one of the two is given
                    made = self._messages = _session_messages(sent)
        return made

    @property
    def body(self) -> dict[str, Any]:
        body = self._body
        if body is None:
            messages = self.messages
            with self._lock:
                body = self._body
                if body is None:
                    body = self._body = build_http_body(messages, self.config)
        return body

    def build(self) -> CompactionRequest:
        """This request with its messages and body built now (by a worker, so
        that a screen reading them later does no masking of its own)."""
        _ = self.body
        return self

    def with_messages(self, messages: list[dict[str, Any]]) -> CompactionRequest:
        """The same request sending ``messages`` instead (its body rebuilt)."""
        return CompactionRequest(
            self.plan,
            self.prompt,
            self.custom_instruction,
            messages,
            self.config,
            build_http_body(messages, self.config),
            specifics=self.specifics,
            revisions=self.revisions,
            dropped_rounds=self.dropped_rounds,
        )

    @property
    def parts(self) -> list[str]:
        return [p["text"] for p in self.messages[1]["content"]]

    @property
    def transcript(self) -> str:
        """The synthetic transcript: the concatenation of the user parts."""
        return "".join(self.parts)

    @property
    def model(self) -> str | None:
        return self.config.get("model")

    @property
    def is_revision(self) -> bool:
        return bool(self.revisions)

    def estimated_input_tokens(self) -> int:
        base = estimate_tokens(COMPACTOR_SYSTEM_PROMPT) + estimate_tokens(self.transcript)
        return base + sum(estimate_tokens(m["content"]) for m in self.messages[2:])


def _session_messages(sent: SentRange) -> list[dict[str, Any]]:
    maskable: list[int] | None = [] if sent.mask else None
    parts = _parts(sent.messages, sent.indices, sent.prompt_part, maskable)
    if maskable is not None:
        parts = masked_parts(parts, maskable)
    return [
        {"role": "system", "content": COMPACTOR_SYSTEM_PROMPT},
        {"role": "user", "content": [{"type": "text", "text": t} for t in parts]},
    ]


def build_request(
    messages: Sequence[Message],
    plan: CompactionPlan,
    prompt: PromptSource,
    compaction_cfg: dict[str, Any],
    *,
    compaction_model: str | None = None,
    base_model: str | None = None,
    custom_instruction: str = "",
    mask: bool = True,
) -> CompactionRequest:
    """The compaction request for ``plan``: kimi-cli's two messages, with
    every secret-looking string in their texts masked (``mask``;
    :func:`masked_parts`), so what a model is sent, what ``preview`` shows
    and what the offline provider reads is the same masked text. A session
    with nothing to mask gives kimi-cli's request byte for byte."""
    if plan.noop:
        raise ValueError(f"no request for a no-op plan: {plan.noop}")
    prompt_part = build_prompt_part(prompt.text, custom_instruction)
    sent = SentRange(messages, plan.request_indices, prompt_part, mask)
    config = merged_request_config(compaction_cfg, compaction_model, base_model)
    return CompactionRequest(plan, prompt, custom_instruction, None, config, sent=sent)


def revision_request(
    base: CompactionRequest,
    rounds: Sequence[RevisionRound],
    *,
    budget: int = REVISION_INPUT_BUDGET,
    custom_instruction: str | None = None,
) -> CompactionRequest:
    """The revision of ``base`` (a compaction request, never itself a
    revision): its two messages unchanged, then each round's summary (the
    assistant) and feedback (the user), oldest first, as many as fit in
    ``budget`` (:func:`fit_rounds`). Toolless like ``base``: the same config,
    whose ``disable_all_tools`` no override can undo.

    ``custom_instruction``: a different instruction in the prompt part, for a
    provider that reads the feedback as instructions (the offline one)."""
    if not rounds:
        raise ValueError("a revision needs at least one round (a summary and its feedback)")
    if base.revisions:
        raise ValueError("revise the compaction request, not a revision of it")
    first = base.messages[:2]
    instruction = base.custom_instruction
    if custom_instruction is not None and custom_instruction != base.custom_instruction:
        instruction = custom_instruction
        parts = [p["text"] for p in base.messages[1]["content"]]
        parts[-1] = build_prompt_part(base.prompt.text, instruction)
        first = [
            base.messages[0],
            {"role": "user", "content": [{"type": "text", "text": t} for t in parts]},
        ]
    own = estimate_tokens(COMPACTOR_SYSTEM_PROMPT) + estimate_tokens(
        "".join(p["text"] for p in first[1]["content"])
    )
    kept, dropped = fit_rounds(own, rounds, budget)
    messages = [*first]
    for round_ in kept:
        messages.extend(round_.turns())
    body = build_http_body(messages, base.config)
    return CompactionRequest(
        base.plan,
        base.prompt,
        instruction,
        messages,
        base.config,
        body,
        specifics=base.specifics,
        revisions=tuple(kept),
        dropped_rounds=dropped,
    )

"""Writing the six sections of the compaction contract from what was extracted.

The summary is never larger than the messages it replaces: when the full
extract would be (short turns full of file names and error lines), it is written
again with less detail, level by level, and ``<important_context>`` says it was
trimmed. Sizes are the app's own token estimate of the summary message against
the text of the compacted messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.compaction.tokens import estimate_tokens
from kimi_compact_tui.providers.offline.detail import FULL, LEFT_OUT, LEVELS, Detail
from kimi_compact_tui.providers.offline.extract import CodeSeen, ErrorSeen, Extract
from kimi_compact_tui.providers.offline.instructions import (
    Instructions,
    focus_lines,
    kept_lines,
    read_instructions,
)
from kimi_compact_tui.providers.offline.patterns import (
    ABS_DIR_RE,
    CONSTRAINT_RE,
    DECISION_RE,
    DONE_RE,
    MAX_DETAILED,
    PASSED_RE,
    PATH_RE,
    PLAN_RE,
    SIGNATURE_RE,
    TECH_WORDS,
    TODO_RE,
    VERSION_RE,
)
from kimi_compact_tui.providers.offline.text import (
    brief,
    condense_code,
    dedupe,
    fence_for,
    sentences,
)
from kimi_compact_tui.providers.offline.transcript import TMessage, Transcript

MESSAGE_OVERHEAD = 4  # tokens per message, as the app counts them


@dataclass
class Reading:
    """Everything the sections are written from (extracted once, written per level)."""

    transcript: Transcript
    messages: list[TMessage]  # the messages read in detail
    errors: list[ErrorSeen]
    code: list[CodeSeen]
    files: list[str]
    users: list[TMessage]
    assistants: list[TMessage]
    all_text: str
    done: list[tuple[int, str]]  # (message number, sentence) of finished work
    said: frozenset[tuple[int, str]] = frozenset()  # the same, for look-ups
    diffs: dict[str, list[int]] = field(default_factory=dict)  # file -> diff messages
    instructions: Instructions = field(default_factory=Instructions)


def _done(assistants: list[TMessage]) -> list[tuple[int, str]]:
    return [
        (m.number, s)
        for m in assistants
        for s in sentences(m.prose)
        if DONE_RE.search(s) and not s.endswith(("?", "？")) and not PLAN_RE.match(s)
    ]


def read(transcript: Transcript) -> Reading:
    messages = transcript.messages
    if len(messages) > MAX_DETAILED:
        tail = messages[-MAX_DETAILED:]
        messages = [m for m in messages[:-MAX_DETAILED] if m.role == "system"][:5] + tail
    ex = Extract(messages)
    assistants = [m for m in messages if m.role == "assistant" and m.prose.strip()]
    done = _done(assistants)
    all_text = "\n".join(m.own_text for m in messages)
    return Reading(
        transcript,
        messages,
        ex.errors(),
        ex.code(),
        ex.mentioned_files(),
        [m for m in messages if m.role == "user" and not m.injected and m.prose.strip()],
        assistants,
        all_text,
        done,
        frozenset(done),
        ex.diffs(),
        read_instructions(transcript.instruction, all_text),
    )


def _focus(r: Reading, d: Detail) -> list[str]:
    limit = 4 if d.context_items >= 8 else min(2, d.context_items)
    return _focus_base(r, d) + focus_lines(r.instructions, r.messages, limit, d.sentence_chars)


def _focus_base(r: Reading, d: Detail) -> list[str]:
    if r.users:
        last = r.users[-1]
        out = [
            f"The latest user request (message {last.number}): {brief(last.own_text, d.focus_chars)}"
        ]
        reply = next((m for m in reversed(r.assistants) if m.number > last.number), None)
        if reply is not None and d.reply_chars:
            out.append(
                f"Latest assistant reply (message {reply.number}): "
                f"{brief(reply.text, d.reply_chars)}"
            )
        return out
    if r.assistants:
        last = r.assistants[-1]
        return [f"Continuing from message {last.number}: {brief(last.text, d.focus_chars)}"]
    return ["No user request appears in the compacted messages."]


def _environment(r: Reading, d: Detail) -> list[str]:
    env: list[str] = []
    for m in r.messages:
        if m.role == "system" and m.prose.strip():
            env.append(f"System note (message {m.number}): {brief(m.text, 240)}")
    dirs = []
    for found in ABS_DIR_RE.findall(r.all_text):
        found = found.rstrip(".,;:)")
        if PATH_RE.fullmatch(found):
            found = found.rsplit("/", 1)[0]
        dirs.append(found)
    if dirs:
        env.append("Paths seen: " + ", ".join(dedupe(dirs, 5)))
    versions = dedupe(VERSION_RE.findall(r.all_text), 6)
    if versions:
        env.append("Versions mentioned: " + ", ".join(versions))
    words = set(re.findall(r"(?<![\w-])[a-z][a-z0-9]*(?![\w-])", r.all_text.lower()))
    techs = dedupe([label for word, label in TECH_WORDS if word in words], 10)
    if techs:
        env.append("Tools and technologies mentioned: " + ", ".join(techs))
    exts = dedupe([p.rsplit(".", 1)[-1] for p in r.files], 8)
    if exts:
        env.append("File types involved: " + ", ".join(f".{e}" for e in exts))
    if env and not d.env_items:
        return [LEFT_OUT]
    return env[: d.env_items] or ["No environment details appear in the transcript."]


def _completed(r: Reading, d: Detail) -> list[str]:
    done = [f"{s[: d.sentence_chars]} (message {number})" for number, s in r.done]
    passed = [
        (m.number, p.group(1).strip())
        for m in r.messages
        for p in PASSED_RE.finditer(m.text)
        if "failed" not in p.group(1)
    ]
    if passed:
        number, line = passed[-1]
        done.append(f"Tests: {line} (message {number})")
    if done and not d.done_items:
        return [LEFT_OUT]
    done = dedupe(done[::-1], d.done_items)[::-1]  # the most recent, in order
    return done or ["Nothing is recorded as finished yet."]


def _issues(r: Reading, d: Detail) -> list[str]:
    out: list[str] = []
    issues = 0
    for err in r.errors[-d.errors :] if d.errors else []:
        issues += 1
        if err.fix is None:
            status = "open: no fix appears after it"
        else:
            fix = brief(err.fix, d.fix_chars) if d.fix_chars else ""
            status = f"fix that followed (message {err.fix_number})" + (f": {fix}" if fix else "")
            if err.verified:
                status += f"; verified (message {err.verified_number}): {err.verified}"
        out.append(f"- Error in message {err.number} ({err.role}): {err.headline} — {status}")
        if d.error_blocks and ("\n" in err.block or err.block != err.headline):
            fence = fence_for(err.block)
            out.extend([fence, err.block, fence])
    if d.sentence_chars > 60:  # the barest level keeps errors only
        open_items = _open_items(r, d)
        issues += len(open_items)
        out.extend(open_items)
    if not issues:
        out.append(f"- {LEFT_OUT}" if r.errors else "- No open issues recorded in the transcript.")
    return out


def _open_items(r: Reading, d: Detail) -> list[str]:
    """A question the user has not answered yet, and to-do notes near the end."""
    out: list[str] = []
    if r.assistants:
        last = r.assistants[-1]
        answered = any(m.number > last.number for m in r.users)
        questions = [s for s in sentences(last.prose) if s.endswith(("?", "？"))]
        if questions and not answered:
            out.append(f"- Waiting on the user (message {last.number}): {questions[-1]}")
    for m in r.messages[-6:]:
        if m.role not in ("user", "assistant") or m.injected:
            continue
        for s in sentences(m.prose):
            said = m.role == "assistant" and (m.number, s) in r.said
            if TODO_RE.search(s) and not said:
                out.append(f"- Open ({m.role}, message {m.number}): {s[: d.sentence_chars]}")
                break
    return out


def _file_block(item: CodeSeen, d: Detail, diffs: list[int]) -> list[str]:
    text, condensed = condense_code(item.code)
    total_lines = len(item.code.rstrip("\n").split("\n"))
    origin = "tool output" if item.role == "tool" else f"{item.role} message"
    summary = f"Latest version seen in message {item.number} ({origin}), {total_lines} lines"
    if d.code_bodies:
        summary += "; condensed to signatures and key lines." if condensed else ", kept whole."
    else:
        summary += "; its text is left out of this trimmed summary."
    if item.earlier:
        summary += " Earlier versions in messages " + ", ".join(map(str, item.earlier)) + "."
    later = [n for n in diffs if n > item.number]
    if later:
        summary += " Changed after that by the diff in message"
        summary += f"{'s' if len(later) > 1 else ''} {', '.join(map(str, later))}."
    out = ["<file>", item.name, "", "**Summary:**", summary, ""]
    if d.key_elements:
        elements = dedupe(
            [
                ln.strip().rstrip(":{").strip()
                for ln in item.code.split("\n")
                if SIGNATURE_RE.match(ln)
            ],
            d.key_elements,
        )
        out.append("**Key elements:**")
        out.extend(f"- {e}" for e in (elements or ["(no functions or classes)"]))
        out.append("")
    if d.code_bodies:
        fence = fence_for(text)
        out.extend(["**Latest version:**", f"{fence}{item.lang}", text, fence])
    out.extend(["</file>", ""])
    return out


def _code_state(r: Reading, d: Detail) -> list[str]:
    out = [""]
    code = r.code[-d.code_files :] if d.code_files else []
    for item in code:
        out.extend(_file_block(item, d, r.diffs.get(item.name, [])))
    names = {c.name for c in code}
    others = [p for p in r.files if p not in names and not any(p.endswith("/" + n) for n in names)]
    others = others[: d.other_files]
    if others:
        out.extend(["<file>", "Other files mentioned", "", "**Summary:**"])
        out.extend(["Named in the conversation; their content was not shown.", ""])
        out.append("**Key elements:**")
        out.extend(f"- {p}" for p in others)
        out.extend(["</file>", ""])
    if not code and not others:
        found = r.code or r.files
        out.extend([LEFT_OUT if found else "No files or code appear in the transcript.", ""])
    return out


def _context(r: Reading, d: Detail, trimmed_note: str | None) -> list[str]:
    ctx: list[str] = []
    for m in r.users:
        for s in sentences(m.prose):
            if CONSTRAINT_RE.search(s) and not s.endswith(("?", "？")):
                ctx.append(f"User (message {m.number}): {s[: d.sentence_chars]}")
    for m in r.assistants:
        for s in sentences(m.prose):
            said = (m.number, s) in r.said  # already listed as finished work
            if DECISION_RE.search(s) and not PLAN_RE.match(s) and not s.endswith("?") and not said:
                ctx.append(f"Decision (message {m.number}): {s[: d.sentence_chars]}")
    ctx = dedupe(ctx, d.context_items) if d.context_items else []
    ctx = kept_lines(r.instructions) + ctx
    everything = r.transcript.messages
    if len(everything) > len(r.messages):
        ctx.append(
            f"The transcript has {len(everything)} messages; only its system notes and "
            f"the last {MAX_DETAILED} were read for this summary."
        )
    if trimmed_note:
        ctx.append(trimmed_note)
    if r.instructions:
        ctx.append(r.instructions.note())
    if everything:
        roles: dict[str, int] = {}
        for m in everything:
            roles[m.role] = roles.get(m.role, 0) + 1
        counts = ", ".join(f"{n} {role}" for role, n in roles.items())
        ctx.append(
            f"Offline extractive summary (no model wrote it) of messages "
            f"{everything[0].number}–{everything[-1].number} ({counts})."
        )
    else:
        ctx.append("Offline extractive summary (no model wrote it); the transcript was empty.")
    return [c if c.startswith("  - ") else f"- {c}" for c in ctx]


def write(r: Reading, d: Detail = FULL, trimmed_note: str | None = None) -> str:
    out = ["<current_focus>", *_focus(r, d), "</current_focus>", ""]
    out += ["<environment>", *(f"- {x}" for x in _environment(r, d)), "</environment>", ""]
    out += ["<completed_tasks>", *(f"- {x}" for x in _completed(r, d)), "</completed_tasks>", ""]
    out += ["<active_issues>", *_issues(r, d), "</active_issues>", ""]
    out += ["<code_state>", *_code_state(r, d), "</code_state>", ""]
    out += ["<important_context>", *_context(r, d, trimmed_note), "</important_context>"]
    return "\n".join(out) + "\n"


def summary_cost(summary: str) -> int:
    """Estimated tokens of the summary message as it will be written."""
    return estimate_tokens(build_compact_summary_text(summary)) + MESSAGE_OVERHEAD


def replaced_tokens(transcript: Transcript) -> int:
    """Estimated tokens of the text of the messages the summary replaces."""
    return sum(
        MESSAGE_OVERHEAD + sum(estimate_tokens(p) for p in m.parts) for m in transcript.compacted
    )


@dataclass(frozen=True)
class Summary:
    """The written summary and how its size compares with what it replaces."""

    text: str
    cost: int  # estimated tokens of the summary message
    budget: int  # estimated tokens of the text of the compacted messages
    trimmed: bool

    @property
    def fits(self) -> bool:
        return self.cost <= self.budget


def summarize(transcript: Transcript) -> Summary:
    """The six-section summary, never larger than the messages it replaces: less
    detail, level by level, until it fits. Messages shorter than even the
    smallest six-section summary get that smallest one (the key facts), and it
    says it is larger than they are."""
    reading = read(transcript)
    text = write(reading)
    budget = replaced_tokens(transcript)
    if summary_cost(text) <= budget or not transcript.compacted:
        return Summary(text, summary_cost(text), budget, False)
    count = len(transcript.compacted)
    plural = "" if count == 1 else "s"
    note = (
        f"Trimmed: the full extract was larger than the {count} compacted "
        f"message{plural} (about {budget} tokens), so it keeps less detail."
    )
    for level in LEVELS[1:]:
        text = write(reading, level, note)
        if summary_cost(text) <= budget:
            return Summary(text, summary_cost(text), budget, True)
    note = (
        f"Trimmed to the key facts; even so this summary is larger than the {count} "
        f"compacted message{plural} (about {budget} tokens): they are shorter than "
        "any six-section summary."
    )
    text = write(reading, LEVELS[-2], note)
    return Summary(text, summary_cost(text), budget, True)

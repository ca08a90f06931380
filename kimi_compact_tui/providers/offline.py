"""The offline provider: an extractive summary that needs no model and no network.

It reads the synthetic transcript out of the request body (the ``## Message N``
header parts and the text parts after each), ignores the final prompt part,
and writes the six sections of the compaction contract from what is literally
in the transcript: the last user request, environment facts, finished work,
errors with their tracebacks verbatim and the fix that followed, files and
code (code under 20 lines whole, longer code as signatures and key lines), and
the user's constraints. The text is deterministic (no clock, no randomness)
and streams in small chunks through the same path as a real provider.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kimi_compact_tui.providers._stream import Collector, Outcome, run_stream
from kimi_compact_tui.providers.base import (
    OFFLINE_MODEL,
    EventCallback,
    ProviderConfig,
    StreamEvent,
    StreamResult,
)

CHUNK_CHARS = 40
MAX_DETAILED = 2000  # messages read in detail (the most recent ones, plus system notes)
WHOLE_CODE_LINES = 20  # code with fewer lines than this is kept whole
HEADER_RE = re.compile(r"\A## Message (\d+)\nRole: ([^\n]*)\nContent:\n\Z")
FENCE_RE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<code>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
SYSTEM_TAG_RE = re.compile(r"<system>(.*?)</system>", re.S)
EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|java|kt|rb|c|h|cc|cpp|hpp|cs|swift|php|lua|zig|scala|"
    "md|rst|json|jsonl|yaml|yml|toml|ini|cfg|conf|env|sh|bash|zsh|ps1|sql|csv|txt|html|css|"
    "scss|vue|svelte|proto|graphql|tf|dockerfile|lock"
)
PATH_RE = re.compile(rf"(?<![\w/.\-])(/?(?:[\w.\-]+/)*[\w\-]+\.(?:{EXTENSIONS}))(?![\w\-])")
ABS_DIR_RE = re.compile(
    r"(?<![\w.])(/(?:home|Users|work|srv|opt|var|tmp|app|usr|mnt|data)/[\w.\-/]+)"
)
SIGNATURE_RE = re.compile(
    r"^\s*(?:@\w|(?:async\s+)?def\s|class\s|(?:export\s+)?(?:default\s+)?(?:async\s+)?function\b|"
    r"(?:export\s+)?(?:interface|type|enum|struct|trait|impl|module|namespace)\s|"
    r"(?:pub(?:\([\w]+\))?\s+)?(?:async\s+)?fn\s|func\s|"
    r"(?:export\s+)?(?:const|let|var)\s+\w+\s*(?::[^=]+)?=\s*(?:async\s*)?(?:\(|function|\w+\s*=>)|"
    r"(?:public|private|protected|static)\s[\w<>\[\], ]*\(|"
    r"CREATE\s|ALTER\s|SELECT\s)",
    re.I,
)
KEY_LINE_RE = re.compile(r"^\s*(?:raise|throw|return|yield|assert|except|catch|if __name__)\b")
CODE_HINT_RE = re.compile(
    r"^\s*(?:def |class |import |from \S+ import|return\b|if |for |while |try:|except|"
    r"function |const |let |var |export |public |private |#include|package |fn |func |\}|\{|@)|"
    r"[;{}]\s*$|\)\s*:\s*$|=>"
)
ERROR_LINE_RE = re.compile(
    r"(?:\b[A-Z][A-Za-z0-9_.]*(?:Error|Exception|Failure|Warning|Fault)\b:?|"
    r"^\s*(?:error|fatal|panic)(?:\[[\w-]+\])?:|\bFAILED\b|\bSegmentation fault\b|"
    r"\bexited with code [1-9]|\bTypeError\b|\bundefined is not\b)"
)
DONE_RE = re.compile(
    r"\b(?:fixed|added|created|implemented|updated|removed|renamed|wrote|written|refactored|"
    r"changed|moved|installed|passe[sd]|pass|done|completed|resolved|replaced|handles|now)\b|"
    r"已|完成|修复|添加|实现",
    re.I,
)
FIX_RE = re.compile(
    r"\b(?:fix|fixed|fixing|fixes|add|added|adding|handle|handles|resolve[sd]?|change[sd]?|"
    r"replace[sd]?|missing|because|cause[sd]?|instead|solution|workaround|import)\b|"
    r"因为|原因|加一行|修复|改成|解决",
    re.I,
)
CONSTRAINT_RE = re.compile(
    r"\b(?:should|must|never|always|don't|do not|only|prefer|avoid|required?|keep|make sure)\b|"
    r"要求|必须|不要|只|用中文|整数",
    re.I,
)
DECISION_RE = re.compile(
    r"\b(?:decid\w*|instead|because|so that|capped|trade-?off|chose|choose|we'll use|uses?)\b|"
    r"避免|因为|以分为单位",
    re.I,
)
PLAN_RE = re.compile(r"^(?:I'll|I will|Let me|Let's|Now|Next|Running|Checking)\b", re.I)
TODO_RE = re.compile(r"\b(?:TODO|FIXME|next step|still|remaining|not yet|follow-up)\b", re.I)
PASSED_RE = re.compile(r"(\d+ passed[^\n]*)")
TECH_WORDS = (
    ("python", "Python"),
    ("pytest", "pytest"),
    ("typescript", "TypeScript"),
    ("node", "Node"),
    ("npm", "npm"),
    ("postgresql", "PostgreSQL"),
    ("postgres", "PostgreSQL"),
    ("sqlite", "SQLite"),
    ("mysql", "MySQL"),
    ("redis", "Redis"),
    ("docker", "Docker"),
    ("kubernetes", "Kubernetes"),
    ("rust", "Rust"),
    ("cargo", "Cargo"),
    ("golang", "Go"),
    ("java", "Java"),
    ("react", "React"),
    ("django", "Django"),
    ("flask", "Flask"),
    ("fastapi", "FastAPI"),
    ("git", "git"),
    ("uv", "uv"),
    ("pip", "pip"),
    ("csv", "CSV"),
)
VERSION_RE = re.compile(
    r"\b(?:Python|Node(?:\.js)?|PostgreSQL|Postgres|Go|Rust|Java|Ruby|TypeScript|Django|"
    r"React|Ubuntu|Debian|macOS)\s?v?\d+(?:\.\d+)*\b"
)
LANG_BY_EXT = {
    "py": "python",
    "pyi": "python",
    "ts": "ts",
    "tsx": "tsx",
    "js": "js",
    "jsx": "jsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "rb": "ruby",
    "sql": "sql",
    "sh": "bash",
    "json": "json",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
}


# ----------------------------------------------------------------------------- parsing


@dataclass
class TMessage:
    number: int
    role: str
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def prose(self) -> str:
        """The text with code fences and <system> notes removed, parts on separate lines."""
        joined = "\n".join(SYSTEM_TAG_RE.sub(" ", p) for p in self.parts)
        return FENCE_RE.sub(" ", joined)


def parse_transcript(body: Mapping[str, Any]) -> list[TMessage]:
    """The numbered messages in the request's synthetic user message (prompt part dropped)."""
    messages = body.get("messages") if isinstance(body, Mapping) else None
    if not isinstance(messages, list) or not messages:
        return []
    user = messages[-1] if len(messages) < 2 else messages[1]
    content = user.get("content") if isinstance(user, Mapping) else None
    if isinstance(content, str):
        parts = _split_string_transcript(content)
    elif isinstance(content, list):
        parts = [
            str(p.get("text") or "")
            for p in content
            if isinstance(p, Mapping) and p.get("type") == "text"
        ]
    else:
        return []
    if parts:
        parts = parts[:-1]  # the final part is the prompt (and any custom instructions)
    out: list[TMessage] = []
    for part in parts:
        m = HEADER_RE.match(part)
        if m:
            out.append(TMessage(int(m.group(1)), m.group(2).strip()))
        elif out:
            out[-1].parts.append(part)
    return out


def _split_string_transcript(text: str) -> list[str]:
    """Cut a transcript given as one string back into header and text parts."""
    pieces = re.split(r"(## Message \d+\nRole: [^\n]*\nContent:\n)", text)
    parts = [p for p in pieces if p]
    if parts and not HEADER_RE.match(parts[-1]):
        last = parts[-1]
        cut = last.find("\n\n---\n\n")
        if cut >= 0:
            parts[-1:] = [last[:cut], last[cut:]] if last[:cut] else [last[cut:]]
        else:
            parts.append("")
    return parts


# ----------------------------------------------------------------------------- helpers


def _sentences(text: str) -> list[str]:
    out = []
    for line in text.split("\n"):
        line = line.strip().lstrip("-*#>0123456789. ").strip()
        if not line:
            continue
        for s in re.split(r"(?<=[.!?。！？；])\s*", line):
            s = " ".join(s.split())
            if len(s) >= 4:
                out.append(s)
    return out


def _brief(text: str, limit: int = 300) -> str:
    flat = " ".join(FENCE_RE.sub(lambda m: _inline_code(m.group("code")), text).split())
    flat = SYSTEM_TAG_RE.sub(lambda m: m.group(1), flat)
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    stop = max(cut.rfind(". "), cut.rfind("。"), cut.rfind("? "))
    if stop > limit // 2:
        return cut[: stop + 1]
    return cut.rstrip() + "…"


def _inline_code(code: str) -> str:
    lines = [x.strip() for x in code.strip().split("\n") if x.strip()]
    if len(lines) <= 2:
        return " `" + "; ".join(lines) + "` "
    return " (code below) "


def _dedupe(items: list[str], limit: int) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.lower()
        if key not in seen:
            seen.add(key)
            out.append(item)
        if len(out) >= limit:
            break
    return out


def _fence_for(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(3, longest + 1)


def _looks_like_code(text: str) -> bool:
    lines = [x for x in text.split("\n") if x.strip()]
    if len(lines) < 3:
        return False
    hits = sum(1 for x in lines if CODE_HINT_RE.search(x))
    return hits * 10 >= len(lines) * 4


_EXT_SET = frozenset(EXTENSIONS.split("|"))
_TOKEN_RE = re.compile(r"[\w./\-]+")


def _paths(text: str) -> list[str]:
    """Path-like tokens with a known file extension (a linear scan, then a check)."""
    out = []
    for m in _TOKEN_RE.finditer(text):
        token = m.group(0).rstrip(".-")
        dot = token.rfind(".")
        if dot <= 0 or token[dot + 1 :].lower() not in _EXT_SET:
            continue
        if PATH_RE.fullmatch(token):
            out.append(token)
    return out


def condense_code(code: str) -> tuple[str, bool]:
    """Code under 20 lines whole; longer code as signatures and key lines with ``...``."""
    lines = code.rstrip("\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if len(lines) < WHOLE_CODE_LINES:
        return "\n".join(lines), False
    kept: list[str] = []
    gap_indent: str | None = None  # indentation of the first line dropped since the last kept
    for line in lines:
        stripped = line.strip()
        top_level = bool(stripped) and not line[:1].isspace() and stripped not in ("}", ")", "]")
        keep = bool(SIGNATURE_RE.match(line) or KEY_LINE_RE.match(line) or top_level)
        if stripped.startswith(("#", "//")) and not SIGNATURE_RE.match(line):
            keep = False
        if keep:
            if gap_indent is not None:
                kept.append(gap_indent + "...")
                gap_indent = None
            kept.append(line)
        elif stripped and gap_indent is None:
            gap_indent = line[: len(line) - len(line.lstrip())]
    if gap_indent is not None:
        kept.append(gap_indent + "...")
    if len(kept) >= len(lines):  # nothing to condense: fall back to the head
        kept = lines[: WHOLE_CODE_LINES - 1] + ["..."]
    return "\n".join(kept), True


# ----------------------------------------------------------------------------- extraction


@dataclass
class CodeSeen:
    name: str
    lang: str
    code: str
    number: int
    role: str
    earlier: list[int] = field(default_factory=list)


@dataclass
class ErrorSeen:
    number: int
    role: str
    headline: str
    block: str
    fix: str | None = None
    fix_number: int | None = None
    verified: str | None = None
    verified_number: int | None = None


def _error_blocks(text: str) -> list[tuple[str, str]]:
    """(headline, verbatim block) for each traceback or error line in ``text``."""
    lines = text.split("\n")
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("Traceback (most recent call last):"):
            j = i + 1
            while j < len(lines) and (lines[j][:1] in (" ", "\t") or not lines[j].strip()):
                j += 1
            end = min(j, len(lines) - 1)
            while (
                end + 1 < len(lines)
                and lines[end + 1].strip()
                and lines[end + 1][:1] in (" ", "\t")
            ):
                end += 1
            block = "\n".join(lines[i : end + 1]).rstrip()
            headline = lines[end].strip() if end < len(lines) else line.strip()
            out.append((headline, block))
            i = end + 1
            continue
        if ERROR_LINE_RE.search(line) and len(line) < 400:
            # Error lines close together (within two lines) form one verbatim block.
            last = i
            j = i + 1
            while j < len(lines) and j - last <= 2:
                if ERROR_LINE_RE.search(lines[j]) or re.match(r"^\s+(?:at |File |\^|~)", lines[j]):
                    last = j
                j += 1
            block = "\n".join(lines[i : last + 1]).rstrip()
            out.append((line.strip(), block))
            i = last + 1
            continue
        i += 1
    return out


class Extract:
    def __init__(self, messages: list[TMessage]) -> None:
        self.messages = messages
        self._mentioned: list[str] | None = None

    def errors(self) -> list[ErrorSeen]:
        found: list[ErrorSeen] = []
        seen: set[str] = set()
        for idx, msg in enumerate(self.messages):
            if msg.role == "system":
                continue
            for part in msg.parts:
                body = SYSTEM_TAG_RE.sub("", part)
                body = FENCE_RE.sub(lambda m: m.group("code") if _is_error_fence(m) else "", body)
                for headline, block in _error_blocks(body):
                    key = headline.lower()
                    if key in seen:
                        continue
                    seen.add(key)
                    err = ErrorSeen(msg.number, msg.role, headline, block)
                    self._find_fix(err, idx)
                    found.append(err)
        # Keep the most recent errors when there are many.
        return found[-8:]

    def _find_fix(self, err: ErrorSeen, idx: int) -> None:
        later = self.messages[idx + 1 :]
        assistants = [m for m in later if m.role == "assistant" and m.prose.strip()]
        chosen = next((m for m in assistants[:4] if FIX_RE.search(m.prose)), None)
        if chosen is None and assistants:
            chosen = assistants[0]
        if chosen is None:
            return
        err.fix = _brief(chosen.text, 280)
        err.fix_number = chosen.number
        for m in later:
            if m.number <= chosen.number:
                continue
            passed = PASSED_RE.search(m.text)
            if passed and "failed" not in passed.group(1):
                err.verified = passed.group(1).strip()
                err.verified_number = m.number

    def code(self) -> list[CodeSeen]:
        by_name: dict[str, CodeSeen] = {}
        order: list[str] = []
        previous_paths: list[str] = []
        unnamed = 0
        for msg in self.messages:
            for part in msg.parts:
                blocks: list[tuple[str, str, str]] = []  # name, lang, code
                for m in FENCE_RE.finditer(part):
                    if _is_error_fence(m):
                        continue
                    info = m.group("info").strip()
                    before = part[: m.start()].rstrip().split("\n")[-2:]
                    names = _paths(info) or _paths("\n".join(before))
                    lang = (info.split()[0] if info else "").lower()
                    if lang and PATH_RE.fullmatch(lang):
                        lang = ""
                    blocks.append((names[-1] if names else "", lang, m.group("code")))
                stripped = SYSTEM_TAG_RE.sub("", part).strip("\n")
                if (
                    not blocks
                    and msg.role == "tool"
                    and _looks_like_code(stripped)
                    and not _error_blocks_dominate(stripped)
                ):
                    name = previous_paths[-1] if previous_paths else ""
                    blocks.append((name, "", stripped))
                for name, lang, code in blocks:
                    if not lang and name:
                        lang = LANG_BY_EXT.get(name.rsplit(".", 1)[-1].lower(), "")
                    if not name:
                        ident = _first_identifier(code)
                        if ident:
                            key = f"(no file name) {ident}"
                        else:
                            unnamed += 1
                            key = f"(no file name) snippet {unnamed} in message {msg.number}"
                    else:
                        key = name
                    if key in by_name:
                        old = by_name[key]
                        earlier = old.earlier + [old.number]
                        by_name[key] = CodeSeen(
                            key, lang or old.lang, code, msg.number, msg.role, earlier
                        )
                        order.remove(key)
                    else:
                        by_name[key] = CodeSeen(key, lang, code, msg.number, msg.role)
                    order.append(key)
            if msg.role in ("assistant", "user"):
                found = _paths(msg.prose)
                if found:
                    previous_paths = found
        named = [by_name[k] for k in order if not k.startswith("(no file name)")]
        snippets = [by_name[k] for k in order if k.startswith("(no file name)")][-6:]
        return (named + snippets)[-12:]

    def mentioned_files(self) -> list[str]:
        if self._mentioned is None:
            out = []
            for msg in self.messages:
                out.extend(_paths(msg.text))
            self._mentioned = _dedupe(out, 30)
        return self._mentioned


def _first_identifier(code: str) -> str | None:
    for line in code.split("\n"):
        if SIGNATURE_RE.match(line) and not line.lstrip().startswith("@"):
            m = re.search(
                r"(?:def|class|function|fn|func|interface|type|enum|struct|trait|const|let|var)"
                r"\s+([A-Za-z_$][\w$]*)",
                line,
            )
            if m:
                return m.group(1)
    return None


def _is_error_fence(m: re.Match[str]) -> bool:
    code = m.group("code")
    return "Traceback (most recent call last):" in code


def _error_blocks_dominate(text: str) -> bool:
    return "Traceback (most recent call last):" in text


# ----------------------------------------------------------------------------- writing


def summarize_transcript(messages: list[TMessage]) -> str:
    """The six-section summary for the given transcript messages.

    Very long transcripts are read in detail only for their system messages and
    their last ``MAX_DETAILED`` messages (the summary says so)."""
    all_messages = messages
    if len(messages) > MAX_DETAILED:
        tail = messages[-MAX_DETAILED:]
        messages = [m for m in messages[:-MAX_DETAILED] if m.role == "system"][:5] + tail
    ex = Extract(messages)
    errors = ex.errors()
    code = ex.code()
    users = [m for m in messages if m.role == "user" and m.prose.strip()]
    assistants = [m for m in messages if m.role == "assistant" and m.prose.strip()]
    out: list[str] = []

    # <current_focus>
    out.append("<current_focus>")
    if users:
        last = users[-1]
        out.append(f"The latest user request (message {last.number}): {_brief(last.text, 600)}")
        reply = next((m for m in reversed(assistants) if m.number > last.number), None)
        if reply is not None:
            out.append(
                f"Latest assistant reply (message {reply.number}): {_brief(reply.text, 300)}"
            )
    elif assistants:
        out.append(
            f"Continuing from message {assistants[-1].number}: {_brief(assistants[-1].text, 400)}"
        )
    else:
        out.append("No user request appears in the compacted messages.")
    out.append("</current_focus>")
    out.append("")

    # <environment>
    env: list[str] = []
    for m in messages:
        if m.role == "system" and m.prose.strip():
            env.append(f"System note (message {m.number}): {_brief(m.text, 240)}")
    all_text = "\n".join(m.text for m in messages)
    dirs = []
    for d in ABS_DIR_RE.findall(all_text):
        d = d.rstrip(".,;:)")
        if PATH_RE.fullmatch(d):
            d = d.rsplit("/", 1)[0]
        dirs.append(d)
    if dirs:
        env.append("Paths seen: " + ", ".join(_dedupe(dirs, 5)))
    versions = _dedupe(VERSION_RE.findall(all_text), 6)
    if versions:
        env.append("Versions mentioned: " + ", ".join(versions))
    words = set(re.findall(r"(?<![\w-])[a-z][a-z0-9]*(?![\w-])", all_text.lower()))
    techs = _dedupe([label for word, label in TECH_WORDS if word in words], 10)
    if techs:
        env.append("Tools and technologies mentioned: " + ", ".join(techs))
    exts = _dedupe([p.rsplit(".", 1)[-1] for p in ex.mentioned_files()], 8)
    if exts:
        env.append("File types involved: " + ", ".join(f".{e}" for e in exts))
    out.append("<environment>")
    out.extend(
        f"- {line}" for line in (env or ["No environment details appear in the transcript."])
    )
    out.append("</environment>")
    out.append("")

    # <completed_tasks>
    done: list[str] = []
    for m in assistants:
        for s in _sentences(m.prose):
            if DONE_RE.search(s) and not s.endswith(("?", "？")) and not PLAN_RE.match(s):
                done.append(f"{s} (message {m.number})")
    passed = [
        (m.number, p.group(1).strip())
        for m in messages
        for p in PASSED_RE.finditer(m.text)
        if "failed" not in p.group(1)
    ]
    if passed:
        number, line = passed[-1]
        done.append(f"Tests: {line} (message {number})")
    out.append("<completed_tasks>")
    done = _dedupe(done[::-1], 12)[::-1]  # the most recent, in order
    out.extend(f"- {d}" for d in (done or ["Nothing is recorded as finished yet."]))
    out.append("</completed_tasks>")
    out.append("")

    # <active_issues>
    out.append("<active_issues>")
    issues = 0
    for err in errors:
        issues += 1
        if err.fix is None:
            status = "open: no fix appears after it"
        else:
            status = f"fix that followed (message {err.fix_number}): {err.fix}"
            if err.verified:
                status += f"; verified (message {err.verified_number}): {err.verified}"
        out.append(f"- Error in message {err.number} ({err.role}): {err.headline} — {status}")
        if "\n" in err.block or err.block != err.headline:
            fence = _fence_for(err.block)
            out.extend([fence, err.block, fence])
    if assistants:
        last = assistants[-1]
        answered = any(m.number > last.number for m in users)
        questions = [s for s in _sentences(last.prose) if s.endswith(("?", "？"))]
        if questions and not answered:
            issues += 1
            out.append(f"- Waiting on the user (message {last.number}): {questions[-1]}")
    for m in messages[-6:]:
        for s in _sentences(m.prose):
            if TODO_RE.search(s) and m.role in ("user", "assistant"):
                issues += 1
                out.append(f"- Open ({m.role}, message {m.number}): {s[:240]}")
                break
    if not issues:
        out.append("- No open issues recorded in the transcript.")
    out.append("</active_issues>")
    out.append("")

    # <code_state>
    out.append("<code_state>")
    out.append("")
    for item in code:
        text, condensed = condense_code(item.code)
        total_lines = len(item.code.rstrip("\n").split("\n"))
        origin = "tool output" if item.role == "tool" else f"{item.role} message"
        summary = f"Latest version seen in message {item.number} ({origin}), {total_lines} lines"
        summary += "; condensed to signatures and key lines." if condensed else ", kept whole."
        if item.earlier:
            summary += " Earlier versions in messages " + ", ".join(map(str, item.earlier)) + "."
        elements = _dedupe(
            [
                ln.strip().rstrip(":{").strip()
                for ln in item.code.split("\n")
                if SIGNATURE_RE.match(ln)
            ],
            10,
        )
        fence = _fence_for(text)
        out.append("<file>")
        out.append(item.name)
        out.append("")
        out.append("**Summary:**")
        out.append(summary)
        out.append("")
        out.append("**Key elements:**")
        out.extend(f"- {e}" for e in (elements or ["(no functions or classes)"]))
        out.append("")
        out.append("**Latest version:**")
        out.append(f"{fence}{item.lang}")
        out.append(text)
        out.append(fence)
        out.append("</file>")
        out.append("")
    code_names = {c.name for c in code}
    others = [p for p in ex.mentioned_files() if p not in code_names][:10]
    if others:
        out.append("<file>")
        out.append("Other files mentioned")
        out.append("")
        out.append("**Summary:**")
        out.append("Named in the conversation; their content was not shown.")
        out.append("")
        out.append("**Key elements:**")
        out.extend(f"- {p}" for p in others)
        out.append("</file>")
        out.append("")
    if not code and not others:
        out.append("No files or code appear in the transcript.")
        out.append("")
    out.append("</code_state>")
    out.append("")

    # <important_context>
    ctx: list[str] = []
    for m in users:
        for s in _sentences(m.prose):
            if CONSTRAINT_RE.search(s) and not s.endswith(("?", "？")):
                ctx.append(f"User (message {m.number}): {s[:240]}")
    for m in assistants:
        for s in _sentences(m.prose):
            if DECISION_RE.search(s) and not PLAN_RE.match(s) and not s.endswith("?"):
                ctx.append(f"Decision (message {m.number}): {s[:240]}")
    ctx = _dedupe(ctx, 12)
    if len(all_messages) > len(messages):
        ctx.append(
            f"The transcript has {len(all_messages)} messages; only its system notes and "
            f"the last {MAX_DETAILED} were read for this summary."
        )
    messages = all_messages
    if messages:
        roles: dict[str, int] = {}
        for m in messages:
            roles[m.role] = roles.get(m.role, 0) + 1
        counts = ", ".join(f"{n} {r}" for r, n in roles.items())
        ctx.append(
            f"Offline extractive summary (no model wrote it) of messages "
            f"{messages[0].number}–{messages[-1].number} ({counts})."
        )
    else:
        ctx.append("Offline extractive summary (no model wrote it); the transcript was empty.")
    out.append("<important_context>")
    out.extend(f"- {c}" for c in ctx)
    out.append("</important_context>")
    return "\n".join(out) + "\n"


def offline_summary(body: Mapping[str, Any]) -> str:
    """The whole offline summary for a request body, at once."""
    return summarize_transcript(parse_transcript(body))


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def stream_summary(
    config: ProviderConfig,
    body: Mapping[str, Any],
    on_event: EventCallback | None = None,
    cancel: asyncio.Event | None = None,
    *,
    delay: float | None = None,
) -> StreamResult:
    """Stream the offline summary in small chunks, like a real provider would."""
    pause = config.chunk_delay if delay is None else delay
    col = Collector(on_event, provider="offline", model=OFFLINE_MODEL)

    async def work() -> Outcome:
        col.attempts = 1
        col.emit(StreamEvent("status", "offline extractive summary: no model is used"))
        text = offline_summary(body)
        for piece in chunks(text):
            col.text(piece)
            await asyncio.sleep(pause)  # yields even at 0 so a cancel can land
        col.finish_reason = "stop"
        return col.verdict(ended_normally=True, end_marker="end of summary")

    return await run_stream(col, work, cancel, offline=True)

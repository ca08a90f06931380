"""What the offline summarizer takes from a transcript: errors, code and file names.

Only real errors count: Python tracebacks, error lines of tool outputs and of
what the user pasted (exception lines, compiler ``error:`` lines, failing tests).
Code that names an error class, and the ``+``/``-`` lines of a diff, are not
errors. Paths from a git diff's ``a/`` and ``b/`` sides are one file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kimi_compact_tui.providers.offline.patterns import (
    CODE_LINE_RE,
    DIFF_FILE_RE,
    DIFF_HEADER_RE,
    ERROR_CONTINUATION_RE,
    ERROR_LINE_RE,
    EXTENSIONS,
    FENCE_RE,
    FIX_RE,
    HUNK_RE,
    LANG_BY_EXT,
    PASSED_RE,
    PATH_RE,
    SIGNATURE_RE,
    SYSTEM_TAG_RE,
    TESTS_FAILED_RE,
)
from kimi_compact_tui.providers.offline.text import brief, dedupe, looks_like_code
from kimi_compact_tui.providers.offline.transcript import TMessage

TRACEBACK_START = "Traceback (most recent call last):"
_EXT_SET = frozenset(EXTENSIONS.split("|"))
_TOKEN_RE = re.compile(r"[\w./\-]+")
PYTEST_E_RE = re.compile(r"^E\s+")


def is_diff(text: str) -> bool:
    return "diff --git " in text or ("\n+++ " in text and "\n@@ " in text)


def without_diffs(text: str) -> str:
    """``text`` with unified-diff headers and hunk lines removed."""
    if not ("@@ " in text or "diff --git " in text):
        return text
    kept: list[str] = []
    in_hunk = False
    for line in text.split("\n"):
        if DIFF_HEADER_RE.match(line):
            in_hunk = False
        elif HUNK_RE.match(line):
            in_hunk = True
        elif in_hunk and (not line or line[0] in "+- \\"):
            pass
        else:
            in_hunk = False
            kept.append(line)
    return "\n".join(kept)


def paths(text: str) -> list[str]:
    """Path-like tokens with a known file extension (a linear scan, then a check);
    a git diff's ``a/x.py`` and ``b/x.py`` are both ``x.py``."""
    out = []
    for m in _TOKEN_RE.finditer(text):
        token = m.group(0).rstrip(".-")
        dot = token.rfind(".")
        if dot <= 0 or token[dot + 1 :].lower() not in _EXT_SET:
            continue
        if PATH_RE.fullmatch(token):
            out.append(token)
    if out and is_diff(text):
        sides = {g for m in DIFF_FILE_RE.finditer(text) for g in m.groups() if g}
        out = [p[2:] if p[:2] in ("a/", "b/") and p[2:] in sides else p for p in out]
    return out


def one_per_file(found: list[str], limit: int) -> list[str]:
    """Deduplicated paths; an absolute path is dropped when a relative path seen
    in the same conversation names the same file (``/work/app/x.py`` and ``x.py``)."""
    unique = dedupe(found, 10 * limit)
    relative = [p for p in unique if not p.startswith("/")]
    kept = [
        p for p in unique if not (p.startswith("/") and any(p.endswith("/" + q) for q in relative))
    ]
    return kept[:limit]


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


def _is_error_line(line: str) -> bool:
    return len(line) < 400 and bool(ERROR_LINE_RE.search(line)) and not CODE_LINE_RE.match(line)


def _traceback_end(lines: list[str], i: int) -> int:
    j = i + 1
    while j < len(lines) and (lines[j][:1] in (" ", "\t") or not lines[j].strip()):
        j += 1
    end = min(j, len(lines) - 1)
    while end + 1 < len(lines) and lines[end + 1].strip() and lines[end + 1][:1] in (" ", "\t"):
        end += 1
    return end


def error_blocks(text: str, *, tracebacks_only: bool = False) -> list[tuple[str, str]]:
    """(headline, verbatim block) for each traceback or error line in ``text``."""
    lines = text.split("\n")
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(TRACEBACK_START):
            end = _traceback_end(lines, i)
            block = "\n".join(lines[i : end + 1]).rstrip()
            out.append((lines[end].strip(), block))
            i = end + 1
            continue
        if not tracebacks_only and _is_error_line(line):
            stripped = line.strip()
            if any(stripped in b or h in stripped for h, b in out):
                i += 1  # the same error again (pytest's summary line of a traceback)
                continue
            # Error lines close together (within two lines) form one verbatim block.
            last = i
            j = i + 1
            while j < len(lines) and j - last <= 2:
                if _is_error_line(lines[j]) or ERROR_CONTINUATION_RE.match(lines[j]):
                    last = j
                j += 1
            headline = PYTEST_E_RE.sub("", stripped)
            out.append((headline, "\n".join(lines[i : last + 1]).rstrip()))
            i = last + 1
            continue
        i += 1
    if not out and not tracebacks_only:
        failed = TESTS_FAILED_RE.search(text)
        if failed:
            line = failed.group(0).strip()
            out.append((line.strip("= "), line))
    return out


def _is_error_fence(m: re.Match[str]) -> bool:
    return TRACEBACK_START in m.group("code")


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


class Extract:
    def __init__(self, messages: list[TMessage]) -> None:
        self.messages = messages
        self._mentioned: list[str] | None = None

    def errors(self) -> list[ErrorSeen]:
        """Real errors, the most recent eight, each with the fix that followed."""
        found: list[ErrorSeen] = []
        seen: set[str] = set()
        for idx, msg in enumerate(self.messages):
            if msg.role == "system" or msg.injected:
                continue
            for part in msg.parts:
                body = SYSTEM_TAG_RE.sub("", part)
                body = FENCE_RE.sub(lambda m: m.group("code") if _is_error_fence(m) else "", body)
                body = without_diffs(body)
                # What the assistant writes is talk about errors; only tracebacks it
                # quotes are kept. Tool outputs and the user's pastes are the errors.
                quoted = msg.role == "assistant"
                for headline, block in error_blocks(body, tracebacks_only=quoted):
                    key = headline.lower()
                    if key in seen:
                        continue
                    seen.add(key)
                    err = ErrorSeen(msg.number, msg.role, headline, block)
                    self._find_fix(err, idx)
                    found.append(err)
        return found[-8:]

    def _find_fix(self, err: ErrorSeen, idx: int) -> None:
        later = self.messages[idx + 1 :]
        assistants = [m for m in later if m.role == "assistant" and m.prose.strip()]
        chosen = next((m for m in assistants[:4] if FIX_RE.search(m.prose)), None)
        if chosen is None and assistants:
            chosen = assistants[0]
        if chosen is None:
            return
        err.fix = brief(chosen.text, 280)
        err.fix_number = chosen.number
        for m in later:
            if m.number <= chosen.number:
                continue
            passed = PASSED_RE.search(m.text)
            if passed and "failed" not in passed.group(1):
                err.verified = passed.group(1).strip()
                err.verified_number = m.number

    def _blocks(self, msg: TMessage, part: str, previous: list[str]) -> list[tuple[str, str, str]]:
        blocks: list[tuple[str, str, str]] = []  # name, lang, code
        for m in FENCE_RE.finditer(part):
            if _is_error_fence(m):
                continue
            info = m.group("info").strip()
            before = part[: m.start()].rstrip().split("\n")[-2:]
            names = paths(info) or paths("\n".join(before))
            lang = (info.split()[0] if info else "").lower()
            if lang and PATH_RE.fullmatch(lang):
                lang = ""
            blocks.append((names[-1] if names else "", lang, m.group("code")))
        stripped = SYSTEM_TAG_RE.sub("", part).strip("\n")
        if (
            not blocks
            and msg.role == "tool"
            and TRACEBACK_START not in stripped
            and not is_diff(stripped)
            and looks_like_code(stripped)
        ):
            blocks.append((previous[-1] if previous else "", "", stripped))
        return blocks

    def code(self) -> list[CodeSeen]:
        by_name: dict[str, CodeSeen] = {}
        order: list[str] = []
        previous_paths: list[str] = []
        unnamed = 0
        for msg in self.messages:
            for part in msg.parts:
                for name, lang, code in self._blocks(msg, part, previous_paths):
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
                found = paths(msg.prose)
                if found:
                    previous_paths = found
        named = [by_name[k] for k in order if not k.startswith("(no file name)")]
        snippets = [by_name[k] for k in order if k.startswith("(no file name)")][-6:]
        return (named + snippets)[-12:]

    def diffs(self) -> dict[str, list[int]]:
        """The message numbers of the diffs that touch each file."""
        out: dict[str, list[int]] = {}
        for msg in self.messages:
            text = msg.text
            if not is_diff(text):
                continue
            for m in DIFF_FILE_RE.finditer(text):
                for name in {g for g in m.groups() if g}:
                    numbers = out.setdefault(name, [])
                    if msg.number not in numbers:
                        numbers.append(msg.number)
        return out

    def mentioned_files(self) -> list[str]:
        if self._mentioned is None:
            out = []
            for msg in self.messages:
                out.extend(paths(msg.text))
            self._mentioned = one_per_file(out, 30)
        return self._mentioned

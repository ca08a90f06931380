"""Patterns and normal forms of the retention categories (no Textual, no I/O)."""

from __future__ import annotations

import re
from collections.abc import Iterable

# ----------------------------------------------------------------------------- patterns

EXTENSIONS = (
    "py|pyi|ipynb|ts|tsx|js|jsx|mjs|cjs|go|rs|java|kt|rb|c|h|cc|cpp|hpp|cs|swift|php|lua|zig|"
    "scala|md|rst|json|jsonl|yaml|yml|toml|ini|cfg|conf|env|sh|bash|zsh|ps1|sql|csv|tsv|txt|"
    "log|html|css|scss|vue|svelte|proto|graphql|tf|lock|db|sqlite|xml|gradle|mod|sum"
)
PATH_RE = re.compile(
    rf"(?<![\w/.\-:@])((?:\.{{1,2}}/|/|~/)?(?:[\w.\-]+/)*[\w.\-]*\w\.(?:{EXTENSIONS}))(?![\w\-/]|\.\w)"
)
DIR_PATH_RE = re.compile(r"(?<![\w.:/])(/(?:home|Users|work|srv|opt|app|mnt|data)/[\w.\-/]*\w)")
SPECIAL_FILES_RE = re.compile(
    r"(?<![\w/.\-])((?:[\w.\-]+/)*(?:Makefile|Dockerfile|Justfile|Rakefile|Gemfile|"
    r"\.gitignore|\.env))(?![\w\-/.])"
)
URL_RE = re.compile(r"\bhttps?://[^\s<>\"'`)\]}]+")
SHELL_TOOLS = re.compile(r"shell|bash|terminal|command|^sh$|^zsh$|^exec|^run$|powershell", re.I)
COMMAND_ARGS = ("command", "cmd", "commands", "script", "code", "input")
WRITE_TOOLS = re.compile(r"write|edit|replace|patch|create|apply|insert", re.I)
FENCE_RE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
DEFINITION_RE = re.compile(
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w]+\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function\*?|fn|func|interface|struct|trait|enum)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
    r"|^[ \t]*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=\n]+)?=\s*"
    r"(?:async\s*)?(?:\([^)\n]*\)\s*(?::[^=\n]+)?=>|[A-Za-z_$][\w$]*\s*=>|function\b)",
    re.M,
)
EXC_RE = re.compile(
    r"^(?:E\s+)?((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Fault|Warning|Exit|"
    r"Interrupt|Invalid\w*)|Error|ERROR|error|fatal|panic)(?::[ \t]*([^\n]*))?$",
    re.M,
)
TRACEBACK_TAIL_RE = re.compile(
    r"Traceback \(most recent call last\):\n(?:[ \t]+[^\n]*\n)+((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)"
    r"(?::[ \t]*([^\n]*))?"
)
TEST_ID_RE = re.compile(
    r"(?:\bFAILED\s+([\w./\-]+\.py::[^\s]+)|([\w./\-]+\.py::[^\s]+)\s+(?:FAILED|ERROR)\b|"
    r"--- FAIL: (\w+))"
)
EXIT_RE = re.compile(
    r"\b(?:exited with (?:code|status)|exit (?:code|status)|returned non-zero exit status)"
    r"[:= ]*(-?\d{1,3})\b",
    re.I,
)
UNITS = {
    "ms": "ms",
    "msec": "ms",
    "millisecond": "ms",
    "milliseconds": "ms",
    "us": "us",
    "µs": "us",
    "ns": "ns",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "h": "h",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "b": "b",
    "bytes": "b",
    "kb": "kb",
    "mb": "mb",
    "gb": "gb",
    "tb": "tb",
    "kib": "kib",
    "mib": "mib",
    "gib": "gib",
    "%": "%",
    "x": "x",
    "px": "px",
    "rps": "rps",
    "req/s": "rps",
    "tokens": "tokens",
    "passed": "passed",
    "failed": "failed",
    "毫秒": "ms",
    "秒": "s",
    "分钟": "min",
}
_UNIT_ALT = "|".join(sorted((re.escape(u) for u in UNITS), key=len, reverse=True))
NUMBER_RE = re.compile(
    rf"(?<![\w.\-/:])(\d+(?:\.\d+)?)[ \t]?({_UNIT_ALT})(?![\w/])"
    r"|(?<![\w.\-/])v?(\d+\.\d+\.\d+(?:[-+][\w.]+)?)(?![\w.]*\w)"
    r"|(?<![\w.\-/])v(\d+(?:\.\d+)?)\b"
    r"|\bport[ \t]*[:=]?[ \t]*(\d{2,5})\b|\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0):(\d{2,5})\b",
    re.I,
)
REQUIREMENT_RE = re.compile(
    r"\b(?:must|mustn't|never|don't|dont|do not|always|instead|should|shouldn't)\b|"
    r"必须|不要|不能|一定|务必|别",
    re.I,
)
OPEN_RE = re.compile(
    r"\b(?:TODO|FIXME|TBD|not yet|still (?:need|failing|fails|broken|open|missing|to do)|"
    r"left to do|remaining|follow[- ]up|next step|pending)\b|待办|还没|尚未|下一步|之后再",
    re.I,
)
# A sentence ends at 。！？； or at . ! ? before a space or the end ("parse.py" goes on).
SENTENCE_RE = re.compile(r"(?:[^\n.!?。！？；]|[.!?]+(?=[^\s.!?]))+(?:[.!?]+|[。！？；]+)?")
SYSTEM_TAG_RE = re.compile(r"</?system>")
WORK_DIR_RE = re.compile(
    r"(?:working directory|work(?:ing)? (?:dir|folder)|current directory|cwd|工作目录)"
    r"[^/\n]{0,20}\n?[ \t]*(/[\w.\-/]*\w)",
    re.I,
)
DIFF_ADDED_RE = re.compile(r"^\+(?!\+\+ )(.*)$", re.M)
GENERIC_ERRORS = frozenset({"error", "fatal", "panic"})  # a bare "error:" line


# ----------------------------------------------------------------------------- normalising


def strip_path(path: str) -> str:
    """``./x``, ``a/x`` and ``b/x`` (git diff sides) count as ``x``."""
    while path.startswith("./"):
        path = path[2:]
    if path.startswith(("a/", "b/")) and "/" in path[2:]:
        path = path[2:]
    return path


def work_root(paths: Iterable[str]) -> str | None:
    """The work folder the absolute paths share with the relative ones: the
    prefix ``P`` that most often makes ``P + relative`` an absolute path seen."""
    paths = set(paths)
    relative = {p for p in paths if not p.startswith(("/", "~"))}
    votes: dict[str, int] = {}
    for p in paths:
        if not p.startswith("/"):
            continue
        parts = p.split("/")
        for cut in range(2, len(parts)):
            if "/".join(parts[cut:]) in relative:
                root = "/".join(parts[:cut]) + "/"
                votes[root] = votes.get(root, 0) + 1
                break
    if not votes:
        return None
    return max(sorted(votes), key=lambda r: votes[r])


def normalise_path(path: str, root: str | None) -> str:
    path = path.rstrip(".")
    if root and path.startswith(root):
        path = path[len(root) :]
    return strip_path(path)


def canonical_number(match: re.Match[str]) -> tuple[str, str]:
    """(key, text) of a NUMBER_RE match: ``1.83 seconds`` → ``1.83s``."""
    value, unit, version, vshort, port1, port2 = match.groups()
    if value is not None:
        return f"{value}{UNITS[unit.lower()]}", match.group(0)
    if version is not None:
        return f"v{version}", match.group(0)
    if vshort is not None:
        return f"v{vshort}", match.group(0)
    return f"port {port1 or port2}", match.group(0)


TIME_LEAD_RE = re.compile(r"(?:\bin|\btook|\bafter|\bevery|\bwithin|\bof|[(:=~≈])\s*\Z", re.I)


def plural_code(match: re.Match[str], text: str) -> bool:
    """``400s`` (status codes, decades) is not 400 seconds: a whole number glued
    to ``s`` counts as a time only after ``in``/``took``/``after``/``every``/``(``."""
    value, unit = match.group(1), match.group(2)
    if value is None or unit.lower() != "s" or "." in value or " " in match.group(0):
        return False
    return TIME_LEAD_RE.search(text, max(0, match.start() - 8), match.start()) is None


def collapse(text: str) -> str:
    return " ".join(text.split())


QUOTES_RE = re.compile(r"[\"'`]")


def command_key(command: str) -> str:
    """A command's matching form: no quotes, single spaces, lower case."""
    return collapse(QUOTES_RE.sub("", command)).lower()

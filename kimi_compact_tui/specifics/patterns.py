"""Patterns and normal forms of the retention categories (no Textual, no I/O)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# ----------------------------------------------------------------------------- patterns

EXTENSIONS = (
    "py|pyi|ipynb|ts|tsx|js|jsx|mjs|cjs|go|rs|java|kt|rb|c|h|cc|cpp|hpp|cs|swift|php|lua|zig|"
    "scala|md|rst|json|jsonl|yaml|yml|toml|ini|cfg|conf|env|sh|bash|zsh|ps1|sql|csv|tsv|txt|"
    "log|html|css|scss|vue|svelte|proto|graphql|tf|lock|db|sqlite|xml|gradle|mod|sum"
)
PATH_RE = re.compile(rf"(?:\.{{1,2}}/|/|~/)?(?:[\w.\-]+/)*[\w.\-]*\w\.(?:{EXTENSIONS})")
PATH_END_RE = re.compile(rf"\.(?<=\w\.)(?:{EXTENSIONS})(?![\w\-/]|\.\w)")  # literal first: fast
DIR_PATH_RE = re.compile(r"/(?<![\w.:/]/)(?:home|Users|work|srv|opt|app|mnt|data)/[\w.\-/]*\w")
SPECIAL_FILES_RE = re.compile(
    r"(?<![\w/.\-*$}])((?:[\w.\-]+/)*(?:Makefile|Dockerfile|Justfile|Rakefile|Gemfile|"
    r"\.gitignore|\.env))(?![\w\-/.*])"
)
URL_RE = re.compile(r"\bhttps?://[^\s<>\"'`)\]}\x00-\x1f\x7f-\x9f]+")  # never a control
FENCE_RE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
DEFINITION_RE = re.compile(
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w]+\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function\*?|fn|func|interface|struct|trait|enum)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
    r"|^[ \t]*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=\n]+)?=\s*"
    r"(?:async\s*)?(?:\([^)\n]*\)\s*(?::[^=\n]+)?=>|[A-Za-z_$][\w$]*\s*=>|function\b)",
    re.M,
)
_EXC_LINE = (
    r"(?:E\s+)?((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Fault|Warning|Exit|"
    r"Interrupt|Invalid\w*)|Error|ERROR|error|fatal|panic)(?::[ \t]*([^\n]*))?$"
)
EXC_RE = re.compile(f"^{_EXC_LINE}", re.M)
# The same lines led by the newline before them (run on the text after a "\n"):
# the scanner jumps from newline to newline instead of trying every position.
EXC_AFTER_NEWLINE_RE = re.compile(f"\n{_EXC_LINE}", re.M)


# How every line EXC_RE reads starts: an ASCII letter or "_" (of its type, or the
# "E" before it). A listing's lines (a number after spaces) hold none.
LINE_LEAD_RE = re.compile(r"\n[A-Za-z_]")


def exception_lines(text: str) -> list[tuple[str, str | None]]:
    """(type, message) of each exception line of ``text``: what
    ``EXC_RE.finditer(text)`` finds, read newline to newline (and none when no
    line starts as one must: a scan far cheaper than the pattern's own)."""
    first = text[:1]
    if not (
        (first.isascii() and (first.isalpha() or first == "_"))
        or LINE_LEAD_RE.search(text) is not None
    ):
        return []
    return [m.groups() for m in EXC_AFTER_NEWLINE_RE.finditer(f"\n{text}")]  # type: ignore[misc]


TRACEBACK_START = "Traceback (most recent call last):\n"  # how TRACEBACK_TAIL_RE starts
TRACEBACK_TAIL_RE = re.compile(
    re.escape(TRACEBACK_START) + r"(?:[ \t]+[^\n]*\n)+((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)"
    r"(?::[ \t]*([^\n]*))?"
)
TEST_ID_RE = re.compile(
    r"(?:\bFAILED\s+([\w./\-]+\.py::[^\s]+)|([\w./\-]+\.py::[^\s]+)\s+(?:FAILED|ERROR)\b|"
    r"--- FAIL: (\w+))"
)
EXIT_RE = re.compile(
    r"\b(?:exited with (?:code|status)|exit[ _](?:code|status)\"?|returned non-zero exit status)"
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


def _trie(words: Iterable[str]) -> str:
    """An alternation of ``words`` spelled as a tree of their shared starts
    (``m(?:s|in(?:s)?)`` for ``ms``, ``min``, ``mins``): the same words, each
    start read once. Any order of the branches finds the same unit: a unit must
    end where its word ends (no word character or ``/`` after it), and a longer
    unit only ever adds word characters to a shorter one, so at most one ends there."""
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def spell(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + spell(node[ch]) for ch in sorted(node) if ch]
        if not branches:
            return ""
        body = f"(?:{'|'.join(branches)})"
        if "" in node:
            return body + "?"
        return branches[0] if len(branches) == 1 else body

    return spell(tree)


UNIT_TRIE = _trie(UNITS)
UNIT_STARTS = "".join(sorted({re.escape(u[0]) for u in UNITS}))
# Patterns run on lower-cased text and lead with a digit (or a literal), so the
# scanner skips most positions fast: a 10,000-message range is ~6 MB of text.
# A number may group its thousands ("200,000 tokens" is one number, never "000 tokens").
NUMBER_RE = re.compile(
    r"([0-9](?<![\w.\-/:,][0-9])[0-9]*+(?:,[0-9]{3}(?![0-9]))*+)(?:(\.[0-9]+\.[0-9]+(?:[-+][\w.]+)?)(?![\w.]*\w)"
    rf"|(\.[0-9]++)?+[ \t]?+(?=[{UNIT_STARTS}])({UNIT_TRIE})(?![\w/]))"
)
V_VERSION_RE = re.compile(r"v(?<![\w.\-/]v)(\d+(?:\.\d+){0,3}(?:[-+][\w.]+)?)(?![\w.]*\w)")
# Two patterns, each led by a literal, so the scanner skips fast ("port" is in "import").
PORT_RE = re.compile(r"port(?<![\w]port)[ \t]*[:=]?[ \t]*(\d{2,5})\b")
HOST_PORT_RE = re.compile(r"(?:localhost|127\.0\.0\.1|0\.0\.0\.0):(\d{2,5})\b")
PORT_HINTS = ("port", "localhost:", "127.0.0.1:", "0.0.0.0:")
ERROR_HINTS = (
    "error", "exception", "fail", "fault", "warning", "exit", "interrupt", "invalid",
    "fatal", "panic", "traceback", "err!",
)  # fmt: skip
# A sentence ends at 。！？； or at . ! ? before a space or the end ("parse.py" goes on);
# "/..." before a word in lower case is a path pattern (Go's "./..."), not an ellipsis.
SENTENCE_RE = re.compile(
    r"(?:[^\n.!?。！？；]|[.!?]+(?=[^\s.!?])|(?<=/)\.\.\.(?=[ \t]+[^\sA-Z]))+"
    r"(?:[.!?]+|[。！？；]+)?"
)
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


PATH_CHARS = frozenset("._-/~")
# A run of the characters a path is made of (a letter or digit, ``_`` and PATH_CHARS).
PATH_RUN_RE = re.compile(r"[\w.\-/~]+")
TECH_NAME_RE = re.compile(r"[A-Z][A-Za-z0-9]*\.js")
SPECIAL_NAMES = ("Makefile", "Dockerfile", "Justfile", "Rakefile", "Gemfile", ".gitignore", ".env")
SPECIAL_NAME_RE = re.compile("|".join(re.escape(name) for name in SPECIAL_NAMES))
# a piece of each of SPECIAL_NAMES, rare in prose ("the file" holds none of them)
SPECIAL_HINTS = ("efile", "rfile", "tfile", "mfile", ".git", ".env")


QUOTES = "\"'`"
# A name that stands for any file ("X.lock", "foo.py", "<name>.md"): not a path.
PLACEHOLDER_RE = re.compile(r"(?:[A-Z]|foo|bar|baz|qux|xxx|XXX|your[\w-]*|<[^>]*>)\.\w+")
NOT_BEFORE = frozenset(":@$}*%")  # a URL, user@host:, $VAR/…, ${VAR}/…, a glob


def quoted_path(text: str, start: int, end: int) -> str | None:
    """The whole path when the one ending at ``end`` is quoted and has spaces
    ("/work/My Project/notes.md"), else None."""
    close = text[end] if end < len(text) else ""
    if not close or close not in QUOTES:
        return None
    line_start = text.rfind("\n", 0, start) + 1
    opening = text.rfind(close, line_start, start)
    if opening < 0 or end - opening > 260:
        return None
    inner = text[opening + 1 : end]
    # a path, not a command: it starts at a root, or a folder comes before its first space
    rooted = inner.startswith(("/", "~/", "./", "../")) or "/" in inner.split(" ", 1)[0]
    if rooted and all(ch.isalnum() or ch in "_ " or ch in PATH_CHARS for ch in inner):
        return inner
    return None


def paths_in(text: str) -> list[str]:
    """File paths in ``text``: a name with a known extension, with any folders
    before it (``./``, ``../``, ``/`` and ``~/`` starts), a quoted one with
    spaces whole, absolute folders under the usual roots, and a few well-known
    extensionless files. Never a glob (``*.test.ts``), a path under a shell
    variable (``$TASK_DIR/spec.json``) or a placeholder name (``X.lock``)."""
    out = []
    backwards = ""  # the text reversed, once: a path's start is a run's end in it
    for m in PATH_END_RE.finditer(text):
        if not backwards:
            backwards = text[::-1]
        start = m.start()
        run = PATH_RUN_RE.match(backwards, len(text) - start)
        if run is not None:
            start -= run.end() - run.start()
        end = m.end()
        before = text[start - 1] if start > 0 else ""
        if before in NOT_BEFORE or text[end : end + 1] == "*":
            continue
        if before == " ":
            whole = quoted_path(text, start, end)
            if whole is not None:
                out.append(whole)
                continue
        candidate = text[start:end]
        if "/" not in candidate and (
            TECH_NAME_RE.fullmatch(candidate) or PLACEHOLDER_RE.fullmatch(candidate)
        ):
            continue  # Node.js, Vue.js: a name; X.lock: any file
        if PATH_RE.fullmatch(candidate):
            out.append(candidate)
    if "/" in text:
        spaced = [p for p in out if " " in p]
        for folder in DIR_PATH_RE.findall(text):
            if not any(p.startswith(folder + " ") for p in spaced):  # a quoted one's start
                out.append(folder)
    # every special name holds one of SPECIAL_HINTS (spelled out here: no generator
    # to step through; the four "…file" ones only where "file" stands), then one scan
    if (
        ("file" in text and ("efile" in text or "rfile" in text or "tfile" in text
                             or "mfile" in text))
        or ".git" in text or ".env" in text
    ) and SPECIAL_NAME_RE.search(text) is not None:  # fmt: skip
        out.extend(SPECIAL_FILES_RE.findall(text))
    return out


# A package manager's listing line: the versions on it are what it installed, not figures.
PACKAGE_LINE_RE = re.compile(
    r"^[ \t]*(?:[+~][ \t]|[├└│]|(?:Collecting|Downloading|Installing|Successfully installed|"
    r"Requirement already satisfied|Using cached|added|removed|changed|updated)\b).*$",
    re.M,
)


def without_lines(text: str, pattern: re.Pattern[str] | None) -> str:
    """``text`` without the lines ``pattern`` matches (the lines kept where they were)."""
    if pattern is None:
        return text
    return pattern.sub("", text)


def output_numbers(
    text: str, harness: re.Pattern[str] | None, low: str | None = None
) -> list[tuple[str, str]]:
    """The figures of a tool's output: not the lines its harness adds around it
    (``harness``, the format's), nor the versions a package manager listed.
    ``low``: its lower case when known (else made only when needed)."""
    if harness is not None:
        text, low = without_lines(text, harness), None
    found = numbers_of(text, low)
    if any(key[:1] == "v" for key, _ in found):  # a version: not one a package manager listed
        text = PACKAGE_LINE_RE.sub("", text)
        found = numbers_in(text.lower(), text)
    return found


# The shape of an ASCII text, one byte a character, for ruling out each pattern of
# :func:`numbers_in` faster than its own scan: every digit becomes ``0``, a capital
# its small letter, and every character that is neither a word character nor one
# of ``.-/:,%`` a space. Where a pattern matches the text, its gate below matches
# the shape (each reads the shape as the pattern reads the text: a digit is a
# ``0``, a space or tab a space, the start of a number the ``0`` after a space), and
# each gate leads with a literal, which the scanner skips to far faster than to
# the pattern's leading digit.
SHAPE_KEPT = frozenset(b"_.-/:,%abcdefghijklmnopqrstuvwxyz")


def _shape_of(byte: int) -> int:
    ch = chr(byte)
    if ch in "0123456789":
        return ord("0")
    if ch.isascii() and ch.isupper():
        return ord(ch.lower())
    return byte if byte in SHAPE_KEPT or byte >= 128 else ord(" ")


SHAPE = bytes(_shape_of(b) for b in range(256))
# NUMBER_RE at a number that follows a space (of the shape); one that starts the
# text or follows a % is looked for apart. An ASCII text holds only ASCII units.
NUMBER_GATE_RE = re.compile(
    rb" 00*+(?:,000(?!0))*+(?:\.0| ?+(?:"
    + _trie(u for u in UNITS if u.isascii()).encode("ascii")
    + rb")(?![\w/]))"
)
PORT_GATE_RE = re.compile(rb"port(?<!\wport) *:? *00")


#: The gates of a text none of :func:`numbers_in`'s patterns can match.
NO_FIGURES = (False, False, False, False)
EVERY_PATTERN = (True, True, True, True)


def figure_gates(text: str) -> tuple[bool, bool, bool, bool] | None:
    """Whether each pattern of :func:`numbers_in` (numbers with a unit, versions,
    ports, host ports) may match ``text`` or its lower case (they read the same
    :data:`SHAPE`): False only where it cannot. None: ``text`` is not ASCII."""
    if not text.isascii():
        return None
    shape = text.encode("ascii").translate(SHAPE)
    gates = (
        shape[:1] == b"0"
        or (b"%" in shape and b"%0" in shape)  # one byte first: a far faster look
        or NUMBER_GATE_RE.search(shape) is not None,
        b"v0" in shape,
        b"port" in shape and PORT_GATE_RE.search(shape) is not None,
        b":00" in shape and (b"localhost:00" in shape or b"0.0.0.0:00" in shape),
    )
    return NO_FIGURES if gates == NO_FIGURES else gates


def numbers_in(low: str, text: str | None = None) -> list[tuple[str, str]]:
    """(key, shown) of every number with a unit, version and port in ``low``
    (lower-cased ``text``): ``1.83 seconds`` → ``1.83s``, ``v2.1.0``, ``port 8080``.
    A pattern :func:`figure_gates` rules out is not run (what
    :func:`numbers_scanned` finds)."""
    gates = figure_gates(low)
    if gates is NO_FIGURES:
        return []
    return numbers_scanned(low, text, gates or EVERY_PATTERN)


def numbers_of(text: str, low: str | None = None) -> list[tuple[str, str]]:
    """:func:`numbers_in` of ``text``, lower-cased only when a pattern may match
    (``low``: its lower case when known)."""
    gates = figure_gates(text)
    if gates is NO_FIGURES:
        return []
    return numbers_scanned(text.lower() if low is None else low, text, gates or EVERY_PATTERN)


def numbers_scanned(
    low: str,
    text: str | None = None,
    gates: tuple[bool, bool, bool, bool] = EVERY_PATTERN,
) -> list[tuple[str, str]]:
    """:func:`numbers_in` with each pattern run that its gate allows (False:
    the pattern is known to find nothing)."""
    numbers, versions, ports, hosts = gates
    same = text is not None and len(text) == len(low)
    out = []
    for m in NUMBER_RE.finditer(low) if numbers else ():
        whole, version, decimal, unit = m.groups()
        if version is not None:
            if "," in whole:
                continue
            key = f"v{whole}{version}"
        else:
            if unit == "s" and decimal is None and plural_code(m, low):
                continue
            key = f"{whole.replace(',', '')}{decimal or ''}{UNITS[unit]}"
        out.append((key, text[m.start() : m.end()] if same else m.group(0)))  # type: ignore[index]
    if versions and "v" in low:
        for m in V_VERSION_RE.finditer(low):
            out.append((f"v{m.group(1)}", text[m.start() : m.end()] if same else m.group(0)))  # type: ignore[index]
    if ports and "port" in low:
        for m in PORT_RE.finditer(low):
            out.append((f"port {m.group(1)}", text[m.start() : m.end()] if same else m.group(0)))  # type: ignore[index]
    if hosts and ":" in low and any(h in low for h in PORT_HINTS[1:]):
        for m in HOST_PORT_RE.finditer(low):
            out.append((f"port {m.group(1)}", text[m.start() : m.end()] if same else m.group(0)))  # type: ignore[index]
    return out


TIME_LEAD_RE = re.compile(r"(?:\bin|\btook|\bafter|\bevery|\bwithin|\bof|[(:=~≈])\s*\Z")


def plural_code(match: re.Match[str], text: str) -> bool:
    """``400s`` (status codes, decades) is not 400 seconds: a whole number glued
    to ``s`` counts as a time only after ``in``/``took``/``after``/``every``/``(``."""
    if " " in match.group(0) or "\t" in match.group(0):
        return False
    return TIME_LEAD_RE.search(text, max(0, match.start() - 8), match.start()) is None


def collapse(text: str) -> str:
    return " ".join(text.split())


QUOTES_RE = re.compile(r"[\"'`]")


def command_key(command: str) -> str:
    """A command's matching form: no quotes, single spaces, lower case."""
    return collapse(QUOTES_RE.sub("", command)).lower()

"""Patterns and word lists the offline summarizer reads a transcript with."""

from __future__ import annotations

import re

MAX_DETAILED = 2000  # messages read in detail (the most recent ones, plus system notes)
WHOLE_CODE_LINES = 20  # code with fewer lines than this is kept whole
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
# A real error line: an exception line (``Name: message``, pytest's ``E   `` prefix
# allowed), a compiler/runtime ``error:``/``fatal:``/``panic:`` line, a failing test
# (pytest ``FAILED``, go ``--- FAIL``, ``N failed``) or a crash. Anchored at the start
# of the line, so code that merely names an error class is not one.
ERROR_LINE_RE = re.compile(
    r"^\s*(?:E\s+)?(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Failure|Fault|Exit)\b"
    r"(?::|\s*$)|"
    r"^\s*(?:error|fatal|panic)(?:\[[\w-]+\])?:|^\s*(?:npm ERR!|ERROR\b|FATAL\b)|"
    r"^FAILED\b|^\s*--- FAIL\b|^Exception in thread\b|"
    r"\bSegmentation fault\b|\bexited with (?:exit )?code [1-9]|^\s*Uncaught\b"
)
# pytest's closing line ("==== 1 failed, 3 passed in 0.14s ===="): an error only when
# the run shows no error line of its own.
TESTS_FAILED_RE = re.compile(r"^=+ (?:.*\b)?\d+ failed\b.*$", re.M)
# Lines of code, whatever error class they name: never an error line themselves.
CODE_LINE_RE = re.compile(
    r"^\s*(?:>\s|raise\b|except\b|class\s|def\s|async\s|import\s|from\s+\S+\s+import\b|"
    r"return\b|throw\b|catch\b|if\b|elif\b|assert\b|with\b|try\b|new\s|[\w.]+\s*=[^=])"
)
ERROR_CONTINUATION_RE = re.compile(r"^\s+(?:at |File |\^|~)")
# Unified diffs: file headers and hunks (whose +/-/space lines are code, not output).
DIFF_FILE_RE = re.compile(r"^(?:diff --git a/(\S+) b/(\S+)|--- a/(\S+)|\+\+\+ b/(\S+))", re.M)
DIFF_HEADER_RE = re.compile(
    r"^(?:diff --git |index [0-9a-f]+\.\.|--- |\+\+\+ |new file mode|deleted file mode|"
    r"similarity index|rename (?:from|to) )"
)
HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
# Injected blocks: kimi-cli's ``<system>`` notes and ``<system-reminder>`` (plan mode).
REMINDER_RE = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)
INJECTED_RE = re.compile(
    r"\A(?:\s*(?:<system-reminder>.*?(?:</system-reminder>|\Z)|<system>.*?</system>))+\s*\Z",
    re.S,
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

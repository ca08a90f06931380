"""The one masker: secret-looking strings in session text, replaced with
``[masked]`` wherever that text leaves the session again (the summary and
its anchor block written into the session, the compaction request, the
probe's requests, the revision request) or is logged (the audit record).

It is built on a maintained detector, `detect-secrets`
(https://github.com/Yelp/detect-secrets): every regex plugin it ships (AWS,
Azure, GitHub, GitLab, Slack, Stripe, npm, PyPI, SendGrid, Twilio, JWT,
basic auth in URLs, ...) is used as it is, so new shapes come with the
package; and its keyword list (``password``, ``secret``, ``api_key``, ...) is
the list of names whose assigned value is masked. Its public-IP plugin is left
out (an address is no secret) and its entropy plugins too (they mask commit
ids and hashes, the identifiers a summary must keep).

:func:`extra_patterns` adds the shapes that detector has no plugin for, each
named: command-line passwords (``--password X``, ``mysql -pX``), Hugging Face
``hf_`` tokens, ``sk-`` keys without the legacy OpenAI marker, fine-grained
GitHub tokens, Google API keys, bearer tokens, Slack tokens of any shape, a
whole PEM private key block (the plugin sees only its first line). A match is
widened to the end of its token, so a key longer than the plugin's fixed
length (Stripe's current ``sk_live_`` keys) is masked whole.

The rule errs towards masking (a long random-looking value after ``key=`` is
masked even if it is not a key); the name before it (``api_key=``) is kept,
so the text still reads. detect-secrets loads on the first text that needs
masking, never at start-up. Each detector runs only on the lines that hold
one of its needles (:data:`NEEDLES`), so a long transcript costs a few
substring searches; :func:`mask_texts` masks many texts (the compaction
request's parts) behind one quick prefilter over all of them (figures in
docs/BENCHMARKS.md).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from functools import lru_cache, partial
from itertools import accumulate
from typing import Any

MASK = "[masked]"

#: The detector's plugins left out (by their ``secret_type``), and why.
LEFT_OUT = {
    "Public IP (ipv4)": "an address is no secret",
    "Private Key": "the whole block is masked by extra_patterns (the plugin sees its first line)",
}


@lru_cache(maxsize=1)
def extra_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The shapes detect-secrets has no plugin for (each named), or finds only
    in part; compiled on first use, not when the module loads."""
    return (
        (
            "PEM private key block",
            re.compile(
                r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
                r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
                re.S,
            ),
        ),
        (
            "PuTTY private key",
            re.compile(r"PuTTY-User-Key-File-\d:.*?(?:Private-MAC: \S+|\Z)", re.S),
        ),
        ("sk-/rk-/pk- API key", re.compile(r"\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,}")),
        (
            "Stripe key",
            re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}|\bwhsec_[0-9A-Za-z]{20,}"),
        ),
        (
            "GitHub token",
            re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"),
        ),
        ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
        ("Slack token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}", re.IGNORECASE)),
        ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
        ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
        ("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
        ("bearer token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/-]{16,}=*")),
        ("URL password", re.compile(r"(?<=://)[^/\s:@]*:(?P<value>[^/\s@]+)(?=@)")),
        (
            "password option",
            re.compile(
                r"(?i)(?<![\w-])--?(?:[\w-]*-)?"
                r"(?:password|passwd|pass|pwd|token|api-key|apikey|secret|auth-token)"
                r"(?:=|\s+)(?!-)([\"']?)(?P<value>[^\s\"']{3,})\1"
            ),
        ),
        (
            "mysql -p",
            re.compile(
                r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport|mysqlshow)\b"
                r"[^\n|;&]*?\s-p(?P<value>[^\s\"']+|\"[^\"\n]+\"|'[^'\n]+')"
            ),
        ),
        ("sshpass -p", re.compile(r"\bsshpass\s+-p\s*(?P<value>\S+)")),
        (
            "registry login -p",
            re.compile(
                r"\b(?:docker|podman|helm|buildah|skopeo)\s+(?:registry\s+)?login\b"
                r"[^\n|;&]*?\s(?:-p|--password)[\s=]+(?P<value>[^\s\"']+)"
            ),
        ),
        ("basic auth header", re.compile(r"(?i)(?<=basic )[A-Za-z0-9+/]{16,}=*")),
    )


#: Names that say their value is a secret: detect-secrets' keyword list, and
#: the names it leaves to its other plugins (tokens, credentials, access keys).
MORE_NAMES = (
    "token",
    "api-key",
    "credentials?",
    "access_?key",
    "secret_?key",
    "passphrase",
    "auth",
    "_authToken",
)


@lru_cache(maxsize=1)
def detector_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """detect-secrets' regex plugins (:data:`LEFT_OUT` aside), by secret type."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    out: list[tuple[str, re.Pattern[str]]] = []
    plugins: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
    for secret_type, detector in sorted(plugins.items()):
        if secret_type in LEFT_OUT or not issubclass(detector, RegexBasedDetector):
            continue
        denylist: Any = detector.__dict__.get("denylist", ())  # each plugin's class attribute
        out.extend((secret_type, pattern) for pattern in denylist)
    return tuple(out)


@lru_cache(maxsize=1)
def assigned_re() -> re.Pattern[str]:
    """``name = value`` where the name says secret: the value is masked."""
    from detect_secrets.plugins.keyword import DENYLIST

    names = "|".join((*DENYLIST, *MORE_NAMES))
    return re.compile(
        rf"(?i)\b([\w.-]*(?:{names})[\w.-]*[\"']?\]?\s*(?::=|=>|[:=])\s*)"
        r"(?![\"']?\[masked\])(?![\"']?\d+\b)(?![\"']?(?:true|false|null|none|bearer|basic|digest)\b)"
        r"(?![\"']?(?:your|my|<|\$|%|\{))"
        r"(?![\"']?(?:self|settings|config|cfg|conf|os|env|process|ctx|args|opts|options|"
        r"secrets|app|request)\.[A-Za-z_])"
        r"([\"']?)([^\s\"',;()\[\]{}<>]{6,})\2(?![(\[.\w])"
    )


#: Names that hold something about a secret, not the secret (``token_type``,
#: ``api_key_env``, ``secret_name``).
NOT_A_SECRET_NAME = re.compile(
    r"(?i)(?:_|-)(?:type|url|uri|file|path|env|name|id|count|length|limit|endpoint|header|"
    r"prefix|format|kind)[\"'\]]?\s*(?::=|=>|[:=])\s*$"
)


#: Where each detector may match: literal needles (``"ci"`` ones are looked
#: for in the lower-cased text), else :data:`LONG_RUN_RE` (a run of 23
#: characters or more: every needle-less shape is that long). A detector is
#: run only on the lines that hold one of its needles, so a long transcript
#: costs a few substring searches, not every regex over every character.
NEEDLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # secret type or extra pattern name: (case-sensitive needles, lower-case needles)
    "Artifactory Credentials": (("AKC", "AP"), ()),
    "AWS Access Key": (("AKIA", "ASIA", "A3T", "ABIA", "ACCA"), ("aws",)),
    "Azure Storage Account access key": (("AccountKey=",), ()),
    "Basic Auth Credentials": (("://",), ()),
    "Cloudant Credentials": ((), ("key", "pw", "pass", "token", "cloudant")),
    "GitHub Token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), ()),
    "GitLab Token": (
        ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "GR1348941", "glcbt-", "glimt-")
        + ("glptt-", "glagent-", "gloas-"),
        (),
    ),
    "IBM Cloud IAM Key": ((), ("key", "pwd", "pass", "token")),
    "IBM COS HMAC Credentials": ((), ("secret",)),
    "JSON Web Token": (("eyJ",), ()),
    "Mailchimp Access Key": (("-us",), ()),
    "NPM tokens": (("_authToken",), ()),
    "OpenAI Token": (("T3BlbkFJ",), ()),
    "PyPI Token": (("pypi-",), ()),
    "SendGrid API Key": (("SG.",), ()),
    "Slack Token": ((), ("xox", "hooks.slack.com")),  # the plugin ignores case
    "SoftLayer Credentials": ((), ("key", "pwd", "pass", "token", "softlayer")),
    "Square OAuth Secret": (("sq0csp-",), ()),
    "Stripe Access Key": (("k_live_",), ()),
    "sk-/rk-/pk- API key": (("sk-", "rk-", "pk-"), ()),
    "Stripe key": (("_live_", "_test_", "whsec_"), ()),
    "GitHub token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ()),
    "Hugging Face token": (("hf_",), ()),
    "Slack token": ((), ("xox",)),
    "Google API key": (("AIza",), ()),
    "AWS access key id": (("AKIA", "ASIA"), ()),
    "JWT": (("eyJ",), ()),
    "bearer token": ((), ("bearer ",)),
    "URL password": (("://",), ()),
    "password option": ((), ("-pass", "-pwd", "-token", "-api", "-secret", "-auth")),
    "mysql -p": ((), ("mysql", "mariadb")),
    "sshpass -p": (("sshpass",), ()),
    "registry login -p": ((), ("login",)),
    "basic auth header": ((), ("basic ",)),
    "assigned": ((), ("key", "pass", "pwd", "secret", "token", "cred", "auth", "contrase")),
}
#: The gate of a detector with no needles (Discord, Telegram, Twilio, and any
#: plugin a later detect-secrets adds).
LONG_RUN_RE = re.compile(r"[A-Za-z0-9_-]{23,}")
#: Shapes that span lines: masked over the whole text when their marker is in it.
BLOCK_MARKERS = ("PRIVATE KEY", "PuTTY-User-Key-File")
BLOCKS = frozenset({"PEM private key block", "PuTTY private key"})
#: What a masked token is widened over (the rest of a key longer than the plugin says).
TOKEN_TAIL = re.compile(r"[A-Za-z0-9_-]*")
SEPARATORS = " \t\r\n=:\"'"


def _value_span(m: re.Match[str]) -> tuple[int, int]:
    """The span of the secret in a match: a named ``value`` group, else the
    last captured group when it is the value (8 characters or more), else the
    whole match less separators around it."""
    if "value" in m.re.groupindex and m.group("value") is not None:
        return m.span("value")
    for index in range(m.re.groups, 0, -1):
        group = m.group(index)
        if group is not None and len(group) >= 8:
            return m.span(index)
    start, end = m.span()
    text = m.string
    while start < end and text[start] in SEPARATORS:
        start += 1
    while end > start and text[end - 1] in SEPARATORS:
        end -= 1
    return start, end


#: How far around a needle a detector looks (characters before, after): a
#: name, its separator and the start of its value. A value cut at the window's
#: end is widened to the end of its token in the whole text.
BEFORE, AFTER = 64, 256
BREAKS = " \t\n\"'`(<[{,;"
BREAK_RE = re.compile(r"\s")  # a window ends at a space: what follows a value is seen


def _window(text: str, at: int, end: int) -> tuple[int, int]:
    """The window around ``text[at:end]``: from the last break at most
    :data:`BEFORE` characters before it (the line's start at most), to
    :data:`AFTER` characters after it (the line's end at most)."""
    lo = max(0, at - BEFORE)
    line_start = text.rfind("\n", lo, at) + 1
    start = lo = max(lo, line_start)
    if lo > 0 and lo != line_start and text[lo - 1] not in BREAKS:
        for i in range(lo, at):  # not inside a word: from the first break on
            if text[i] in BREAKS:
                start = i + 1
                break
    stop = text.find("\n", end, end + AFTER)
    if stop != -1:
        return start, stop
    stop = min(len(text), end + AFTER)
    brk = BREAK_RE.search(text, stop, stop + AFTER)  # never inside a word
    return start, (brk.start() if brk else min(len(text), stop + AFTER))


def _merged(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    windows.sort()
    out: list[tuple[int, int]] = []
    for start, end in windows:
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _needle_windows(
    text: str,
    lowered: str,
    needles: tuple[tuple[str, ...], tuple[str, ...]],
    seen: dict[tuple[str, bool], list[tuple[int, int]]],
) -> list[tuple[int, int]]:
    """The windows around every place ``text`` holds one of ``needles``
    (each needle is looked for once per text: ``seen``)."""
    windows: list[tuple[int, int]] = []
    sensitive, lower = needles
    for haystack, found, cased in ((text, sensitive, True), (lowered, lower, False)):
        for needle in found:
            known = seen.get((needle, cased))
            if known is None:
                known = seen[(needle, cased)] = []
                at = haystack.find(needle)
                while at != -1:
                    window = _window(text, at, at + len(needle))
                    known.append(window)
                    at = haystack.find(needle, max(window[1], at + 1))
            windows.extend(known)
    return _merged(windows)


def _long_run_windows(text: str) -> list[tuple[int, int]]:
    windows = [_window(text, m.start(), m.end()) for m in LONG_RUN_RE.finditer(text)]
    return _merged(windows)


def _detectors() -> list[tuple[str, re.Pattern[str]]]:
    return [
        *detector_patterns(),
        *extra_patterns(),
        ("assigned", assigned_re()),
    ]


def _spans_in(
    text: str, name: str, pattern: re.Pattern[str], window: tuple[int, int]
) -> list[tuple[int, int]]:
    """The secrets ``pattern`` finds in ``text[window]``, as spans of ``text``."""
    out: list[tuple[int, int]] = []
    base = window[0]
    for m in pattern.finditer(text[window[0] : window[1]]):
        if name == "assigned":
            if NOT_A_SECRET_NAME.search(m.group(1)):
                continue
            start, end = m.span(3)
        else:
            start, end = _value_span(m)
        if end <= start:
            continue
        start, end = base + start, base + end
        if text[end - 1 : end].isalnum():
            tail = TOKEN_TAIL.match(text, end)
            end = tail.end() if tail else end
        out.append((start, end))
    return out


def secret_spans(
    text: str, detectors: list[tuple[str, re.Pattern[str]]] | None = None
) -> list[tuple[int, int]]:
    """The spans of ``text`` the masker replaces, sorted and merged. Each
    detector (``detectors``: these only) runs on the windows its needles (or
    a long run) point to."""
    # U+0130 is the one character whose lower case is two: replaced, the
    # lower-cased text keeps every offset of ``text``.
    lowered = text.replace("\u0130", "I").lower()
    long_runs: list[tuple[int, int]] | None = None
    seen: dict[tuple[str, bool], list[tuple[int, int]]] = {}
    spans: list[tuple[int, int]] = []
    for name, pattern in _detectors() if detectors is None else detectors:
        if name in BLOCKS:
            if any(marker in text for marker in BLOCK_MARKERS):
                spans.extend(_spans_in(text, name, pattern, (0, len(text))))
            continue
        needles = NEEDLES.get(name)
        if needles is not None:
            windows = _needle_windows(text, lowered, needles, seen)
        else:
            if long_runs is None:
                long_runs = _long_run_windows(text)
            windows = long_runs
        for window in windows:
            spans.extend(_spans_in(text, name, pattern, window))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


#: A text at least this long, of more than one line, is masked line by line
#: through :func:`mask_texts` (the same result: every detector but the
#: whole-block ones sees one line at a time, see :func:`_window`).
LINES_FROM = 4096


def mask_secrets(text: str) -> str:
    """``text`` with every secret-looking string replaced by ``[masked]``."""
    if not text:
        return text
    if (
        len(text) >= LINES_FROM
        and "\n" in text
        and not any(marker in text for marker in BLOCK_MARKERS)
    ):
        return "\n".join(mask_texts(text.split("\n")))
    return _masked(text)


def _masked(text: str, detectors: list[tuple[str, re.Pattern[str]]] | None = None) -> str:
    out: list[str] = []
    at = 0
    for start, end in secret_spans(text, detectors):
        if text[start:end] == MASK:
            continue
        out.append(text[at:start])
        out.append(MASK)
        at = end
    if not out:
        return text
    out.append(text[at:])
    return "".join(out)


#: The user info of a URL (``user:password@``), which can hold a key.
URL_USERINFO_RE = re.compile(r"(\w+://)[^/@\s]*@")


def without_userinfo(text: str) -> str:
    """``text`` with every URL's user info (``user:password@``) left out."""
    return URL_USERINFO_RE.sub(r"\1", text)


# ----------------------------------------------------------------------------- many texts
#
# The prefilter of :func:`mask_texts`: a text the masker would change holds
# one of these, so a text that holds none is left as it is without running
# the detectors. Each entry is implied by every match of the detectors it
# stands for (checked against the masker, text by text, in
# tests/providers/test_masking_written_and_sent.py and
# tests/providers/test_mask_gate.py):
#
# - a run of 23 characters of ``[A-Za-z0-9_-]`` (:data:`GATE_RUN`) stands for
#   every shape whose value is that long: the needle-less plugins, GitHub,
#   GitLab, OpenAI, PyPI, SendGrid, Stripe, Mailchimp, Google and Hugging Face
#   keys, and the keyword plugins (Cloudant, IBM, SoftLayer: 24 characters
#   and more after the name);
# - the literals of :data:`GATE_PASSES` stand for the shorter ones, each
#   with what must stand around it, tried in place (the literals that share
#   a byte are looked for in one pass, :data:`GATE_GROUPS`: a search of the
#   blob costs about the same whatever it looks for, so there are as few as
#   can be):
#   ``AKIA`` and the other ``A`` ids, ``eyJ``, ``xox``, ``user:password@`` or
#   a Slack hook after ``://``, ``aws``, ``mysql``, ``login``, ``bearer``...;
#   a shape that holds a name that says secret (:data:`GATE_NAMES`) is tried
#   with that name (``-password``, ``sshpass`` with ``pass``,
#   ``PRIVATE KEY``, ``--api-key`` with ``key``, ``_authToken`` with
#   ``token``), and ``sk-`` and ``sq0csp-`` with ``-``. The name
#   followed by ``=`` or ``:`` and a value (:data:`GATE_VALUE`) is the
#   ``assigned`` rule's shape (the ``name`` groups). A text let through by
#   those groups alone can hold no other shape (every other detector stands
#   behind a run or another alternative), so only the ``assigned`` rule runs
#   on it.
#
# Texts are looked at as one UTF-8 blob (byte searches are fast); the four
# characters a case-insensitive match or ``str.lower`` treats as ASCII
# letters (İ ı ſ K) are folded to them first, so the blob never misses what
# the text holds. A pass on the lower-cased blob lets through a shape the
# detector wants in one case in any case: more texts, never fewer.
#: Each entry: (looked for in the lower-cased blob, the literal, what may stand
#: around it for a detector: any one of these, tried where the literal ends,
#: and whether the literal is a name of :data:`GATE_NAMES`). The literals are
#: searched for in the passes of :data:`GATE_GROUPS`.
GATE_PASSES: tuple[tuple[bool, bytes, tuple[bytes, ...], bool], ...] = (
    (
        True,
        b"key",
        (
            rb"(?<=private key)",
            rb"(?<=putty-user-key)",
            rb"(?<=accountkey)=",
            rb"(?<=-api-key)",
            rb"(?<=-apikey)",
        ),
        True,
    ),
    (True, b"pass", (rb"(?<=sshpass)", rb"(?<=-pass)"), True),
    (True, b"pwd", (rb"(?<=-pwd)",), True),
    (True, b"secret", (rb"(?<=-secret)",), True),
    (True, b"token", (rb"(?<=-token)", rb"(?<=_authtoken)"), True),
    (True, b"cred", (), True),
    (True, b"auth", (), True),
    (True, b"contrase", (), True),
    (True, b"-", (rb"(?<=sq0csp-)", rb"(?<=[srp]k-)"), False),
    (True, b"aws", (b"",), False),
    (True, b"mysql", (b"",), False),
    (True, b"mariadb", (b"",), False),
    (True, b"login", (b"",), False),
    (True, b"bearer ", (b"",), False),
    (True, b"basic ", (b"",), False),
    (False, b"A", (b"KC", b"KIA", b"SIA", b"3T", b"BIA", b"CCA", rb"P[0-9A-F]"), False),
    (False, b"eyJ", (b"",), False),
    (True, b"xox", (b"",), False),
    (True, b"://", (rb"[^\s@]*@", rb"(?<=https://)hooks\.slack\.com"), False),
)
#: The ``assigned`` rule's names (each followed by ``=`` or ``:`` and a value).
GATE_NAMES = (b"key", b"pass", b"pwd", b"secret", b"token", b"cred", b"auth", b"contrase")
GATE_RUN_LENGTH = 23
#: What follows a name of :data:`GATE_NAMES` in the ``assigned`` rule: the
#: rest of the name, ``=`` or ``:``, then the value as the rule takes it: six
#: characters or more that are not followed by ``(``, ``[``, ``.`` or a word
#: character (``token = parse(x)`` is a call, no value). A byte of a
#: character past ASCII is neither, so the gate never drops what the rule,
#: reading characters, would take.
GATE_VALUE = (
    rb"[\w.\x80-\xff-]*[\s\"'\]\x1c-\x1f\x80-\xff]*[:=][=>]?[\s\x1c-\x1f\x80-\xff]*"
    rb"[\"']?[^\s\"',;()\[\]{}<>]{6,}?[\"']?(?![(\[.\w])"
)

#: The passes: the literals of :data:`GATE_PASSES` that share a piece (a
#: byte, mostly) are looked for together, by that piece, each tried where
#: the piece stands (one search of the blob costs about the same whatever it
#: looks for). Each entry: (on the lower-cased blob, the piece, its literals).
GATE_GROUPS: tuple[tuple[bool, bytes, tuple[bytes, ...]], ...] = (
    (True, b"k", (b"key", b"token")),
    (True, b"c", (b"secret", b"cred", b"contrase")),
    (True, b"w", (b"aws", b"pwd")),
    (True, b"b", (b"bearer ", b"basic ", b"mariadb")),
    (True, b"pass", (b"pass",)),
    (True, b"auth", (b"auth",)),
    (True, b"login", (b"login",)),
    (True, b"mysql", (b"mysql",)),
    (True, b"-", (b"-",)),
    (False, b"A", (b"A",)),
    (False, b"eyJ", (b"eyJ",)),
    (True, b"xox", (b"xox",)),
    (True, b"://", (b"://",)),
)
#: The passes whose piece holds a byte that is rare in most text: that byte
#: and where it stands in the piece. Such a pass looks for the byte
#: (``bytes.find``: ten times as fast as the regex engine's own search) and
#: tries its pattern there, until the byte has been found more than once per
#: :data:`ANCHOR_SPAN` bytes of the blob; then the regex engine searches on.
GATE_ANCHORS: dict[bytes, tuple[bytes, int]] = {
    b"A": (b"A", 0),
    b"eyJ": (b"J", 2),
    b"xox": (b"x", 0),
    b"-": (b"-", 0),
    b"w": (b"w", 0),
    b"mysql": (b"q", 3),
}
ANCHOR_SPAN = 4096

Pass = tuple[bool, re.Pattern[bytes], re.Pattern[bytes] | None, tuple[bytes, int] | None]


@lru_cache(maxsize=1)
def gate() -> tuple[Pass, ...]:
    """The prefilter's passes (:data:`GATE_GROUPS`), compiled on first use:
    (on the lower-cased blob, the pattern, the pattern without its ``name``
    groups when it has both, its anchor byte)."""
    entries = {(lower, literal): (around, name) for lower, literal, around, name in GATE_PASSES}
    assert len(entries) == len(GATE_PASSES)
    grouped = [(lower, literal) for lower, _, literals in GATE_GROUPS for literal in literals]
    assert sorted(grouped) == sorted(entries), "every literal in one pass"
    out: list[Pass] = []
    for lower, piece, literals in GATE_GROUPS:
        branches: list[bytes] = []
        shape_branches: list[bytes] = []
        for literal in literals:
            around, name = entries[(lower, literal)]
            at = literal.index(piece)
            head = re.escape(literal[: at + len(piece)])
            start = b"(?<=" + head + b")" if at else b""
            rest = start + re.escape(literal[at + len(piece) :])
            shapes = b"|".join(around)
            if around:
                shape_branches.append(rest + b"(?:" + shapes + b")")
            value = rb"(?P<name%d>" % len(branches) + GATE_VALUE + b")" if name else b""
            both = shapes + (b"|" if around and value else b"") + value
            branches.append(rest + b"(?:" + both + b")")
        pattern = re.escape(piece) + b"(?:" + b"|".join(branches) + b")"
        has_names = any(entries[(lower, literal)][1] for literal in literals)
        shapes_only = (
            re.compile(re.escape(piece) + b"(?:" + b"|".join(shape_branches) + b")")
            if has_names and shape_branches
            else None
        )
        out.append((lower, re.compile(pattern), shapes_only, GATE_ANCHORS.get(piece)))
    return tuple(out)


def _searcher(
    haystack: bytes, pattern: re.Pattern[bytes], anchor: tuple[bytes, int] | None
) -> Callable[[int], re.Match[bytes] | None]:
    """``pattern.search(haystack, pos)`` as a function of ``pos``; by the
    pass's anchor byte while that byte is rare in ``haystack``."""
    if anchor is None:
        return partial(pattern.search, haystack)
    byte, offset = anchor
    budget = len(haystack) // ANCHOR_SPAN

    def search(pos: int) -> re.Match[bytes] | None:
        nonlocal budget
        at = haystack.find(byte, pos + offset) if budget > 0 else -2
        while at >= 0:
            budget -= 1
            if budget <= 0:  # the byte is common here: the engine's search from this one on
                return pattern.search(haystack, at - offset)
            m = pattern.match(haystack, at - offset)  # every match starts with the literal
            if m is not None:
                return m
            at = haystack.find(byte, at + 1)
        return None if at == -1 else pattern.search(haystack, pos)

    return search


#: Bytes of a long run as ``a``, every other byte as a space.
GATE_RUN = bytes(
    ord("a") if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "_-") else ord(" ")
    for b in range(256)
)
GATE_FOLD = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}
GATE_FOLD_CHARS = "\u0130\u0131\u017f\u212a"


def _folded(text: str) -> str:
    if text.isascii() or not any(c in text for c in GATE_FOLD_CHARS):
        return text
    return text.translate(GATE_FOLD)


def _gated(texts: list[str]) -> tuple[set[int], set[int]]:
    """The indices of ``texts`` the prefilter lets through to the masker: to
    every detector, and to the ``assigned`` rule only."""
    encoded = [
        t.encode() if t.isascii() else _folded(t).encode("utf-8", "surrogatepass") for t in texts
    ]
    blob = b"\n".join(encoded)
    # where each text starts in the blob, then the end (past the last separator)
    starts = list(accumulate((len(chunk) + 1 for chunk in encoded), initial=0))
    del encoded  # the blob holds them: one copy fewer at the peak

    def part_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset) - 1

    full: set[int] = set()
    assigned: set[int] = set()
    run = b"a" * GATE_RUN_LENGTH
    runs = blob.translate(GATE_RUN)
    at = runs.find(run)
    while at != -1:
        index = part_of(at)
        full.add(index)
        at = runs.find(run, max(at + 1, starts[index + 1]))
    del runs
    lowered = blob.lower()
    for lower, pattern, shapes_only, anchor in gate():
        haystack = lowered if lower else blob
        search = _searcher(haystack, pattern, anchor)
        m = search(0)
        while m is not None:
            index = part_of(m.start())
            after = starts[index + 1]  # the next text
            if m.lastgroup is None:  # a shape, not a name and a value
                full.add(index)
            else:  # a name and a value; any other shape further in the same text?
                assigned.add(index)
                if shapes_only is not None and shapes_only.search(haystack, m.start() + 1, after):
                    full.add(index)
            m = search(max(m.start() + 1, after))
    return full, assigned - full


def mask_texts(texts: list[str]) -> list[str]:
    """Each of ``texts`` masked as :func:`mask_secrets` masks it, the same
    result, faster: a quick prefilter over all of them (byte searches over
    one blob) leaves the texts that hold nothing a detector could match as
    they are, and the masker runs on the others (a 10,000-message request
    in docs/BENCHMARKS.md)."""
    full, assigned = _gated(texts)
    out = list(texts)
    for i in full:
        out[i] = mask_secrets(texts[i])
    if assigned:
        only = [d for d in _detectors() if d[0] == "assigned"]
        for i in assigned:
            out[i] = _masked(texts[i], only)
    return out

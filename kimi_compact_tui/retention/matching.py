"""Match extracted items against a text (a summary, or the kept messages).

For most categories precision comes first: the matcher errs towards "kept",
so an item reported missing is really absent; it tolerates case, quoting, path
forms and surrounding punctuation. The critical categories (user requests,
instructions, open tasks) are kept only by one contiguous passage that carries
them: verbatim, with small edits, or a faithful paraphrase
(:mod:`kimi_compact_tui.retention.passage`); never by words scattered over
the text. :func:`misstatement` reads what status a text states of an item.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from rapidfuzz import fuzz

from kimi_compact_tui.retention.passage import Passages, Request
from kimi_compact_tui.retention.passage import kept as passage_kept
from kimi_compact_tui.retention.textindex import INDEX_MIN_CHARS, BoundedIndex, TokenIndex
from kimi_compact_tui.specifics import OPEN_STATUSES, Item, kinds
from kimi_compact_tui.specifics.patterns import (
    GENERIC_ERRORS,
    collapse,
    command_key,
    numbers_in,
)

SENTENCE_OVERLAP = 0.5  # share of content tokens that keeps an error's message
WORD_RE = re.compile(r"[\w$]+")
_WORD_RUN_RE = re.compile(r"\w+")
LATIN_RE = re.compile(r"[a-z\u00c0-\u04ff][a-z0-9\u00c0-\u04ff_'-]{2,}|\d+(?:\.\d+)*")  # not CJK
CJK_RUN_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
STOPWORDS = frozenset(
    "the and for are but not you your with this that there then than from have has had was "
    "were will would can could should must never don't dont always instead into onto out "
    "all any our its it's what which when where who how why also just only please let's "
    "lets make sure need want like use using used get got been being does did doing "
    "them they their these those some such very more most much many each other".split()
)


SUFFIXES = ("ing", "ed", "es", "s", "ly")
ES_STEMS = ("s", "x", "z", "ch", "sh")


def stem(word: str) -> str:
    """A light stem so "means"/"mean" and "skipped"/"skip" count as one word."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.isalpha():
        for suffix in SUFFIXES:
            if suffix == "es" and word.endswith("es") and not word[:-2].endswith(ES_STEMS):
                continue  # "changes" -> "change" (by "s"), "passes" -> "pass"
            if suffix == "s" and word.endswith("ss"):
                continue
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                    word = word[:-1]  # skipp(ed) -> skip; "still", "pass" stay
                break
    return word


def content_tokens(text: str) -> set[str]:
    """Content words (Latin, lowercased, no stop words) and CJK character pairs."""
    low = text.lower()
    tokens = {stem(w.strip("'-")) for w in LATIN_RE.findall(low)}
    tokens = {t for t in tokens if t and t not in STOPWORDS}
    for run in CJK_RUN_RE.findall(low):
        if len(run) == 1:
            tokens.add(run)
        tokens.update(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


class Haystack:
    """A text to look items up in, with its lookup forms built on first use.
    ``parts``: the passages a request must lie within (the kept tail's
    messages, one by one); by default the whole text is one."""

    def __init__(self, text: str, parts: Sequence[str] | None = None) -> None:
        self.text = text
        self.parts = [text] if parts is None else list(parts)

    @cached_property
    def passages(self) -> Passages:
        return Passages(self.parts)

    @cached_property
    def lower(self) -> str:
        return self.text.lower()

    @cached_property
    def bounded_index(self) -> BoundedIndex:  # where a path stands on its own in :attr:`lower`
        return BoundedIndex(self.lower)

    @cached_property
    def flat(self) -> str:  # commands: no quotes, one space, lower case
        return command_key(self.text)

    @cached_property
    def flat_index(self) -> TokenIndex:  # where a command's words stand in :attr:`flat`
        return TokenIndex(self.flat)

    @cached_property
    def lower_collapsed(self) -> str:  # errors: :attr:`lower` with one space, once per text
        return collapse(self.lower)

    @cached_property
    def flat_lower(self) -> str:  # requests: one space, lower case
        return collapse(self.text).lower()

    def word_starts(self, word: str) -> list[int]:
        """Where ``word`` stands as a whole word in :attr:`flat` (ascending)."""
        cache = self.__dict__.setdefault("_word_starts", {})
        got: list[int] | None = cache.get(word)
        if got is None:
            flat = self.flat
            if len(flat) >= INDEX_MIN_CHARS and _WORD_RUN_RE.fullmatch(word):
                # a word of word characters only stands whole exactly where a
                # maximal run of them equals it (``\w`` is ``isalnum`` or ``_``)
                got = cache[word] = self.word_runs.get(word, [])
                return got
            got = []
            at = flat.find(word)
            while at >= 0:
                stop = at + len(word)
                before = flat[at - 1] if at else " "
                after = flat[stop] if stop < len(flat) else " "
                if not (before.isalnum() or before == "_") and not (
                    after.isalnum() or after == "_"
                ):
                    got.append(at)
                at = flat.find(word, at + 1)
            cache[word] = got
        return got

    @cached_property
    def word_runs(self) -> dict[str, list[int]]:
        """Each maximal run of word characters of :attr:`flat` → its offsets."""
        where: dict[str, list[int]] = {}
        for m in _WORD_RUN_RE.finditer(self.flat):
            where.setdefault(m.group(), []).append(m.start())
        return where

    @cached_property
    def lines(self) -> list[tuple[str, str]]:
        """Each line, and its lower-case form."""
        return [(line, line.lower()) for line in self.text.split("\n")]

    @cached_property
    def line_starts(self) -> list[int]:
        """The offset of each line's lower-case form in :attr:`lines_lower`."""
        out, at = [], 0
        for _, low in self.lines:
            out.append(at)
            at += len(low) + 1
        return out

    @cached_property
    def lines_lower(self) -> str:
        return "\n".join(low for _, low in self.lines)

    def lines_with(self, probe: str) -> list[int]:
        """The lines whose lower-case form holds ``probe`` (one line's text),
        ascending; kept per probe (items share their longest word)."""
        cache: dict[str, list[int]] = self.__dict__.setdefault("_lines_with", {})
        found = cache.get(probe)
        if found is None:
            starts = self.line_starts
            found = cache[probe] = sorted(
                {bisect_right(starts, at) - 1 for at in self.lower_index.find_all(probe)}
            )
        return found

    @cached_property
    def lower_index(self) -> TokenIndex:
        return TokenIndex(self.lines_lower)

    def line_haystack(self, n: int) -> Haystack:
        """Line ``n`` as a haystack of its own, kept: every item that line
        mentions looks it up again."""
        cache: dict[int, Haystack] = self.__dict__.setdefault("_line_haystacks", {})
        got = cache.get(n)
        if got is None:
            got = cache[n] = Haystack(self.lines[n][0])
        return got

    @cached_property
    def line_marks(self) -> tuple[list[bool], list[int], list[int]]:
        """Per line: is it a closing tag, the last heading line before it, the
        last closing tag before it (-1: none)."""
        closing: list[bool] = []
        heading_before: list[int] = []
        closing_before: list[int] = []
        last_heading = last_closing = -1
        for n, (line, _) in enumerate(self.lines):
            heading_before.append(last_heading)
            closing_before.append(last_closing)
            shut = _CLOSING_TAG_RE.match(line) is not None
            closing.append(shut)
            if shut:
                last_closing = n
            elif _heading(line):
                last_heading = n
        return closing, heading_before, closing_before

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(WORD_RE.findall(self.lower))

    @cached_property
    def numbers(self) -> frozenset[str]:
        return frozenset(key for key, _ in numbers_in(self.lower))

    @cached_property
    def tokens(self) -> frozenset[str]:
        return frozenset(content_tokens(self.text))

    def __bool__(self) -> bool:
        return bool(self.text)


def _bounded(hay: str, needle: str, before: str, after: str) -> bool:
    """``needle`` in ``hay`` with none of the characters ``before`` (or a
    letter, digit or ``_``) right before it and none of ``after`` right after."""
    if not needle:
        return False
    start = hay.find(needle)
    while start >= 0:
        end = start + len(needle)
        prev = hay[start - 1] if start else " "
        nxt = hay[end] if end < len(hay) else " "
        if not (prev.isalnum() or prev == "_" or prev in before) and not (
            nxt.isalnum() or nxt == "_" or nxt in after
        ):
            return True
        start = hay.find(needle, start + 1)
    return False


def _bounded_in(hay: Haystack, needle: str, before: str, after: str) -> bool:
    """:func:`_bounded` in ``hay.lower``, from its index when it answers."""
    if needle and BoundedIndex.handles(needle, before, after):
        index = hay.bounded_index
        got = index.bounded(needle, before)
        if got is not None:
            return got
        return _bounded(index.odd, needle, before, after)
    return _bounded(hay.lower, needle, before, after)


def match_path(item: Item, hay: Haystack, unique_basename: bool) -> bool:
    key = item.key
    if _bounded_in(hay, key, ".-", "-"):
        return True
    if unique_basename and "/" in key:
        base = key.rsplit("/", 1)[1]
        return _bounded_in(hay, base, ".-/", "-")
    return False


COMMAND_WINDOW = 3  # the words of a command must lie within 3x its length (at least 80)


@lru_cache(maxsize=4096)
def _command_words(key: str) -> tuple[str, ...]:
    """A command's words but the flags (looked up once per command, not once
    per line that may mention it)."""
    return tuple(w for w in key.split() if not w.startswith("-"))


def match_command(item: Item, hay: Haystack) -> bool:
    """Verbatim (quotes and spacing aside), or every word but the flags, in
    order and close together ("ran pytest on tests/test_parse.py")."""
    if not item.key.strip():
        return False
    flat = hay.flat
    words = _command_words(item.key)
    if len(flat) < INDEX_MIN_CHARS:  # a line: what the index would answer, directly
        if item.key in flat:
            return True
        if not words or not all(w in flat for w in words):
            return False
    else:
        index = hay.flat_index
        if index.contains(item.key):
            return True
        if not words or not all(index.contains(w) for w in words):
            return False
    window = max(80, COMMAND_WINDOW * len(item.key))
    first = len(words[0])
    rest = [(word, hay.word_starts(word)) for word in words[1:]]
    for at in _command_starts(hay.word_starts(words[0]), first, rest, window):
        pos = at + first
        end = pos + window
        for word, starts in rest:
            n = bisect_left(starts, pos)
            if n == len(starts) or starts[n] + len(word) > end:
                break
            pos = starts[n] + len(word)
        else:
            return True
    return False


def _command_starts(
    starts: list[int], first: int, rest: list[tuple[str, list[int]]], window: int
) -> list[int]:
    """The starts of a command's first word worth following: those with an
    occurrence of its rarest other word inside their reach (after the first
    word, ending within ``window`` characters of it). A start without one
    cannot chain every word, so the answer is the same as following all."""
    if not rest:
        return starts
    word, rare = min(rest, key=lambda r: len(r[1]))
    if len(rare) * 2 >= len(starts):
        return starts
    out: list[int] = []
    done = 0  # starts before this index are taken or ruled out
    for p in rare:
        lo = max(done, bisect_left(starts, p + len(word) - first - window))
        hi = bisect_right(starts, p - first)
        if hi > lo:
            out.extend(starts[lo:hi])
            done = hi
    return out


def match_error(item: Item, hay: Haystack) -> bool:
    kind, value = item.extra if len(item.extra) == 2 else ("", "")
    if kind == "exit":
        pattern = rf"\bexit\w*\b[^\n\d]{{0,24}}(?<![\d.]){re.escape(value)}(?![\d])"
        return re.search(pattern, hay.lower) is not None
    if kind == "test":
        test_id = value.lower()
        if test_id in hay.lower:
            return True
        name = re.split(r"::|\.|/", test_id)[-1].split("[")[0]
        return bool(name) and name in hay.words
    etype = kind.rsplit(".", 1)[-1].lower()
    if etype not in hay.words:
        return False
    message = collapse(value).lower()
    if not message or message in hay.lower_collapsed:
        return True
    # A named exception type is kept with any word of its message; a bare
    # "error:" line needs half of its message's words.
    needed = SENTENCE_OVERLAP if etype in GENERIC_ERRORS else 1e-9
    tokens = content_tokens(message)
    return not tokens or overlap(tokens, hay) >= needed


def match_identifier(item: Item, hay: Haystack) -> bool:
    return item.key in hay.words


def match_url(item: Item, hay: Haystack) -> bool:
    """With or without the scheme and ``www.``, and a trailing slash."""
    bare = item.key.split("://", 1)[-1].removeprefix("www.")
    return bare in hay.lower


def match_number(item: Item, hay: Haystack) -> bool:
    if item.key in hay.numbers:
        return True
    if item.key.endswith(("passed", "failed")):
        value = item.key[:-6]  # "passed" and "failed" have six letters
        stem = "pass" if item.key.endswith("passed") else "fail"
        pattern = rf"(?<![\d.]){re.escape(value)}(?![\d.]\d)[^\n\d]{{0,20}}\b(?:{stem}|tests?\b)"
        return re.search(pattern, hay.lower) is not None
    return False


def overlap(tokens: set[str], hay: Haystack) -> float:
    if not tokens:
        return 0.0
    return len(tokens & hay.tokens) / len(tokens)


def _flat(text: str) -> str:
    return collapse(text).lower()


def match_verbatim(item: Item, hay: Haystack) -> bool:
    """The critical categories: one contiguous passage that carries the item,
    verbatim, with small edits or as a faithful paraphrase
    (:mod:`kimi_compact_tui.retention.passage`)."""
    passages = hay.passages
    got = passages.answers.get(item.text)
    if got is None:
        got = passages.answers[item.text] = passage_kept(Request.cached(item.text), passages)
    return got


MATCHERS = {
    kinds.COMMANDS: match_command,
    kinds.ERRORS: match_error,
    kinds.IDENTIFIERS: match_identifier,
    kinds.URLS: match_url,
    kinds.NUMBERS: match_number,
    kinds.USER_REQUESTS: match_verbatim,
    kinds.INSTRUCTIONS: match_verbatim,
    kinds.OPEN_TASKS: match_verbatim,
}


def find(item: Item, hay: Haystack, unique_basenames: frozenset[str] = frozenset()) -> bool:
    """True when ``item`` appears in ``hay``."""
    if not hay:
        return False
    if item.category in (kinds.FILE_PATHS, kinds.EDITED_FILES):
        base = item.key.rsplit("/", 1)[-1]
        return match_path(item, hay, base in unique_basenames)
    return MATCHERS[item.category](item, hay)


# ----------------------------------------------------------------------------- statuses stated

#: What a summary can state about an item's status.
DONE, CANCELLED, OPEN_STATE = "completed", "cancelled", "open"
PASSED, FAILED = "passed", "failed"
WRITTEN, REJECTED = "written", "rejected"
#: The statuses of a write the agent's record says did not happen.
REJECTED_STATUSES = frozenset({"rejected", "failed", "not written", "denied", "error"})

# Each (state, pattern), tried in this order; what a pattern matched is blanked
# before the next one looks, so "not completed" / 未完成 is open, never done.
_STATE_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        OPEN_STATE,
        r"\bnot\s+(?:yet\s+)?(?:been\s+)?(?:done|complete[d]?|finished|started|run)\b"
        r"|\b(?:incomplete|unfinished|except|apart\s+from|other\s+than|but\s+not)\b"
        r"|未完成|尚未完成|没有?完成|未做完|没做完|未开始|除了",
    ),
    (
        FAILED,
        r"\b(?:did\s*n[o']?t|does\s*n[o']?t|not|never)\s+pass(?:ed)?\b|未通过|没有?通过|不通过",
    ),
    (
        PASSED,
        r"\b(?:no|without|zero|0)\s+(?:errors?|failures?|failed|failing)\b"
        r"|没有错误|无错误|没有?报错|没有失败",
    ),
    (
        REJECTED,
        r"\b(?:not|never|wasn't|weren't|isn't|was\s+not)\s+(?:been\s+)?"
        r"(?:written|saved|created|applied|edited|changed|modified)\b"
        r"|\b(?:rejected|denied|refused|declined)\b|\bwrite\s+failed\b"
        r"|未写入|没有?写入|写入失败|未保存|被拒绝|拒绝|未修改|未创建",
    ),
    (
        OPEN_STATE,
        r"\b(?:pending|in[ _-]progress|to[ -]?do|open|remaining|outstanding|next|still|"
        r"yet\s+to|ongoing|wip|not\s+started)\b|\[ \]|待办|待完成|待处理|进行中|正在|下一步|剩余|尚未|还没",
    ),
    (
        DONE,
        r"\b(?:done|complete[d]?|finished|accomplished)\b|\[x\]|✅|✔|☑|已完成|完成|做完|完毕|搞定|已结束",
    ),
    (
        CANCELLED,
        r"\b(?:cancell?ed|dropped|abandoned|skipped|descoped)\b|已取消|取消|放弃|作废|跳过",
    ),
    (
        FAILED,
        r"\b(?:fail(?:ed|s|ing|ure|ures)?|errors?|errored|broken|broke|crash(?:ed|es)?)\b"
        r"|\bexit(?:ed)?(?:\s+(?:with\s+)?(?:code|status))?[\s:=]*[1-9]\d*\b"
        r"|失败|报错|出错|错误|崩溃",
    ),
    (
        PASSED,
        r"\b(?:pass(?:ed|es|ing)?|succeed(?:ed|s)?|success(?:ful(?:ly)?)?|green)\b"
        r"|\bexit(?:ed)?(?:\s+(?:with\s+)?(?:code|status))?[\s:=]*0\b|✅|✔|通过|成功",
    ),
    (
        WRITTEN,
        r"\b(?:written|wrote|writes|created|edited|updated|modified|changed|saved|added|"
        r"patched|rewritten|rewrote)\b|\bedited\s+files\b|已写入|写入|已修改|修改|已创建|创建|"
        r"已更新|更新|已编辑|编辑|新增",
    ),
)
_STATE_RES = tuple((state, re.compile(p, re.I)) for state, p in _STATE_PATTERNS)
#: Per kind of check: (the states that agree with the session, those that contradict it).
_TASK = (frozenset({OPEN_STATE}), (DONE, CANCELLED))
_RUN = (frozenset({FAILED}), (PASSED,))
_WRITE = (frozenset({REJECTED}), (WRITTEN,))
# Clause ends inside a line: a sentence mark followed by a space, CJK marks, " - ".
_CLAUSE_END_RE = re.compile(r"[.;!?](?=\s|$)|[。；！？]|\s[-–—]\s")
_HEADING_RE = re.compile(
    r"^\s*(?:#{1,6}\s+.+|<[A-Za-z][\w-]*>|\*\*[^*]+\*\*:?|[^\s:：][^:：]{0,60}[:：])\s*$"
)
_CLOSING_TAG_RE = re.compile(r"^\s*</[A-Za-z][\w-]*>\s*$")


@dataclass(frozen=True)
class Statement:
    """What a summary says of an item's status: ``stated`` (``completed``,
    ``cancelled``, ``passed``, ``written``) and ``statement``, the summary's own
    words (the line, after the heading it sits under when that is what says it)."""

    stated: str
    statement: str


def states(text: str) -> dict[str, str]:
    """The states ``text`` states (state → the words that state it)."""
    found: dict[str, str] = {}
    text = text.replace("_", " ")  # <completed_tasks>, in_progress
    for state, pattern in _STATE_RES:
        if not pattern.search(text):
            continue

        def blank(m: re.Match[str], state: str = state) -> str:
            found.setdefault(state, m.group(0))
            return " " * len(m.group(0))

        text = pattern.sub(blank, text)
    return found


def _check(item: Item) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """What to check an item's stated status against, or None (nothing to check)."""
    if item.category == kinds.OPEN_TASKS and item.status in OPEN_STATUSES:
        return _TASK
    if item.category == kinds.COMMANDS and failed_status(item.status):
        return _RUN
    if item.category in (kinds.EDITED_FILES, kinds.FILE_PATHS) and (
        (item.status or "").lower() in REJECTED_STATUSES
    ):
        return _WRITE
    return None


def failed_status(status: str | None) -> bool:
    """A command status that says it failed (a non-zero exit, ``failed``, ``N failed``)."""
    if not status:
        return False
    low = status.lower()
    if low.startswith("exit "):
        return low != "exit 0"
    return "fail" in low or "error" in low


def _mentions(item: Item, line: str, line_hay: Haystack | None = None) -> int:
    """Where ``line`` mentions ``item`` (a character offset), or -1. Looser than
    keeping it: a task's content words in any order in one clause count, since
    a wrong status said of it is what is looked for. ``line_hay``: the line's
    own haystack, when one is kept for it."""
    if item.category == kinds.COMMANDS:
        first = item.key.split(maxsplit=1)
        if not first or not match_command(item, line_hay or Haystack(line)):
            return -1
        return max(0, line.lower().find(first[0]))
    low = line.lower()
    if item.category in (kinds.EDITED_FILES, kinds.FILE_PATHS):
        base = item.key.rsplit("/", 1)[-1]
        if not _bounded(low, item.key, ".-", "-") and not _bounded(low, base, ".-/", "-"):
            return -1
        return max(0, low.find(base))
    flat = _flat(item.text)
    at = low.find(flat)
    if at >= 0:
        return at
    tokens = content_tokens(item.text)
    if len(tokens) < 2:
        return -1
    for start, end in _clauses(line):
        if tokens <= content_tokens(line[start:end]):
            return start
    return -1


def _heading(line: str) -> bool:
    return _HEADING_RE.match(line) is not None and len(line.strip()) <= 80


def _probe(item: Item) -> str:
    """A piece of text every line that mentions ``item`` holds (lower case)."""
    if item.category == kinds.COMMANDS:
        return max(item.key.split(), key=len, default="")
    if item.category in (kinds.EDITED_FILES, kinds.FILE_PATHS):
        return item.key.rsplit("/", 1)[-1]
    words = sorted(content_tokens(item.text), key=len, reverse=True)
    return words[0] if words and not CJK_RUN_RE.search(words[0]) else ""


def _clauses(line: str) -> list[tuple[int, int]]:
    out, start = [], 0
    for m in _CLAUSE_END_RE.finditer(line):
        out.append((start, m.end()))
        start = m.end()
    out.append((start, len(line)))
    return [(s, e) for s, e in out if line[s:e].strip()]


def _without(text: str, item: Item) -> str:
    """``text`` without the item's own words (a task called "Fix failing test"
    states nothing about itself)."""
    for piece in {item.text, item.key}:
        if piece:
            text = re.sub(re.escape(piece), " ", text, flags=re.I)
    return text


def _reworded(item: Item, line: str) -> int:
    """Where ``line`` mentions ``item`` by the rule that keeps it (one passage:
    stems, typos, a rewording: "Ran the full test suite" for "Run the full test
    suite"), or -1."""
    low = line.lower()
    if not any(t[:3] in low for t in content_tokens(item.text)):
        return -1  # no term of it: cheap, before the passage rule
    if not passage_kept(Request.cached(item.text), Passages([line])):
        return -1
    aligned = fuzz.partial_ratio_alignment(_flat(item.text), low)
    return aligned.dest_start if aligned is not None else 0


AGREES = Statement("", "")  # a mention states the session's status
_AGREES = AGREES


def _read(
    item: Item,
    hay: Haystack,
    check: tuple[frozenset[str], tuple[str, ...]],
    probe: str,
    mentions: Callable[[Item, str], int],
) -> Statement | None:
    """The first wrong status a mention states, :data:`AGREES` when a mention
    states the session's, or None (no mention states a status). The lines
    holding ``probe`` are looked up in the summary's index; a probe that cannot
    be looked up, or another way of finding a mention, reads line by line."""
    agree, contradict = check
    if mentions is _mentions and probe and "\n" not in probe:
        return _read_indexed(item, hay, agree, contradict, probe)
    return _misstatement_scan(item, hay, agree, contradict, probe, mentions)


def _read_indexed(
    item: Item,
    hay: Haystack,
    agree: frozenset[str],
    contradict: tuple[str, ...],
    probe: str,
) -> Statement | None:
    """:func:`_read` over the lines the index says hold ``probe``."""
    lines = hay.lines
    closing, heading_before, closing_before = hay.line_marks
    mentioned: dict[int, bool] = {}
    wrong: Statement | None = None
    # a command: a line whose flat form holds neither the command nor every
    # word of it does not mention it (what match_command answers first)
    key = item.key if item.category == kinds.COMMANDS else ""
    words = _command_words(key) if key else ()
    for j in hay.lines_with(probe):
        if closing[j]:
            continue
        line_hay = hay.line_haystack(j)
        if key:
            flat = line_hay.flat
            if key not in flat and not (words and all(w in flat for w in words)):
                mentioned[j] = False
                continue
        line = lines[j][0]
        at = _mentions(item, line, line_hay)
        mentioned[j] = at >= 0
        if at < 0:
            continue
        # the heading the line sits under: the last heading line before it
        # (after the last closing tag) that does not mention the item itself
        h = heading_before[j]
        while h > closing_before[j] and mentioned.get(h, False):
            h = heading_before[h]
        heading = lines[h][0].strip() if h > closing_before[j] else ""
        found = _stated(item, line, at, heading, agree, contradict)
        if found is AGREES:
            return AGREES
        wrong = wrong or found
    return wrong


def _stated(
    item: Item,
    line: str,
    at: int,
    heading: str,
    agree: frozenset[str],
    contradict: tuple[str, ...],
) -> Statement | None:
    """What a line that mentions ``item`` at ``at`` states of it: :data:`_AGREES`,
    a contradicting :class:`Statement`, or None (no status)."""
    end = at + len(item.text)
    clause = " ".join(line[s:e] for s, e in _clauses(line) if s <= at < e or (at <= s < end))
    for level, statement in (
        (clause, line.strip()),
        (line, line.strip()),
        (heading, f"{heading}\n{line.strip()}"),
    ):
        found = states(_without(level, item)) if level else {}
        if not any(s in found for s in (*agree, *contradict)):
            continue
        if any(s in found for s in agree):
            return _AGREES  # this mention says it rightly
        stated = next(s for s in contradict if s in found)
        return Statement(stated, statement)
    return None


def _misstatement_scan(
    item: Item,
    hay: Haystack,
    agree: frozenset[str],
    contradict: tuple[str, ...],
    probe: str,
    mentions: Callable[[Item, str], int],
) -> Statement | None:
    """:func:`_read` line by line (a probe that cannot be looked up, or a
    mention found by another rule)."""
    wrong: Statement | None = None
    heading = ""
    for line, low in hay.lines:
        if _CLOSING_TAG_RE.match(line):
            heading = ""
            continue
        at = mentions(item, line) if probe in low else -1
        if at < 0:
            if _heading(line):
                heading = line.strip()
            continue
        found = _stated(item, line, at, heading, agree, contradict)
        if found is AGREES:
            return AGREES
        wrong = wrong or found
    return wrong


def misstatement(item: Item, hay: Haystack) -> Statement | None:
    """The wrong status ``hay`` states of ``item``, or None. Each line that
    mentions the item is read at three levels, the first that states a status
    deciding: the clause around the mention, the whole line, then the heading
    the line sits under (``## Completed``, ``<completed_tasks>``, ``Done:``).
    Misstated only when some mention states a contradicting status and none
    states the session's (precision first: a contradictory summary that also
    says it right is not called wrong). A request or task the text keeps
    reworded (the passage rule) is mentioned where a line keeps it."""
    check = _check(item)
    if check is None or not hay:
        return None
    wrong = _read(item, hay, check, _probe(item), _mentions)
    if wrong is AGREES:
        return None
    if MATCHERS.get(item.category) is match_verbatim and match_verbatim(item, hay):
        again = _read(item, hay, check, "", _reworded)
        if again is AGREES:
            return None
        wrong = wrong or again
    return wrong

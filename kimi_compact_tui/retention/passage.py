"""Is a request (an instruction, an open task) kept in a text: one contiguous
passage that carries it, not its words scattered about.

A request is **kept** by a text when one of these holds, each inside one
passage (one message of the kept tail, never across two):

1. **verbatim**: its normalised form (lower case, NFKC, punctuation and spacing
   aside) is in the text's normalised form;
2. **aligned with small edits**: rapidfuzz's ``partial_ratio_alignment`` of the
   request against the text scores at least :data:`ALIGNED` (typos, case,
   punctuation, a word changed), and the aligned passage keeps the request's
   numbers and its negation;
3. **a faithful paraphrase**: a window of the text no longer than
   :data:`WINDOW_SCALE` times the request (:data:`MIN_WINDOW` characters at
   least) holds at least :data:`COVERAGE` of the request's content terms *in
   the request's order within each of its clauses* (clauses may swap), at least
   :data:`POINT_COVERAGE` of its last clause's terms (a cut must keep the
   point), every number of the request, and a negation wherever the request
   has one (and none right before a term the request does not negate).

Content terms: Latin words, lower-cased, lightly stemmed, without stop words
or politeness ("please", "thanks"); a word that differs by a typo (rapidfuzz
``ratio`` ≥ :data:`TYPO_RATIO`, five letters or more) or shares a five-letter
stem ("verify"/"verification") counts as the same. Numbers, paths and names
with digits, dots or slashes count only verbatim. Chinese, Japanese and Korean
are read character by character (no whitespace tokenisation), function
characters (的, 了, 是...) left out and negation characters (不, 没, 别...)
kept apart for the negation rule.
"""

from __future__ import annotations

import math
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from os.path import commonprefix
from typing import NamedTuple

from rapidfuzz import fuzz, process

from kimi_compact_tui.retention.textindex import TokenIndex

ALIGNED = 90.0  # rapidfuzz partial_ratio that keeps a request verbatim with small edits
#: A longer request (a pasted log) is kept verbatim or by its terms (rule 3):
#: aligning it character by character would cost seconds.
ALIGN_MAX_CHARS = 4000
ALIGN_MAX_TERMS = 256  # a request with more distinct terms is scanned window by window
COVERAGE = 0.7  # share of content terms (in order per clause) a paraphrase keeps
POINT_COVERAGE = 0.5  # share of the last clause's terms a paraphrase keeps
WINDOW_SCALE = 1.6  # a paraphrase's window: at most this times the request's length
MIN_WINDOW = 60  # characters
TYPO_RATIO = 80.0  # rapidfuzz ratio of two words that differ by a typo
STEM_PREFIX = 5  # letters two words share to count as one ("verify", "verification")
SHORT_TERMS = 4  # a request with this many content terms or fewer needs all of them
REWORDED_SCALE = 1.3  # one sentence holding every term, reordered: at most this long

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = "a-z0-9\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff"
TERM_RE = re.compile(rf"[{_WORD}](?:[{_WORD}_'’./-]*[{_WORD}])?|[{_CJK}]")
CLAUSE_RE = re.compile(r"[.;:!?](?=\s|$)|[,，、。；：！？\n]|\s[-–—]\s|\b(?:and|but|then)\b")
NORM_DROP_RE = re.compile(rf"[^{_WORD}{_CJK}'./_!?;。！？；-]+")
DIGIT_RE = re.compile(r"\d")
SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)|[。！？\n]")  # ";" joins clauses
NEGATIONS = frozenset(
    "not no never don't dont doesn't didn't isn't aren't wasn't weren't won't can't cannot "
    "without nor mustn't shouldn't neither avoid stop forbidden prohibited disallowed "
    "refuse".split()
)
CJK_NEGATIONS = frozenset("不没别勿未无非莫")
STOPWORDS = frozenset(
    "the and for are but you your with this that there then than from have has had was "
    "were will would can could should must always instead into onto out all any our its "
    "it's what which when where who how why also just only please let's lets make sure "
    "need want like get got been being does did doing them they their these those some "
    "such very more most much many each other a an to of in on at by is be it as or so if "
    "i me my we us do hi hello hey thanks thank ok okay pls yes sorry bother again lot lots "
    "bit really maybe thing here now so well about use using used".split()
)
CJK_STOP = frozenset(
    "的了是在我你他她它们吗呢吧啊呀着过地得和与及或也都就又还这那个请把给让帮一下来去上中"
)
SUFFIXES = ("ing", "ed", "es", "s", "ly")
ES_STEMS = ("s", "x", "z", "ch", "sh")


def normalise(text: str) -> str:
    """Lower case, NFKC, punctuation as spaces but sentence ends kept, single
    spaces, one line per line with text."""
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    lines = (" ".join(NORM_DROP_RE.sub(" ", line).split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.isalpha():
        for suffix in SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                if suffix == "s" and word.endswith("ss"):
                    continue
                if suffix == "es" and not word[:-2].endswith(ES_STEMS):
                    continue  # "changes" -> "change" (by "s"), "passes" -> "pass"
                word = word[: -len(suffix)]
                if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                    word = word[:-1]
                break
        if len(word) > 4 and word.endswith("e"):
            word = word[:-1]  # "raise", "raised", "raises": "rais"
    return word


HIRAGANA_RE = re.compile("[\u3041-\u309f]")
JA_NEGATION_RE = re.compile("ない|ません|なかった|ぬ(?![\u3041-\u309f])")


def _is_cjk(term: str) -> bool:
    return len(term) == 1 and not term.isascii() and bool(re.match(f"[{_CJK}]", term))


class Term(NamedTuple):
    key: str  # the stem (a CJK character as is)
    start: int  # offset in the normalised text
    negation: bool = False


_WORD_KEYS: dict[str, tuple[str, bool] | None] = {}


def _word_key(word: str) -> tuple[str, bool] | None:
    """A word's term (its key, and whether it is a negation), or None (a stop word)."""
    got = _WORD_KEYS.get(word, False)
    if got is not False:
        return got  # type: ignore[return-value]
    out: tuple[str, bool] | None
    bare = word.strip("'.-/")
    if bare.endswith("'s"):
        bare = bare[:-2]
    if not bare:
        out = None
    elif _is_cjk(bare):
        if bare in CJK_NEGATIONS:
            out = (bare, True)
        elif bare in CJK_STOP or HIRAGANA_RE.match(bare):
            out = None  # a function character; hiragana is Japanese grammar
        else:
            out = (bare, False)
    elif bare in NEGATIONS or bare.endswith("n't"):
        out = (bare, True)
    elif bare not in STOPWORDS and (len(bare) > 1 or bare.isdigit()):
        out = (stem(bare), False)
    else:
        out = None
    if len(_WORD_KEYS) < 200_000:
        _WORD_KEYS[word] = out
    return out


_UNSEEN: tuple[str, bool] = ("", False)  # a word not looked up yet


def terms(norm: str) -> list[Term]:
    """The content terms (and negations) of a normalised text, in order."""
    out: list[Term] = []
    append, known, new = out.append, _WORD_KEYS.get, tuple.__new__
    for m in TERM_RE.finditer(norm):
        word = m.group()
        got = known(word, _UNSEEN)
        if got is _UNSEEN:
            got = _word_key(word)
        if got is not None:
            append(new(Term, (got[0], m.start(), got[1])))
    if HIRAGANA_RE.search(norm):  # Japanese negation is inflection: 触らない, しません
        out.extend(Term(m.group(0), m.start(), True) for m in JA_NEGATION_RE.finditer(norm))
        out.sort(key=lambda t: t.start)
    return out


EXACT_RE = re.compile(r"[\d./_]")


def exact_only(key: str) -> bool:
    """Numbers, paths and names with digits, dots or slashes: verbatim only."""
    return EXACT_RE.search(key) is not None


@lru_cache(maxsize=65536)
def weight(key: str) -> float:
    """What a term weighs in coverage: a name, number or path 3, a word 1, a
    CJK character 0.5 (two characters make about one word)."""
    if exact_only(key):
        return 3.0
    return 0.5 if _is_cjk(key) else 1.0


@dataclass
class Request:
    """A request's normalised text, its content terms by clause, and its
    negations. The terms are read on first use: a request found verbatim
    needs none of them."""

    text: str
    norm: str = ""

    @classmethod
    def of(cls, text: str) -> Request:
        return cls(text, normalise(text.rstrip("…").rstrip() if text.endswith("…") else text))

    @cached_property
    def _parsed(self) -> tuple[list[list[str]], bool]:
        """The content terms by clause, and whether the request has a negation."""
        low = unicodedata.normalize("NFKC", self.text).lower().replace("’", "'")
        cuts = [m.start() for m in CLAUSE_RE.finditer(low)]
        by_clause: dict[int, list[str]] = {}
        negated = False
        # :func:`terms` read in place: its terms come in order, so a term's
        # clause (the cuts at or before its start) only moves forward
        known = _WORD_KEYS.get
        clause, last_cut = 0, len(cuts)
        for m in TERM_RE.finditer(low):
            got = known(m.group(), _UNSEEN)
            if got is _UNSEEN:
                got = _word_key(m.group())
            if got is None:
                continue
            if got[1]:
                negated = True
                continue
            start = m.start()
            while clause < last_cut and cuts[clause] <= start:
                clause += 1
            keys = by_clause.get(clause)
            if keys is None:
                by_clause[clause] = [got[0]]
            else:
                keys.append(got[0])
        if not negated and HIRAGANA_RE.search(low) and JA_NEGATION_RE.search(low):
            negated = True  # Japanese negation is inflection (what :func:`terms` adds)
        return [by_clause[n] for n in sorted(by_clause)], negated

    @property
    def clauses(self) -> list[list[str]]:
        return self._parsed[0]

    @property
    def negated(self) -> bool:
        return self._parsed[1]

    @cached_property
    def numbers(self) -> list[str]:
        return [k for c in self.clauses for k in c if DIGIT_RE.search(k)]

    @cached_property
    def ends(self) -> int:
        """Sentence ends inside the request (not the last one)."""
        return len(SENTENCE_END_RE.findall(self.norm.rstrip(".!?;。！？； \n")))

    @staticmethod
    @lru_cache(maxsize=4096)
    def cached(text: str) -> Request:
        return Request.of(text)

    @cached_property
    def keys(self) -> list[str]:
        """The distinct content terms, in order of first use."""
        return list(dict.fromkeys(k for c in self.clauses for k in c))

    @cached_property
    def weights(self) -> list[float]:
        return [weight(k) for k in self.keys]

    @cached_property
    def clause_of(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for n, clause in enumerate(self.clauses):
            for k in clause:
                out.setdefault(k, n)
        return out


class Passages:
    """A text to look requests up in: its normalised parts (one per message of
    the kept tail; the summary is one part) and their terms, indexed. Each
    distinct content term is also one character of :attr:`codes`, so that
    rapidfuzz aligns a request's terms against the text's in C."""

    def __init__(self, parts: Sequence[str]) -> None:
        self.parts = [normalise(p) for p in parts if p and p.strip()]
        self.joined = "\n".join(self.parts)
        self.bounds: list[int] = []  # the start of each part in ``joined``
        at = 0
        self.sequence: list[Term] = []
        self.part_index: list[int] = []  # the part of each term
        for n, part in enumerate(self.parts):
            self.bounds.append(at)
            found = terms(part)
            if at:
                found = [Term(t.key, t.start + at, t.negation) for t in found]
            self.sequence.extend(found)
            self.part_index.extend([n] * len(found))
            at += len(part) + 1
        ends = [m.start() for m in SENTENCE_END_RE.finditer(self.joined)]
        #: the sentence of each term (sentence ends before it)
        self.sentence = [bisect_right(ends, t.start) for t in self.sequence]
        where: dict[str, list[int]] = {}  # term -> its indices in ``sequence``
        negations: list[int] = []  # the indices of negations in ``sequence``
        code_of: dict[str, str] = {}
        codes: list[str] = []
        content: list[int] = []  # codes position -> index in ``sequence``
        part_index = self.part_index
        last_part = 0
        for n, (key, _, negation) in enumerate(self.sequence):
            if negation:
                negations.append(n)
                continue
            got = where.get(key)
            if got is None:
                where[key] = [n]
                code = code_of[key] = _code(len(code_of))
            else:
                got.append(n)
                code = code_of[key]
            if part_index[n] != last_part:
                codes.append(PART_BREAK)
                content.append(n)
                last_part = part_index[n]
            codes.append(code)
            content.append(n)
        self.where, self.negations, self.code_of = where, negations, code_of
        self.content = content
        self.codes = "".join(codes)
        #: (the request's term string, the span hidden by an earlier search) ->
        #: rapidfuzz's alignment (the same inputs, the same answer)
        self.alignments: dict[tuple[str, int, int], tuple[int, int] | None] = {}
        self._same: dict[str, list[str]] = {}
        self._masks: dict[str, int] = {}
        self._spreads: dict[tuple[str, int], int] = {}
        #: a request's text -> kept (one answer per text and haystack)
        self.answers: dict[str, bool] = {}

    def sentence_mask(self, key: str) -> int:
        """The sentences ``key`` occurs in, as the bits of an integer."""
        got = self._masks.get(key)
        if got is None:
            sentence = self.sentence
            bits = bytearray(sentence[-1] // 8 + 1)
            for i in self.where[key]:
                s = sentence[i]
                bits[s >> 3] |= 1 << (s & 7)
            got = self._masks[key] = int.from_bytes(bits, "little")
        return got

    def spread_mask(self, key: str, width: int) -> int:
        """The sentences that begin a run of ``width`` holding ``key``:
        :func:`_spread` of :meth:`sentence_mask`, kept per term and width for
        a frequent term (a small vocabulary asks for the same ones request
        after request; a rare term's is quick to make)."""
        got = self._spreads.get((key, width))
        if got is None:
            got = self.sentence_mask(key)
            if width > 1:
                got = _spread(got, width)
            if len(self.where[key]) >= SPREAD_CACHE_MIN and len(self._spreads) < SPREAD_CACHE_MAX:
                self._spreads[(key, width)] = got
        return got

    @cached_property
    def narrow(self) -> tuple[dict[str, str], str]:
        """:attr:`codes` in one byte a character: the :data:`NARROW` most
        frequent terms keep a character each (from 2), every other character
        is :data:`PART_BREAK`. A request whose terms are all among them aligns
        against it exactly as against :attr:`codes`: a character no request
        term has matches nothing either way (only equality counts), and
        :data:`ABSENT` stays itself."""
        counts = Counter(self.codes)
        counts.pop(PART_BREAK, None)
        table = {ch: chr(2 + n) for n, (ch, _) in enumerate(counts.most_common(NARROW))}
        narrow = "".join([table.get(ch, PART_BREAK) for ch in self.codes])
        return table, narrow

    @cached_property
    def index(self) -> TokenIndex:
        """Where a request's normalised form occurs in :attr:`joined`."""
        return TokenIndex(self.joined)

    @cached_property
    def vocabulary(self) -> list[str]:
        return [k for k in self.where if k.isalpha() and len(k) >= STEM_PREFIX]

    @cached_property
    def by_prefix(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for k in self.vocabulary:
            out.setdefault(k[:STEM_PREFIX], []).append(k)
        return out

    def part_span(self, pos: int) -> tuple[int, int]:
        n = bisect_right(self.bounds, pos) - 1
        start = self.bounds[n]
        return start, start + len(self.parts[n])

    def same(self, key: str) -> list[str]:
        """The text's terms that count as ``key``: itself, a word sharing its
        five-letter stem, or (when the text lacks the word) one a typo away."""
        got = self._same.get(key)
        if got is not None:
            return got
        out = [key] if key in self.where else []
        if key.isalpha() and len(key) >= STEM_PREFIX:
            for other in self.by_prefix.get(key[:STEM_PREFIX], ()):
                common = len(commonprefix([key, other]))
                if other != key and common >= 0.6 * min(len(key), len(other)):
                    out.append(other)
            if not out:
                near = process.extract(
                    key, self.vocabulary, scorer=fuzz.ratio, score_cutoff=TYPO_RATIO, limit=3
                )
                out.extend(k for k, _, _ in near)
        self._same[key] = out
        return out

    def negated_near(self, index: int) -> bool:
        """A negation among the two terms right before ``sequence[index]``, close by."""
        at = bisect_left(self.negations, index)
        for j in self.negations[max(0, at - 2) : at]:
            if index - j <= 2 and self.sequence[index].start - self.sequence[j].start < 16:
                return True
        return False

    def negation_between(self, start: int, end: int) -> bool:
        """A negation whose offset lies in ``[start, end)``."""
        seq = self.sequence
        lo, hi = 0, len(self.negations)
        while lo < hi:
            mid = (lo + hi) // 2
            if seq[self.negations[mid]].start < start:
                lo = mid + 1
            else:
                hi = mid
        return lo < len(self.negations) and seq[self.negations[lo]].start < end


PART_BREAK = "\x00"
ABSENT = "\x01"
SEARCHES = 2  # aligned term windows tried per request
FEW_HITS = 64  # with no more occurrences of its terms than this, every window is checked
#: The least rapidfuzz score of a request's term string against a window of the
#: text's worth checking: 70% of the terms in order score 70; clauses swapped, less.
ALIGN_CUTOFF = 45.0


def _code(n: int) -> str:
    """The ``n``-th term's character in :attr:`Passages.codes` (above
    :data:`ABSENT`, below the surrogates while there are fewer than 55,294
    terms). Only equality counts in an alignment; small code points keep the
    string narrow, which rapidfuzz compares faster."""
    n += 2
    return chr(n) if n < 0xD800 else chr(n + 0x800)


NARROW = 254  # the text's most frequent terms that get a character of their own in ``narrow``
NARROW_MIN = 4096  # term characters: a shorter text is aligned as it is


def _lis(values: list[int]) -> list[int]:
    """One longest strictly increasing subsequence of ``values``."""
    tails: list[int] = []  # positions in values of the smallest tail of each length
    tail_values: list[int] = []
    back: list[int] = [-1] * len(values)
    for n, v in enumerate(values):
        i = bisect_left(tail_values, v)
        if i:
            back[n] = tails[i - 1]
        if i == len(tails):
            tails.append(n)
            tail_values.append(v)
        else:
            tails[i] = n
            tail_values[i] = v
    out: list[int] = []
    at = tails[-1] if tails else -1
    while at >= 0:
        out.append(values[at])
        at = back[at]
    return out[::-1]


def kept(request: Request, hay: Passages) -> bool:
    """True when ``hay`` keeps ``request`` (see the module)."""
    if not request.norm or not hay.parts:
        return False
    for at in hay.index.find_all(request.norm):
        if not _negated_before(hay.joined, at) or request.negated:
            return True
    keys = request.keys
    if not keys:
        return False
    weights = request.weights
    total = sum(weights)
    need = total - 1e-9 if len(keys) <= SHORT_TERMS else COVERAGE * total
    # the text's terms that stand for each request term, how often they occur,
    # and the request as a string of the text's term characters
    same, where, code_of = hay.same, hay.where, hay.code_of
    term_of: dict[str, int] = {}
    present = 0.0
    occurrences = 0
    chars: list[str] = []
    for n, key in enumerate(keys):
        found = same(key)
        if not found:
            chars.append(ABSENT)
            continue
        present += weights[n]
        chars.append(code_of[found[0]])
        for other in found:
            term_of.setdefault(other, n)
            occurrences += len(where[other])
    if present < need or not _may_reach(request, hay, term_of, weights, need):
        return False
    span = max(MIN_WINDOW, int(WINDOW_SCALE * len(request.norm)))
    aligned: list[tuple[int, int]] = []
    if occurrences <= FEW_HITS or len(keys) > ALIGN_MAX_TERMS:
        every = sorted((i, n) for other, n in term_of.items() for i in where[other])
        return _hits_keep(request, hay, every, weights, need, span, aligned)
    # Where the request's terms lie most densely and in order: rapidfuzz aligns
    # the request's term string against the text's (C), and the best regions are
    # then checked term by term.
    wanted = "".join(chars)
    hidden = (0, 0)  # the span an earlier search found (hidden from the next)
    for _ in range(SEARCHES):
        best = _align(hay, wanted, hidden)
        if best is None:
            return False
        lo = max(0, best[0] - len(keys))
        hi = min(len(hay.codes), best[1] + len(keys))
        seq = hay.sequence
        hits = [(i, n) for i in hay.content[lo:hi] if (n := term_of.get(seq[i].key, -1)) >= 0]
        if _hits_keep(request, hay, hits, weights, need, span, aligned):
            return True
        hidden = best
    return False


def _align(hay: Passages, wanted: str, hidden: tuple[int, int]) -> tuple[int, int] | None:
    """rapidfuzz's best alignment of ``wanted`` against the text's term string
    with ``hidden`` replaced by :data:`ABSENT`: (start, end), or None below
    :data:`ALIGN_CUTOFF`. Answered once per term string and hidden span; a long
    text is read in its narrow form when every term of ``wanted`` has a
    character there (the same alignment: only equality counts)."""
    key = (wanted, *hidden)
    if key in hay.alignments:
        return hay.alignments[key]
    codes = hay.codes
    if len(codes) >= NARROW_MIN:
        table, narrow = hay.narrow
        mapped = [table.get(ch, "") if ch != ABSENT else ABSENT for ch in wanted]
        if all(mapped):
            wanted, codes = "".join(mapped), narrow
    start, end = hidden
    if end > start:
        codes = codes[:start] + ABSENT * (end - start) + codes[end:]
    best = fuzz.partial_ratio_alignment(wanted, codes, score_cutoff=ALIGN_CUTOFF)
    got = None if best is None else (best.dest_start, best.dest_end)
    hay.alignments[key] = got
    return got


MASK_MAX_ENDS = 32  # a request of more sentences is not pre-checked
SPREAD_CACHE_MIN = 16  # occurrences of a term whose spread masks are kept
SPREAD_CACHE_MAX = 8192  # spread masks kept per text (a sentence a bit each)


def _may_reach(
    request: Request,
    hay: Passages,
    term_of: dict[str, int],
    weights: list[float],
    need: float,
) -> bool:
    """Can any window weigh ``need``? A window of :func:`_hits_keep` lies in at
    most ``request.ends + 1`` consecutive sentences, so the weight of the
    request's terms in the best such run of sentences bounds what any window
    holds. False only when no run reaches ``need``: then no window is judged,
    and alignment would find nothing either. Counted for every sentence at
    once, bit-sliced over integers (one bit per sentence), the terms' masks
    added by carry-save adders."""
    ends = request.ends
    if ends > MASK_MAX_ENDS:
        return True
    # the spread of an OR is the OR of the spreads: each term's is kept
    width = ends + 1
    spread = hay.spread_mask
    masks = [0] * len(weights)
    for other, n in term_of.items():
        masks[n] |= spread(other, width)
    # each sentence's weight (in halves), bit-sliced: ``columns[b]`` holds the
    # masks to add at bit b, reduced by carry-save adders (three masks at bit
    # b become their sum at b and their carry at b + 1) until one is left
    by_halves: dict[int, list[int]] = {}  # a weight (in halves) -> its terms' masks
    for n, mask in enumerate(masks):
        if mask:  # a term the text lacks adds nothing
            got = by_halves.get(halves := int(2 * weights[n]))
            if got is None:
                by_halves[halves] = [mask]
            else:
                got.append(mask)
    columns: list[list[int]] = []
    for halves, group in by_halves.items():
        b = 0
        while halves:
            if halves & 1:
                while b >= len(columns):
                    columns.append([])
                columns[b].extend(group)
            halves >>= 1
            b += 1
    planes: list[int] = []  # bit b of each sentence's weight
    b = 0
    while b < len(columns):
        column = columns[b]
        while len(column) > 1:
            x, y = column.pop(), column.pop()
            if column:
                z = column.pop()
                half = x ^ y
                column.append(half ^ z)
                carry = (x & y) | (half & z)
            else:
                column.append(x ^ y)
                carry = x & y
            if carry:
                if b + 1 == len(columns):
                    columns.append([])
                columns[b + 1].append(carry)
        planes.append(column[0] if column else 0)
        b += 1
    target = math.ceil(2 * need)  # weights are whole halves: have >= need
    if target <= 0:
        return True
    if target >> len(planes):
        return False
    anywhere = 0  # the sentences with any weight: those with a bit in some plane
    for plane in planes:
        anywhere |= plane
    above, equal = 0, anywhere
    for b in range(len(planes) - 1, -1, -1):
        if (target >> b) & 1:
            equal &= planes[b]
        else:
            above |= equal & planes[b]
            equal &= ~planes[b]
    return (above | equal) != 0


def _spread(mask: int, width: int) -> int:
    """Bit ``s`` set where ``mask`` has a bit in ``s .. s + width - 1``: the OR
    of ``mask >> j`` for ``j < width``, by doubling."""
    k = 1
    while 2 * k <= width:
        mask |= mask >> k
        k *= 2
    if k < width:
        mask |= mask >> (width - k)
    return mask


def _hits_keep(
    request: Request,
    hay: Passages,
    hits: list[tuple[int, int]],
    weights: list[float],
    need: float,
    span: int,
    aligned: list[tuple[int, int]],
) -> bool:
    """Does a window of at most ``span`` characters of ``hits`` ((index in the
    text's terms, index of the request's term), in text order) keep the
    request (rules 2 and 3)?"""
    seq = hay.sequence
    counts: dict[int, int] = {}
    have = 0.0
    left = 0
    part_index = hay.part_index
    sentence = hay.sentence
    ends = request.ends  # sentence ends a window may hold: as many as the request has
    for right, (i, n) in enumerate(hits):
        if not counts.get(n):
            have += weights[n]
        counts[n] = counts.get(n, 0) + 1
        while left < right and (
            seq[i].start - seq[hits[left][0]].start > span
            or part_index[hits[left][0]] != part_index[i]
            or sentence[i] - sentence[hits[left][0]] > ends
        ):
            ln = hits[left][1]
            counts[ln] -= 1
            if not counts[ln]:
                have -= weights[ln]
            left += 1
        if have < need:
            continue
        nxt = hits[right + 1] if right + 1 < len(hits) else None
        if nxt is not None and (
            part_index[nxt[0]] == part_index[i]
            and seq[nxt[0]].start - seq[hits[left][0]].start <= span
            and sentence[nxt[0]] - sentence[hits[left][0]] <= ends
        ):
            continue  # the window grows on: judge it at its largest
        if _window_keeps(request, hay, hits[left : right + 1], weights, need, aligned):
            return True
    return False


def _window_keeps(
    request: Request,
    hay: Passages,
    window: list[tuple[int, int]],
    weights: list[float],
    need: float,
    aligned: list[tuple[int, int]],
) -> bool:
    seq = hay.sequence
    first, last = window[0][0], window[-1][0]
    start = seq[first].start
    end = seq[last].start + len(seq[last].key)
    lo, hi = hay.part_span(start)
    # 3 first (pure Python, cheap); 2 only when it does not keep: either keeps,
    # so the answer is the same as trying 2 first, and most windows that keep
    # a request are not aligned character by character (:func:`_paraphrase`)
    if _paraphrase(request, hay, window, weights, need, start, end, lo, hi):
        return True
    # 2. aligned with small edits
    r_lo, r_hi = max(lo, start - len(request.norm)), min(hi, end + len(request.norm))
    if len(request.norm) <= ALIGN_MAX_CHARS and not any(
        a <= start and end <= b for a, b in aligned
    ):
        aligned.append((r_lo, r_hi))
        region = hay.joined[r_lo:r_hi]
        found = fuzz.partial_ratio_alignment(request.norm, region, score_cutoff=ALIGNED)
        if found is not None:
            exact = region[found.dest_start : found.dest_end]
            if (
                _numbers_kept(request, exact)
                and _negation_kept(request, exact)
                and (request.negated or not _negated_before(region, found.dest_start))
            ):
                return True
    return False


def _paraphrase(
    request: Request,
    hay: Passages,
    window: list[tuple[int, int]],
    weights: list[float],
    need: float,
    start: int,
    end: int,
    lo: int,
    hi: int,
) -> bool:
    """Rule 3 on a window (``start``, ``end``: its offsets; ``lo``, ``hi``: its
    part's): its numbers, its negation, then a faithful paraphrase or one
    sentence reworded. It reads nothing rule 2 leaves behind."""
    keys = request.keys
    got = {keys[n] for _, n in window}
    if not all(number in got for number in request.numbers):
        return False
    if request.negated:
        if not hay.negation_between(max(lo, start - 24), min(hi, end + 24)):
            return False
    elif any(hay.negated_near(i) for i, _ in window):
        return False  # "do not run X" is not "run X"
    # 3. a faithful paraphrase: per clause of the request, its terms in order
    clause_of = request.clause_of
    by_clause: dict[int, list[int]] = {}
    for _, n in window:
        by_clause.setdefault(clause_of[keys[n]], []).append(n)
    in_order = sum(weights[n] for ns in by_clause.values() for n in set(_lis(ns)))
    last_clause = set(request.clauses[-1])
    point = sum(weight(k) for k in last_clause)
    point_ok = len(last_clause) < 2 or (
        sum(weight(k) for k in last_clause & got) >= POINT_COVERAGE * point
    )
    if in_order >= need and point_ok:
        return True
    # 3b. one sentence reworded: every term, no longer than the request, no sentence end
    if len(got) == len(keys) and end - start <= REWORDED_SCALE * len(request.norm) + 10:
        return not SENTENCE_END_RE.search(hay.joined, start, end)
    return False


def _negated_before(text: str, at: int) -> bool:
    """A negation among the two terms right before ``at`` ("do not" + the request)."""
    before = terms(text[max(0, at - 20) : at])[-2:]
    return any(t.negation for t in before)


def _numbers_kept(request: Request, text: str) -> bool:
    if not request.numbers:
        return True
    have = {t.key for t in terms(text)}
    return all(n in have for n in request.numbers)


def _negation_kept(request: Request, text: str) -> bool:
    """A negated request needs a negation in the passage; one without needs none."""
    has = any(t.negation for t in terms(text))
    return has if request.negated else not has

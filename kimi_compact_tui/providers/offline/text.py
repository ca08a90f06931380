"""Text helpers of the offline summarizer: sentences, one-line briefs, condensed code."""

from __future__ import annotations

import re

from kimi_compact_tui.providers.offline.patterns import (
    CODE_HINT_RE,
    FENCE_RE,
    KEY_LINE_RE,
    SIGNATURE_RE,
    SYSTEM_TAG_RE,
    WHOLE_CODE_LINES,
)


def sentences(text: str) -> list[str]:
    out = []
    for line in text.split("\n"):
        line = line.strip().lstrip("-*#>0123456789. ").strip()
        if not line:
            continue
        for s in re.split(r"(?<=[.!?])\s+|(?<=[。！？；])\s*", line):
            s = " ".join(s.split())
            if len(s) >= 4:
                out.append(s)
    return out


def brief(text: str, limit: int = 300) -> str:
    flat = " ".join(FENCE_RE.sub(lambda m: inline_code(m.group("code")), text).split())
    flat = SYSTEM_TAG_RE.sub(lambda m: m.group(1), flat)
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    stop = max(cut.rfind(". "), cut.rfind("。"), cut.rfind("? "))
    if stop > limit // 2:
        return cut[: stop + 1]
    return cut.rstrip() + "…"


def inline_code(code: str) -> str:
    lines = [x.strip() for x in code.strip().split("\n") if x.strip()]
    if len(lines) <= 2:
        return " `" + "; ".join(lines) + "` "
    return " (code below) "


def dedupe(items: list[str], limit: int) -> list[str]:
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


def fence_for(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(3, longest + 1)


def looks_like_code(text: str) -> bool:
    lines = [x for x in text.split("\n") if x.strip()]
    if len(lines) < 3:
        return False
    hits = sum(1 for x in lines if CODE_HINT_RE.search(x))
    return hits * 10 >= len(lines) * 4


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

"""Text helpers of the offline summarizer."""

from __future__ import annotations

import re


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, line by line (list markers dropped), each on
    one line; fragments under four characters are not sentences."""
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

"""How much of the extract goes into the offline summary: the full level and the
trimmed ones the summary falls back to when it would be larger than what it replaces."""

from __future__ import annotations

from dataclasses import dataclass, replace

LEFT_OUT = "(left out of this trimmed summary)"


@dataclass(frozen=True)
class Detail:
    """How much of the extract goes into the summary."""

    focus_chars: int = 600
    reply_chars: int = 300
    env_items: int = 5
    done_items: int = 12
    errors: int = 8
    error_blocks: bool = True
    fix_chars: int = 280
    code_files: int = 12
    code_bodies: bool = True
    key_elements: int = 10
    other_files: int = 10
    context_items: int = 12
    sentence_chars: int = 240


FULL = Detail()
# Less and less detail: code bodies first, verbatim error blocks and signatures
# late, the six sections never.
LEVELS = (
    FULL,
    replace(FULL, code_bodies=False, done_items=8, context_items=8, other_files=6),
    Detail(300, 0, 3, 4, 5, True, 100, 6, False, 6, 3, 4, 120),
    Detail(300, 0, 3, 4, 5, False, 100, 6, False, 6, 3, 4, 120),
    Detail(160, 0, 1, 2, 3, False, 60, 3, False, 4, 0, 2, 100),
    Detail(80, 0, 0, 0, 0, False, 0, 0, False, 0, 0, 0, 60),
)

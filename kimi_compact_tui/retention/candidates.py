"""Candidate summaries kept during a review, and the comparison of two.

Plain engine data: every finished run becomes a :class:`Candidate` (provider,
model, prompt source and sha256, custom instructions, output tokens, time,
tokens per second, the contract check and the retention figures). The front
end fills in the contract check (``contract_ok``/``contract_warnings``) from
its own checker, so nothing here depends on the TUI.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from typing import Any

from kimi_compact_tui.compaction.figures import RunFigures
from kimi_compact_tui.retention.report import RetentionReport


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Candidate:
    number: int  # 1-based, in the order the runs finished
    summary: str
    provider: str
    model: str | None
    prompt_source: str  # "bundled", "file", "kimi-cli", "inline", "edited"...
    prompt_sha256: str
    custom_instructions: str = ""
    prompt_path: str | None = None
    output_tokens: int | None = None  # the run's one figure (RunFigures): reported or estimated
    seconds: float | None = None
    tokens_estimated: bool = False  # output_tokens is the estimate (shown with ~)
    contract_ok: bool | None = None
    contract_warnings: tuple[str, ...] = ()
    retention: RetentionReport | None = None

    @property
    def figures(self) -> RunFigures | None:
        if self.output_tokens is None:
            return None
        return RunFigures(self.output_tokens, self.tokens_estimated, self.seconds)

    @property
    def tokens_per_second(self) -> float | None:
        figures = self.figures
        return figures.rate if figures is not None else None

    def retention_figures(self) -> dict[str, tuple[int, int]]:
        return self.retention.figures() if self.retention is not None else {}

    def label(self, *, timing: bool = True) -> str:
        """One line for a list: number, provider/model, prompt, the run's figures
        (:class:`RunFigures`, as the stream screen shows them; no time with
        ``timing`` off), the contract check and the retention figures."""
        model = f"{self.provider}/{self.model}" if self.model else self.provider
        parts = [f"#{self.number}", model, f"prompt {self.prompt_source}:{self.prompt_sha256[:8]}"]
        if self.custom_instructions:
            parts.append("+instructions")
        figures = self.figures
        if figures is not None:
            parts += figures.parts(timing=timing)
        if self.contract_ok is not None:
            parts.append("contract ok" if self.contract_ok else "contract !")
        if self.retention is not None:
            parts.append(f"kept {self.retention.kept}/{self.retention.total}")
        return "  ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "provider": self.provider,
            "model": self.model,
            "prompt": {
                "source": self.prompt_source,
                "path": self.prompt_path,
                "sha256": self.prompt_sha256,
            },
            "custom_instructions": self.custom_instructions,
            "output_tokens": self.output_tokens,
            "output_tokens_estimated": self.tokens_estimated,
            "seconds": self.seconds,
            "tokens_per_second": self.tokens_per_second,
            "contract": {"ok": self.contract_ok, "warnings": list(self.contract_warnings)},
            "retention": self.retention.to_json() if self.retention is not None else None,
            "summary": self.summary,
        }


@dataclass
class Comparison:
    left: Candidate
    right: Candidate
    diff: list[str]  # unified diff lines of the two summaries, no line endings

    def figure_rows(self) -> list[tuple[str, str, str]]:
        """(category, left figure, right figure) for every category either has."""
        left = self.left.retention
        right = self.right.retention
        names = list(left.categories if left else right.categories if right else [])
        rows = []
        for name in names:
            lf = left.categories[name].figure() if left else "-"
            rf = right.categories[name].figure() if right else "-"
            rows.append((name, lf, rf))
        return rows


@dataclass
class CandidateSet:
    """The candidates of one review, in the order they finished."""

    items: list[Candidate] = field(default_factory=list)
    chosen: int | None = None  # the number of the candidate chosen to edit and write

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.items)

    def add(self, summary: str, **fields: Any) -> Candidate:
        """Keep a finished run; ``fields`` are :class:`Candidate`'s other fields
        (``prompt_sha256`` defaults to the sha256 of ``prompt_text`` when given)."""
        prompt_text = fields.pop("prompt_text", None)
        if "prompt_sha256" not in fields:
            fields["prompt_sha256"] = sha256_text(prompt_text or "")
        fields.setdefault("prompt_source", "unknown")
        fields.setdefault("provider", "unknown")
        fields.setdefault("model", None)
        candidate = Candidate(number=len(self.items) + 1, summary=summary, **fields)
        self.items.append(candidate)
        return candidate

    def get(self, number: int) -> Candidate:
        for c in self.items:
            if c.number == number:
                return c
        raise KeyError(number)

    def choose(self, number: int) -> Candidate:
        candidate = self.get(number)
        self.chosen = number
        return candidate

    def compare(self, left: int, right: int, context: int = 2) -> Comparison:
        a, b = self.get(left), self.get(right)
        diff = difflib.unified_diff(
            a.summary.split("\n"),
            b.summary.split("\n"),
            fromfile=f"#{a.number}",
            tofile=f"#{b.number}",
            lineterm="",
            n=context,
        )
        return Comparison(a, b, list(diff))

    def to_json(self) -> dict[str, Any]:
        return {"chosen": self.chosen, "candidates": [c.to_json() for c in self.items]}

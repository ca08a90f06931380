"""The figures of one summary run, the same wherever the run is shown.

A run has one output-token figure and one time: the tokens the provider
reported for the summary, else the one estimate (:func:`estimate_tokens` of
the summary's text, marked ``~``), and the run's own total time. The stream
screen, its outcome line and the candidates list all show
:meth:`RunFigures.parts`, so one run never has two figures. Plain data.
"""

from __future__ import annotations

from dataclasses import dataclass

from kimi_compact_tui.compaction.tokens import estimate_tokens


@dataclass(frozen=True)
class RunFigures:
    tokens: int
    estimated: bool  # no figure reported by the provider: the estimate (shown with ~)
    seconds: float | None = None

    @classmethod
    def of(cls, summary: str, reported: int | None, seconds: float | None = None) -> RunFigures:
        """The reported figure when there is one, else the estimate of ``summary``."""
        if reported is not None:
            return cls(reported, False, seconds)
        return cls(estimate_tokens(summary), True, seconds)

    @property
    def approx(self) -> str:
        return "~" if self.estimated else ""

    @property
    def rate(self) -> float | None:
        """Tokens per second (None without a time, or for a zero time)."""
        if self.seconds is None or self.seconds <= 0:
            return None
        return self.tokens / self.seconds

    def tokens_text(self) -> str:
        return f"{self.approx}{self.tokens:,} token{'' if self.tokens == 1 else 's'}"

    def time_text(self) -> str | None:
        if self.seconds is None:
            return None
        return f"{self.seconds:,.2f} s" if self.seconds < 10 else f"{self.seconds:,.1f} s"

    def rate_text(self) -> str | None:
        rate = self.rate
        return None if rate is None else f"{self.approx}{rate:,.0f} tokens/s"

    def parts(self, *, timing: bool = True) -> list[str]:
        """``["~549 tokens", "0.21 s", "~2,614 tokens/s"]`` (without the time
        and rate when ``timing`` is off or unknown)."""
        out = [self.tokens_text()]
        if timing:
            out += [t for t in (self.time_text(), self.rate_text()) if t is not None]
        return out

    def describe(self, *, timing: bool = True, sep: str = " · ") -> str:
        return sep.join(self.parts(timing=timing))

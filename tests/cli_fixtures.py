"""The in-process CLI fixture: ``cli_main(*argv)`` runs ``kimi_compact_tui.cli.main``
in this process and returns its exit code, stdout and stderr (a subprocess
costs about a second of interpreter start-up; keep those for smoke tests)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from kimi_compact_tui import cli


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.split("\n") if "error:" in line]


@pytest.fixture
def cli_main(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    def run(*argv: str | Path) -> CliResult:
        capsys.readouterr()  # drop anything printed before
        code = cli.main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return CliResult(code, out, err)

    return run

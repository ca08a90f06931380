"""The console entry as a user runs it (a subprocess)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cli(
    *args: str,
    cwd: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
):
    """``python -m kimi_compact_tui ARGS`` in a subprocess, as a user runs it:
    no user config, no API keys from the caller, stdin closed unless given."""
    import os
    import subprocess
    import sys

    from tests import procs

    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    base.pop("KIMI_COMPACT_TUI_CONFIG", None)
    base["XDG_CONFIG_HOME"] = str((cwd or ROOT) / "no-config")
    base.update(env or {})
    return procs.run(
        [sys.executable, "-m", "kimi_compact_tui", *args],
        capture_output=True,
        text=True,
        env=base,
        cwd=cwd or ROOT,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        timeout=timeout,
    )

"""Make the README's screenshots from the real app on the bundled samples.

    .venv/bin/python scripts/screenshots.py [OUT_DIR]   # default: docs/screenshots

The app runs headless (Textual's test driver) at 120x36 with the offline
provider on ``sample_sessions/kimi-debugging-session``, which it opens as a
copy (never the sample itself) under a throwaway state folder. Each picture
is Textual's own SVG export (``App.export_screenshot``). Times and rates are
hidden (``ReviewApp.show_timing``) and no path of this machine is on screen,
so the files change only when the screens do: rerun this after a layout
change and commit the result.

The pictures: ``main.svg`` (the list with its regions, the legend and the
status), ``stream.svg`` (a finished offline run with its retention pane),
``diff.svg`` (before and after the write) and ``candidates.svg`` (two runs,
the second with custom instructions, marked and compared).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_sessions" / "kimi-debugging-session"
OUT = REPO / "docs" / "screenshots"
SIZE = (120, 36)
WAIT = 60.0  # seconds: the longest any awaited state may take
#: What the second run is asked to keep (as typed in ``i``): the commands the
#: first run's retention pane listed as missing, in backticks (kept verbatim).
INSTRUCTIONS = (
    "Keep these commands verbatim: `python -m ledger.importer fixtures/2026-03.csv`, "
    "`pytest -q tests/test_parse.py`, `pytest -q`."
)


async def settle(pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def wait_until(pilot, predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"screenshots: timed out waiting for {what}")
        await pilot.pause(0.05)


def on(app, screen: str) -> None:
    if type(app.screen).__name__ != screen:
        raise SystemExit(f"screenshots: expected {screen}, found {type(app.screen).__name__}")


async def run_offline(pilot) -> None:
    """c, then the run's end and its retention score."""
    await pilot.press("c")
    await settle(pilot)
    on(pilot.app, "StreamScreen")
    await wait_until(pilot, lambda: pilot.app.screen.result is not None, "the run's end")
    await settle(pilot)


async def shoot(out: Path) -> list[Path]:
    from kimi_compact_tui.tui.app import create_app

    app = create_app(SAMPLE, provider="offline")
    app.show_timing = False  # no clock in the pictures
    written: list[Path] = []

    def save(name: str, title: str) -> None:
        path = out / name
        svg = app.export_screenshot(title=title)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(svg, encoding="utf-8")
        os.replace(tmp, path)  # atomic: a reader never sees half a picture
        written.append(path)

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        on(app, "MainScreen")
        save("main.svg", "kimi-compact-tui: the main screen")
        await run_offline(pilot)
        save("stream.svg", "kimi-compact-tui: the stream and its retention pane")
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        on(app, "DiffScreen")
        save("diff.svg", "kimi-compact-tui: the diff")
        await pilot.press("escape")
        await settle(pilot)
        app.state.set_custom_instruction(INSTRUCTIONS)
        app.refresh_view()
        await pilot.press("r" if type(app.screen).__name__ == "StreamScreen" else "c")
        await settle(pilot)
        if type(app.screen).__name__ != "StreamScreen":  # asked to replace the summary
            await pilot.press("y")
            await settle(pilot)
        on(app, "StreamScreen")
        await wait_until(pilot, lambda: app.screen.result is not None, "the second run's end")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("C")
        await settle(pilot)
        on(app, "CandidatesScreen")
        await settle(pilot)  # the two latest runs are marked and compared at first
        save("candidates.svg", "kimi-compact-tui: two runs compared")
    return written


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kct-screenshots-") as scratch:
        # Nothing of this machine's: no user config, no sessions, copies made here.
        os.environ.update(
            KIMI_COMPACT_TUI_CONFIG="",
            XDG_CONFIG_HOME=str(Path(scratch) / "config"),
            XDG_STATE_HOME=str(Path(scratch) / "state"),
            KIMI_SHARE_DIR=str(Path(scratch) / "kimi"),
            KIMI_CODE_HOME=str(Path(scratch) / "kimi-code"),
        )
        os.environ.pop("NO_COLOR", None)
        sys.path.insert(0, str(REPO))
        for path in asyncio.run(shoot(out)):
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

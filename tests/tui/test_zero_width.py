"""Zero-width and bidi characters are shown as visible placeholders
wherever session text is shown: the TUI's message list, detail, diff panes, stream,
retention pane and picker titles, and the CLI's plan, preview, diff and retention. What
is stored and sent is untouched; emoji joined by ZWJ stay readable."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import TextArea

from kimi_compact_tui.sanitize import one_line, visible
from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.picker import PickerScreen
from tests import procs
from tests.factories import write_kimi
from tests.factories.kimi_cli import share_session, write_kimi_json
from tests.tui.test_tui_picker import CHAT, WORK
from tests.tui_support import cells_text, compact, settle

REPO = Path(__file__).resolve().parents[2]
# Every zero-width or bidi control of the issue, each between two letters.
INVISIBLES = "\u200b\u200c\u200d\u2060\ufeff\u202e\u2066\u2067\u2068\u2069"
# The three of the title in session text (the unit tests take every one).
ZW = "A\u200bB\u200dC\ufeffD"
ZW_SHOWN = "A<U+200B>B<U+200D>C<U+FEFF>D"
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man ZWJ woman ZWJ girl
RAINBOW_FLAG = "\U0001f3f3\ufe0f\u200d\U0001f308"
SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
URL = "http://exa\u200bmple.com/p"
URL_SHOWN = "http://exa<U+200B>mple.com/p"
SIZE = (150, 50)


@pytest.mark.parametrize("char", list(INVISIBLES) + ["\u2061", "\u180e", "\u2028", "\u2029"])
def test_each_invisible_character_gets_a_placeholder(char):
    shown = visible(f"a{char}b")
    assert shown == f"a<U+{ord(char):04X}>b"
    assert one_line(f"a{char}b") == shown


def test_emoji_sequences_stay_readable_and_stray_joiners_do_not():
    for emoji in (FAMILY, RAINBOW_FLAG, SCOTLAND, "\U0001f469\U0001f3fd\u200d\U0001f4bb"):
        assert visible(f"team {emoji}!") == f"team {emoji}!"
    assert visible("x\u200d\U0001f600") == "x<U+200D>\U0001f600"  # not after an emoji
    assert visible("\U0001f600\u200dx") == "\U0001f600<U+200D>x"  # not before one
    assert visible("\U0001f600\u200d") == "\U0001f600<U+200D>"
    # ASCII hidden in tag characters (not a flag) is shown
    assert visible("hi\U000e0041\U000e0042") == "hi<U+E0041><U+E0042>"


def session_messages() -> list[dict]:
    call = {
        "type": "function",
        "id": "ReadFile:0",
        "function": {"name": "ReadFile", "arguments": '{"path": "parser.py"}'},
    }
    return [
        {"role": "user", "content": f"Open {ZW} please {FAMILY}"},
        {"role": "assistant", "content": f"Reading {ZW}.", "tool_calls": [call]},
        {"role": "tool", "content": f"Fetched {URL} and {ZW}", "tool_call_id": "ReadFile:0"},
        {"role": "user", "content": f"Now fix {ZW} in the parser."},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "OK."},
    ]


def zw_session(tmp_path: Path) -> Path:
    return write_kimi(tmp_path / "zw", session_messages(), system_prompt=f"sys {ZW}", usage=100)


def assert_shown(text: str, *expected: str) -> None:
    assert not [c for c in INVISIBLES if c in text.replace(FAMILY, "")]
    for piece in expected:
        assert piece in text, piece


async def test_the_tui_shows_placeholders_in_list_detail_stream_retention_and_diff(tmp_path):
    app = create_app(zw_session(tmp_path), provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # the message list and the detail pane (first message highlighted)
        assert_shown(cells_text(app), f"Open {ZW_SHOWN} please {FAMILY}")
        assert ZW_SHOWN in app.message_list.row_plain(0, 200)
        await compact(pilot)
        # the summary as shown (where it is scrolled to does not matter)
        shown = app.screen.query_one("#summary-live", TextArea).text
        assert_shown(shown, f"Now fix {ZW_SHOWN} in the parser.")
        assert_shown(cells_text(app), URL_SHOWN)  # the retention pane's missing URL
        await pilot.press("escape")
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
        diff = cells_text(app)
        # the narrow diff columns cut previews with an ellipsis
        assert_shown(diff, "Reading A<U+200B>B", "Open A<U+200B>B<U+200D>", URL_SHOWN)
        # display only: what is sent keeps the characters
        sent = app.state.preparation.request.transcript
        assert ZW in sent and URL in sent


async def test_the_picker_shows_placeholders_in_titles(tmp_path, monkeypatch):
    share = tmp_path / "share"
    write_kimi_json(share, WORK)
    share_session(share, WORK, "zw-first-user", [{"role": "user", "content": f"Fix {ZW}"}, *CHAT])
    share_session(share, WORK, "zw-title", CHAT, custom_title=f"Title {ZW}", mtime=1.0)
    monkeypatch.setenv("KIMI_SHARE_DIR", str(share))
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        assert_shown(cells_text(app), f"Fix {ZW_SHOWN}", f"Title {ZW_SHOWN}")


def test_plan_and_diff_show_placeholders(tmp_path, cli_main):
    path = zw_session(tmp_path)
    plan = cli_main("plan", path)
    assert plan.code == 0, plan.stderr
    assert_shown(plan.stdout, f"Open {ZW_SHOWN} please", f"Reading {ZW_SHOWN}.")
    diff = cli_main("diff", path, path)
    assert diff.code == 0, diff.stderr
    assert_shown(diff.stdout, f"Open {ZW_SHOWN} please", f"Reading {ZW_SHOWN}.")


def run_in_terminal(*args: str | Path) -> str:
    """The command's output as a terminal receives it (its stdout is a pty)."""
    master, slave = pty.openpty()
    env = {**os.environ, "NO_COLOR": "1", "KIMI_CLI_COMPACT_MD": ""}
    proc = procs.popen(
        [sys.executable, "-m", "kimi_compact_tui", *map(str, args)],
        stdout=slave,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the command closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=60) == 0, proc.stderr.read().decode() if proc.stderr else ""
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_preview_and_retention_in_a_terminal_show_placeholders(tmp_path):
    path = zw_session(tmp_path)
    preview = run_in_terminal("preview", path)
    assert_shown(preview, f"Open {ZW_SHOWN} please {FAMILY}", f"Fetched {URL_SHOWN}")
    summary = tmp_path / "summary.md"
    summary.write_text("<current_focus>nothing</current_focus>\n", encoding="utf-8")
    report = run_in_terminal("retention", path, "--summary", summary)
    assert_shown(report, f"[urls] {URL_SHOWN}", f"Now fix {ZW_SHOWN}")

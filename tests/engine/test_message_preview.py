"""One preview of a message everywhere: the TUI's message list and
diff panes, ``plan`` and ``diff`` on the command line all show a message through
:func:`kimi_compact_tui.previews.message_preview`, cut at their own width."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rich.cells import cell_len

from kimi_compact_tui.formats import load_session
from kimi_compact_tui.model import Message
from kimi_compact_tui.previews import message_preview
from kimi_compact_tui.sanitize import fit_cells
from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.widgets.diff_view import DiffView, format_tokens
from tests.factories import write_kimi
from tests.tui_support import compact, press_and_settle, settle

SHELL_CALL = '→ Shell({"command": "pytest -q"})'
CJK = "修复订单模块的金额计算，" * 12
SIZE = (120, 40)


def call(call_id: str, name: str, **arguments: str) -> dict:
    return {
        "type": "function",
        "id": call_id,
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def preview_session(tmp_path: Path) -> Path:
    messages = [
        {"role": "user", "content": "Run the tests please"},
        {
            "role": "assistant",
            "content": [],
            "tool_calls": [call("Shell:0", "Shell", command="pytest -q")],
        },
        {"role": "tool", "content": "3 passed", "tool_call_id": "Shell:0"},
        {"role": "assistant", "content": CJK},
        {
            "role": "assistant",
            "content": "Checking\n\nthe   file.",
            "tool_calls": [call("ReadFile:1", "ReadFile", path="a.py")],
        },
        {"role": "tool", "content": "x = 1", "tool_call_id": "ReadFile:1"},
        {"role": "assistant", "content": [{"type": "think", "think": "Hmm.\nMaybe."}]},
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]
    return write_kimi(tmp_path / "p", messages, system_prompt="sys", usage=50)


def test_the_preview_itself():
    shell = Message.make(
        "assistant", [], tool_calls=[call("Shell:0", "Shell", command="pytest -q")]
    )
    assert message_preview(shell, 80) == SHELL_CALL
    assert message_preview(shell, 12) == '→ Shell({"c…'
    both = Message.make("assistant", "Checking\n\nthe   file.", tool_calls=[call("R:1", "Read")])
    assert message_preview(both, 80) == "Checking ⏎ the file. → Read({})"
    cjk = message_preview(Message.make("assistant", CJK), 21)
    assert cjk == "修复订单模块的金额计…" and cell_len(cjk) == 21
    think = Message.make("assistant", [{"type": "think", "think": "Hmm.\nMaybe."}])
    assert message_preview(think, 80) == "[thinking] Hmm. ⏎ Maybe."
    image = Message.make("user", [{"type": "image_url", "image_url": {"url": "x"}}])
    assert message_preview(image, 80) == "[image]"
    assert message_preview(Message.make("assistant", ""), 80) == "(empty)"
    assert message_preview(Message.make("user", "a\u200bb\x1b[31m"), 80) == "a<U+200B>b␛[31m"
    # cutting twice is cutting once at the narrower width
    long = Message.make("user", "word " * 200)
    assert fit_cells(message_preview(long, 240), 33) == fit_cells(message_preview(long, 33), 33)


PLAN_ROW = re.compile(r"^ *(\d+)  \S+ +\d+t  (.*)$")
DIFF_ROW = re.compile(r"^[-+= ] +(\d+|\.) +(?:\d+|\.)  \S+ +\d+ tok  (.*)$")


def cli_previews(cli_main, path: Path) -> tuple[dict[int, str], dict[int, str]]:
    plan = cli_main("plan", path)
    assert plan.code == 0, plan.stderr
    plan_rows = {int(m[1]): m[2] for m in map(PLAN_ROW.match, plan.stdout.splitlines()) if m}
    diff = cli_main("diff", path, path)
    assert diff.code == 0, diff.stderr
    diff_rows = {int(m[1]): m[2] for m in map(DIFF_ROW.match, diff.stdout.splitlines()) if m}
    return plan_rows, diff_rows


def list_preview(app, index: int, width: int = 100) -> str:
    """The preview cells of row ``index`` of the message list (between the markers
    and the token figure)."""
    row = app.message_list.row_plain(index, width)
    head = len("▌ ") + len(str(len(app.state.session.messages))) + 1 + 10 + 5
    return row[head:-8]


def diff_preview(view: DiffView, index: int, width: int = 60) -> str:
    row = view.rows[index]
    text = view.row_text(index, width).plain
    head = len(str(len(view.rows))) + 3 + 10
    return text[head : -(len(format_tokens(row.tokens)) + 1)]


async def test_the_four_places_show_the_same_preview(tmp_path, cli_main):
    path = preview_session(tmp_path)
    messages = load_session(path).messages
    plan_rows, diff_rows = cli_previews(cli_main, path)
    app = create_app(path, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tui_list = {i + 1: list_preview(app, i) for i in range(len(messages))}
        await compact(pilot, back=True)
        await press_and_settle(pilot, "d")
        assert isinstance(app.screen, DiffScreen)
        view = app.screen.query_one("#before", DiffView)
        tui_diff = {view.rows[i].number: diff_preview(view, i) for i in range(len(view.rows))}
    for number, message in enumerate(messages, 1):
        # each place: the one preview, cut at the width it has (the TUI pads it)
        assert plan_rows[number] == message_preview(message, 70), number
        assert diff_rows[number] == message_preview(message, 72), number
        for shown in (tui_list[number], tui_diff[number]):
            room = cell_len(shown)
            assert shown == fit_cells(message_preview(message, room), room), number
    # the tool call with no text reads the same in all four
    assert {plan_rows[2], diff_rows[2], tui_list[2].rstrip(), tui_diff[2].rstrip()} == {SHELL_CALL}
    cjk = [plan_rows[4], diff_rows[4], tui_list[4].rstrip(), tui_diff[4].rstrip()]
    assert all(p.endswith("…") and p.startswith("修复订单模块") for p in cjk)


# ----------------------------------------------------------------------------- one huge word


def reference_preview(text: str, width: int) -> str:
    """The preview by its definition, over the whole text: every word whole,
    then cut to ``width`` cells (what the tool did before issue 32 item 2; right,
    but it measured every character of a 30 MB word)."""
    from rich.cells import set_cell_size

    from kimi_compact_tui.previews import NEWLINE_MARK
    from kimi_compact_tui.sanitize import visible

    words: list[str] = []
    for line in text.split("\n"):
        if line.split() and words:
            words.append(NEWLINE_MARK)
        words.extend(line.split())
    flat = visible(" ".join(words))
    if cell_len(flat) <= width:
        return flat
    return set_cell_size(flat, width - 1).rstrip() + "…"


HUGE_WORDS = [
    "x" * 50_000,
    "中文日志没有空格" * 6_000,
    "🙂" * 20_000,
    "e\u0301" * 20_000,  # combining accents: each pair one cell
    "\u0301" * 30_000 + "tail",  # zero-width marks first: the word must still fill the line
    "a\u200bb" * 10_000,  # zero-width spaces, made visible
    "\x1b[31m" * 5_000,  # escapes, made visible
    "short words first " + "y" * 40_000,
    "line one\n\n" + "z" * 40_000 + "\nlast",
]


def test_a_huge_word_previews_as_the_whole_text_would():
    """Issue 32 item 2: one word of megabytes (a minified file, a CJK log with
    no spaces) is previewed by its first cells only, and the line is exactly
    the one the whole text gives."""
    for text in HUGE_WORDS:
        for width in (1, 2, 10, 41, 120, 200):
            message = Message({"role": "tool", "content": text})
            got = message_preview(message, width)
            assert got == reference_preview(text, width), (text[:20], width)
            assert cell_len(got) <= width


def test_a_30_mb_word_is_previewed_from_its_start():
    text = "q" * 30_000_000
    got = message_preview(Message({"role": "tool", "content": text}), 80)
    assert got == "q" * 79 + "…"
    calls = [call("c1", "Write", content="w" * 5_000_000)]
    preview = message_preview(Message({"role": "assistant", "content": "", "tool_calls": calls}))
    assert preview.startswith('→ Write({"content": "www') and preview.endswith("…")
    assert cell_len(preview) == 200

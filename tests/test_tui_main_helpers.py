"""Session files and screen helpers for the main-screen TUI tests."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_sessions"

CELL = 12.2  # SVG units per terminal cell in Textual's screenshots
MARKUP_TEXT = "[bold]x[/bold] [/foo] [link=x]"
ESCAPE_TEXT = "\x1b[31m \x1b]0;title\x07 \u202e"


_SVG_TEXT = re.compile(
    r'<text class="terminal-[\w-]*r\d+" x="([\d.]+)" y="[\d.]+" textLength="([\d.]+)" '
    r'clip-path="url\(#terminal-[\w-]*line-(\d+)\)">([^<]*)</text>'
)


def screen_lines(app) -> list[str]:
    """The current screen as plain text lines (what reaches the terminal, minus
    styles), read from Textual's public SVG screenshot: each text run placed at
    its cell column (12.2 units per cell), gaps filled with spaces."""
    runs: dict[int, list[tuple[float, float, str]]] = {}
    for x, length, line, text in _SVG_TEXT.findall(app.export_screenshot()):
        runs.setdefault(int(line), []).append((float(x), float(length), html.unescape(text)))
    out = []
    for line in range(app.size.height):
        row, cells = "", 0
        for x, length, text in sorted(runs.get(line, [])):
            column = round(x / CELL)
            row += " " * max(0, column - cells) + text.replace("\xa0", " ")
            cells = column + round(length / CELL)
        out.append(row)
    return out


def screen_text(app) -> str:
    return "\n".join(screen_lines(app))


def write_openai(path: Path, messages: list[dict], **extra) -> Path:
    data = {"messages": messages, **extra} if extra else messages
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def write_kimi(
    folder: Path, messages: list[dict], *, system_prompt: str | None, usage: int
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    if system_prompt is not None:
        lines.append(json.dumps({"role": "_system_prompt", "content": system_prompt}))
    lines.append(json.dumps({"role": "_checkpoint", "id": 0}))
    lines += [json.dumps(m, ensure_ascii=False, separators=(",", ":")) for m in messages]
    lines.append(json.dumps({"role": "_usage", "token_count": usage}))
    path = folder / "context.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def regions_messages() -> list[dict]:
    """A session with every kind of part: two leading system messages, think,
    media, tool calls and tool results, ending in a user/assistant tail."""
    return [
        {"role": "system", "content": "You are a careful engineer."},
        {"role": "system", "content": "Project: ledger (Python 3.12)."},
        {"role": "user", "content": "The importer crashes on the March file. Why?"},
        {
            "role": "assistant",
            "content": [
                {"type": "think", "think": "Reproduce first, then read the parser."},
                {"type": "text", "text": "Let me reproduce the crash."},
            ],
            "tool_calls": [
                {
                    "type": "function",
                    "id": "call_1",
                    "function": {"name": "Shell", "arguments": '{"command": "make import"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "decimal.InvalidOperation at line 412",
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Here is the dashboard screenshot."},
                {"type": "image_url", "image_url": {"url": "https://example.com/shot.png"}},
            ],
        },
        {"role": "assistant", "content": "Empty amounts break parse_amount; I will fix it."},
        {"role": "user", "content": "Good. Add a --strict flag next."},
        {"role": "assistant", "content": "Adding --strict to the importer now."},
    ]


def hostile_messages() -> list[dict]:
    return [
        {"role": "user", "content": f"markup {MARKUP_TEXT} escapes {ESCAPE_TEXT} end"},
        {"role": "assistant", "content": f"{ESCAPE_TEXT}{MARKUP_TEXT}"},
        {"role": "user", "content": "third"},
        {"role": "assistant", "content": "fourth"},
    ]


def big_session(path: Path, n: int) -> Path:
    """An OpenAI .jsonl session with ``n`` short messages (fast to write)."""
    roles = ("user", "assistant")
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(f'{{"role":"{roles[i % 2]}","content":"message number {i + 1}"}}\n')
    return path

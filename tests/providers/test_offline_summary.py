"""The offline extractive summarizer: six sections from the session's specifics,
streamed in chunks through the same path as a real provider."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.request import CompactionRequest, build_request
from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.compaction.tokens import estimate_tokens, message_tokens
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers import ProviderConfig, StreamEvent, stream_summary
from kimi_compact_tui.providers.offline import offline_summary, parse_transcript

SECTIONS = (
    "current_focus",
    "environment",
    "completed_tasks",
    "active_issues",
    "code_state",
    "important_context",
)
SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
TRACEBACK_RE = re.compile(r"Traceback \(most recent call last\):\n(?:[ \t].*\n)+[^\s].*", re.M)

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app/billing/invoice.py", line 41, in render\n'
    "    total = sum(line.amount for line in lines)\n"
    "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'"
)
LONG_FUNCTION = "\n".join(
    ["def build_report(rows, *, currency='EUR'):"]
    + [f"    step_{i} = rows[{i}] * {i}  # body line {i}" for i in range(30)]
    + ["    return step_0"]
)
SHORT_FUNCTION = "def add(a, b):\n    return a + b\n"
FENCED_RE = re.compile(r"^```[^\n`]*\n(.*?)^```[ \t]*$", re.M | re.S)
PROMPT = PromptSource(
    "inline",
    None,
    "\n\n---\n\nThe above is a list of messages. Write <current_focus> and friends.",
    "0" * 64,
)
INVOICE_SOURCE = "\n".join(
    ["from decimal import Decimal", "", "", "class Invoice:"]
    + ["    def __init__(self, lines):", "        self.lines = lines", ""]
    + ["    def render(self):", "        lines = self.lines"]
    + [
        "        total = sum(line.amount for line in lines)",
        "        return self.format(total)",
        "",
    ]
    + [
        f"    def field_{i}(self, currency='EUR'):\n"
        f"        line = self.lines[{i}]\n"
        f"        label = line.label.strip().title()\n"
        f"        amount = Decimal(line.amount or 0).quantize(Decimal('0.01'))\n"
        f"        note = f'{{label}}: {{amount}} {{currency}}'\n"
        f"        return note\n"
        for i in range(6)
    ]
)


def make_request(
    messages: list[tuple[str, list[str]]], custom: str = ""
) -> CompactionRequest | None:
    """The compaction request for ``messages``, every one of them compacted (an
    explicit boundary after the last)."""
    session = [
        Message.make(role, [{"type": "text", "text": t} for t in texts]) for role, texts in messages
    ]
    if not session:
        return None
    plan = make_plan(session, up_to=len(session))
    return build_request(session, plan, PROMPT, {}, custom_instruction=custom)


def make_body(messages: list[tuple[str, list[str]]], custom: str = "") -> dict:
    request = make_request(messages, custom)
    if request is None:  # no message: a request with only the prompt part
        return {
            "messages": [
                {"role": "system", "content": ""},
                {"role": "user", "content": [{"type": "text", "text": "\n" + PROMPT.text}]},
            ]
        }
    return request.body


FIXTURE_MESSAGES = [
    ("system", ["Work in /srv/app. Python 3.12 with pytest."]),
    ("user", ["The invoice page crashes for drafts. Please fix billing/invoice.py."]),
    ("tool", ["<system>Command exited with code 1.</system>", TRACEBACK + "\n"]),
    ("assistant", ["Reading billing/invoice.py."]),
    ("tool", ["<system>45 lines read from file starting from line 1.</system>", INVOICE_SOURCE]),
    (
        "assistant",
        [
            "The crash is because draft lines have no amount. I'll fix it by treating "
            "missing amounts as zero.\n\n```python\n" + SHORT_FUNCTION + "```"
        ],
    ),
    (
        "assistant",
        ["Here is the report module `billing/report.py`:\n\n```python\n" + LONG_FUNCTION + "\n```"],
    ),
    ("tool", ["12 passed in 0.40s"]),
    ("assistant", ["Fixed: drafts now render with a zero total. All tests passed."]),
    ("user", ["Great. Next, add a CSV export of the report; amounts must stay in cents."]),
]
FIXTURE_REQUEST = make_request(FIXTURE_MESSAGES, custom="Mention ZEBRAFISH everywhere")
FIXTURE = FIXTURE_REQUEST


def assert_six_sections(text: str) -> None:
    positions = []
    for name in SECTIONS:
        assert text.count(f"<{name}>") == 1, name
        assert text.count(f"</{name}>") == 1, name
        start, end = text.index(f"<{name}>"), text.index(f"</{name}>")
        assert start < end
        assert text[start + len(name) + 2 : end].strip(), f"{name} is empty"
        positions.append(start)
    assert positions == sorted(positions)


def sample_paths() -> list[Path]:
    if not SAMPLES.is_dir():
        return []
    out = []
    for p in sorted(SAMPLES.iterdir()):
        if p.is_dir() and (p / "context.jsonl").exists():
            out.append(p / "context.jsonl")
        elif p.suffix in (".jsonl", ".json"):
            out.append(p)
    return out


def sample_body(path: Path) -> tuple[CompactionRequest, str]:
    from kimi_compact_tui.config import load_config
    from kimi_compact_tui.job import prepare_compaction

    prep = prepare_compaction(load_session(path), load_config(None))
    assert prep.request is not None, f"{path.name}: nothing to compact ({prep.plan.noop})"
    return prep.request, prep.request.transcript


# ----------------------------------------------------------------------------- own fixture


def test_parse_transcript_reads_headers_and_drops_the_prompt():
    messages = parse_transcript(FIXTURE)
    assert [m.number for m in messages] == list(range(1, 11))
    assert [m.role for m in messages][:3] == ["system", "user", "tool"]
    assert messages[2].parts[1] == TRACEBACK + "\n"
    assert all("ZEBRAFISH" not in m.text for m in messages)


def test_fixture_has_six_sections_and_current_focus_is_the_last_request():
    text = offline_summary(FIXTURE)
    assert_six_sections(text)
    focus = text[text.index("<current_focus>") : text.index("</current_focus>")]
    assert "CSV export" in focus
    assert "ZEBRAFISH" not in text  # custom instructions are not transcript content


def test_an_error_a_later_test_run_fixed_is_resolved_not_open():
    text = offline_summary(FIXTURE)
    issues = text[text.index("<active_issues>") : text.index("</active_issues>")]
    headline = TRACEBACK.rsplit("\n", 1)[-1]
    line = next(ln for ln in issues.split("\n") if headline in ln)
    assert line.startswith(f"- Resolved later: {headline}") and "(message 3)" in line
    assert "Unresolved" not in issues


def test_files_named_are_listed_and_prose_is_not_finished_work():
    text = offline_summary(FIXTURE)
    code = text[text.index("<code_state>") : text.index("</code_state>")]
    assert "- billing/report.py (message 7)" in code
    assert "- billing/invoice.py (messages 2, 4)" in code
    done = text[text.index("<completed_tasks>") : text.index("</completed_tasks>")]
    # "Fixed: drafts now render…" is the assistant's prose, not a record of work
    assert "drafts now render" not in done and "Nothing is recorded as finished" in done


def test_environment_and_context_facts():
    text = offline_summary(FIXTURE)
    env = text[text.index("<environment>") : text.index("</environment>")]
    assert "System message 1 (kept as it is): Work in /srv/app. Python 3.12 with pytest." in env
    ctx = text[text.index("<important_context>") : text.index("</important_context>")]
    assert "amounts must stay in cents" in ctx
    assert "no model" in ctx


def test_output_is_deterministic():
    assert offline_summary(FIXTURE) == offline_summary(FIXTURE)


def test_empty_transcript_still_has_six_sections():
    text = offline_summary(make_body([]))
    assert_six_sections(text)


async def test_streams_in_chunks_through_the_provider_path():
    events: list[StreamEvent] = []
    result = await stream_summary(ProviderConfig(kind="offline"), FIXTURE, events.append)
    assert result.status == "complete"
    assert result.offline is True
    assert result.provider == "offline"
    assert result.model == "offline-extractive"
    assert result.summary == offline_summary(FIXTURE)
    texts = [e.text for e in events if e.kind == "text"]
    assert len(texts) > 5
    assert all(len(t) <= 40 for t in texts)
    assert "".join(texts) == result.summary
    assert result.to_json()["offline"] is True


async def test_offline_cancel_keeps_partial_text():
    cancel = asyncio.Event()
    seen: list[str] = []

    def on_event(event: StreamEvent) -> None:
        if event.kind != "text":
            return
        seen.append(event.text)
        if len(seen) == 3:
            cancel.set()

    cfg = ProviderConfig(kind="offline", chunk_delay=0.01)
    result = await stream_summary(cfg, FIXTURE, on_event, cancel)
    assert result.status == "cancelled"
    assert result.summary == "".join(seen)
    assert 0 < len(result.summary) < len(offline_summary(FIXTURE))


# ----------------------------------------------------------------------------- sample sessions


@pytest.mark.parametrize(
    "path", sample_paths(), ids=lambda p: p.parent.name if p.name == "context.jsonl" else p.name
)
def test_sample_sessions_have_six_sections(path):
    request, transcript = sample_body(path)
    text = offline_summary(request)
    assert_six_sections(text)
    # Never larger than the messages it replaces (the app's own token figures).
    session = load_session(path)
    replaced = sum(message_tokens(session.messages[i]) for i in request.plan.compact_indices)
    assert estimate_tokens(build_compact_summary_text(text)) + 4 <= replaced
    # Every user request of the range is there, verbatim (these are short).
    specifics = request.specifics() if request.specifics else None
    assert specifics is not None
    for item in specifics.of("user_requests"):
        assert " ".join(item.text.split()) in text


def test_a_sample_has_a_traceback():
    assert sample_paths(), "the bundled samples are missing"
    assert any(
        TRACEBACK_RE.search(sample_body(p)[1]) for p in sample_paths()
    ), "expected at least one sample session with a Python traceback"


def test_very_long_transcript_reads_the_recent_part_and_says_so(monkeypatch):
    from kimi_compact_tui.providers.offline import render

    messages = [("system", ["Work in /srv/big."])]
    for i in range(2600):
        messages.append(("user", [f"request number {i}"]))
        messages.append(("assistant", [f"Fixed item {i}."]))
    text = offline_summary(make_body(messages))
    assert_six_sections(text)
    # within the budget every request is written whole, however many
    assert all(f"(message {2 * i + 2}): request number {i}\n" in text for i in range(2600))
    # past the critical limit: the first and the latest requests stay, the summary
    # says how many of those between went
    monkeypatch.setattr(render, "CRITICAL_LIMIT", 5_000)
    text = offline_summary(make_body(messages))
    assert "- current request (message 5200): request number 2599" in text
    assert "- request 1 (message 2): request number 0" in text
    assert re.search(r"Cut: .*\b(\d+) user requests \(messages 4–\d+\) left out", text)
    assert "- System message 1 (kept as it is): Work in /srv/big." in text
    assert "system messages" not in text
    assert "messages 2–5201 (2600 user, 2600 assistant)" in text


def test_the_cut_note_counts_in_the_singular_and_the_plural():
    from collections import Counter

    from kimi_compact_tui.providers.offline.render import _cut_note
    from kimi_compact_tui.specifics import kinds

    one = _cut_note(Counter({"system": 1, kinds.URLS: 1, kinds.PLAN: 1})) or ""
    assert "1 system message (kept as it is)" in one
    assert "1 URL" in one and "1 URLs" not in one
    assert "1 plan item" in one and "1 plan items" not in one
    found = _cut_note(Counter({"findings": 1})) or ""
    assert "1 conclusion of an earlier turn" in found and "conclusions" not in found
    two = _cut_note(Counter({"system": 2, kinds.USER_REQUESTS: 3})) or ""
    assert "2 system messages (kept as they are)" in two
    assert "3 user requests" in two

"""The offline summarizer on a realistic kimi-cli transcript.

The session is built the way kimi-cli writes it: assistant turns with tool
calls, tool results opening with a ``<system>`` note, a pytest run with a
failure and a traceback, a file read whose code raises errors, a git diff of
the fix, and a ``<system-reminder>`` (plan mode) injected as a user message
after the user's last real request.
"""

from __future__ import annotations

import json

import pytest

from kimi_compact_tui.compaction.plan import make_plan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.request import CompactionRequest, build_request
from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.compaction.tokens import estimate_tokens, message_tokens
from kimi_compact_tui.model import Message
from kimi_compact_tui.providers import ProviderConfig, StreamEvent, stream_summary
from kimi_compact_tui.providers.offline import offline_summary

PROMPT = PromptSource(
    "inline", None, "\n\n---\n\nSummarise the messages above in six sections.", "0" * 64
)

PYTEST_FAILURE = """\
============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0
rootdir: /work/shop
collected 4 items

tests/test_retry.py ..F.                                                 [100%]

=================================== FAILURES ===================================
___________________________ test_gives_up_after_max ____________________________

    def test_gives_up_after_max():
        policy = RetryPolicy(max_attempts=3)
>       result = policy.run(always_times_out)

tests/test_retry.py:27:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

Traceback (most recent call last):
  File "/work/shop/src/payments/retry.py", line 58, in run
    return self._finish(last_error)
  File "/work/shop/src/payments/retry.py", line 71, in _finish
    return last_error.value
AttributeError: 'TimeoutError' object has no attribute 'value'
=========================== short test summary info ============================
FAILED tests/test_retry.py::test_gives_up_after_max - AttributeError: 'TimeoutError' object has no attribute 'value'
========================= 1 failed, 3 passed in 0.14s ==========================
"""

RETRY_SOURCE = """\
import random
import time


class RetryExhausted(RuntimeError):
    \"\"\"Raised when every attempt failed.\"\"\"


class RetryPolicy:
    def __init__(self, max_attempts=3, base_delay=0.1):
        if max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        self.max_attempts = max_attempts
        self.base_delay = base_delay

    def run(self, call):
        last_error = None
        for attempt in range(self.max_attempts):
            try:
                return call()
            except TimeoutError as exc:
                last_error = exc
                time.sleep(self.base_delay * attempt)
        return self._finish(last_error)

    def _finish(self, last_error):
        if last_error is None:
            raise RetryExhausted("no attempt was made")
        return last_error.value
"""

GIT_DIFF = """\
diff --git a/src/payments/retry.py b/src/payments/retry.py
index 3b1f2c4..8d9e0a1 100644
--- a/src/payments/retry.py
+++ b/src/payments/retry.py
@@ -19,11 +19,11 @@ class RetryPolicy:
             try:
                 return call()
-            except TimeoutError as exc:
+            except (TimeoutError, ConnectionError) as exc:
                 last_error = exc
                 time.sleep(self.base_delay * attempt)
-        return self._finish(last_error)
+        raise RetryExhausted(f"{self.max_attempts} attempts failed") from last_error
-
-    def _finish(self, last_error):
-        if last_error is None:
-            raise RetryExhausted("no attempt was made")
-        return last_error.value
diff --git a/tests/test_retry.py b/tests/test_retry.py
index 1a2b3c4..5d6e7f8 100644
--- a/tests/test_retry.py
+++ b/tests/test_retry.py
@@ -25,4 +25,5 @@ def test_gives_up_after_max():
     policy = RetryPolicy(max_attempts=3)
-    result = policy.run(always_times_out)
+    with pytest.raises(RetryExhausted):
+        policy.run(always_times_out)
"""

PLAN_MODE_REMINDER = (
    "<system-reminder>\n"
    "Plan mode is active. You MUST NOT make any edits or run any non-readonly tools. "
    "First present a plan and wait for the user's approval.\n"
    "</system-reminder>"
)
LAST_REQUEST = (
    "Good. Now add jittered exponential backoff between attempts; "
    "the delay must never exceed 2 seconds."
)


def call(call_id: str, name: str, **arguments: object) -> dict:
    return {
        "type": "function",
        "id": call_id,
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def tool(call_id: str, note: str, output: str) -> Message:
    return Message.make(
        "tool",
        [{"type": "text", "text": f"<system>{note}</system>"}, {"type": "text", "text": output}],
        tool_call_id=call_id,
    )


def assistant(text: str, *calls: dict) -> Message:
    content = [
        {"type": "think", "think": "Working out the next step.", "encrypted": None},
        {"type": "text", "text": text},
    ]
    return Message.make("assistant", content, tool_calls=list(calls) or None)


def session_messages() -> list[Message]:
    return [
        Message.make(
            "user",
            "The payment retry test fails on main. Fix src/payments/retry.py and keep "
            "the public API of RetryPolicy unchanged.",
        ),
        assistant(
            "I'll run the failing test first.",
            call("Shell:0", "Shell", command="pytest -q tests/test_retry.py"),
        ),
        tool("Shell:0", "Command failed with exit code: 1.", PYTEST_FAILURE),
        assistant(
            "Let me read the retry module.",
            call("ReadFile:1", "ReadFile", path="src/payments/retry.py"),
        ),
        tool("ReadFile:1", "31 lines read from file starting from line 1.", RETRY_SOURCE),
        assistant(
            "The loop returns `last_error.value` after the last attempt instead of raising. "
            "I'll fix it by raising RetryExhausted from the last error.",
            call("StrReplaceFile:2", "StrReplaceFile", path="src/payments/retry.py"),
        ),
        tool("StrReplaceFile:2", "File successfully edited.", ""),
        assistant("Showing the change.", call("Shell:3", "Shell", command="git diff")),
        tool("Shell:3", "Command executed successfully.", GIT_DIFF),
        assistant("Running the tests again.", call("Shell:4", "Shell", command="pytest -q")),
        tool("Shell:4", "Command executed successfully.", "....\n4 passed in 0.11s\n"),
        assistant("Fixed: RetryPolicy.run now raises RetryExhausted. All 4 tests pass."),
        Message.make("user", LAST_REQUEST),
        Message.make("user", [{"type": "text", "text": PLAN_MODE_REMINDER}]),
        assistant(
            "Plan: compute the delay as min(2.0, base * 2**attempt) * random.uniform(0.5, 1)."
        ),
        Message.make("user", "Looks good, go ahead."),
        assistant("Implementing the backoff now."),
    ]


def realistic_request(messages: list[Message] | None = None) -> CompactionRequest:
    messages = session_messages() if messages is None else messages
    plan = make_plan(messages, max_preserved_messages=2)
    assert not plan.noop
    return build_request(messages, plan, PROMPT, {"settings_overrides": {}})


def summarize(request: CompactionRequest) -> str:
    return offline_summary(request)


SECTIONS = (
    "current_focus",
    "environment",
    "completed_tasks",
    "active_issues",
    "code_state",
    "important_context",
)


def section(text: str, name: str) -> str:
    return text[text.index(f"<{name}>") : text.index(f"</{name}>")]


def test_the_focus_is_the_latest_real_request_not_an_injected_reminder():
    text = summarize(realistic_request())
    focus = section(text, "current_focus")
    assert "jittered exponential backoff" in focus
    assert "Plan mode is active" not in focus
    assert "system-reminder" not in focus
    # Nor is the reminder taken for a constraint the user set.
    assert "MUST NOT make any edits" not in text


def test_a_user_message_with_a_real_request_and_a_reminder_keeps_the_request():
    messages = session_messages()
    messages[12] = Message.make(
        "user",
        [{"type": "text", "text": LAST_REQUEST}, {"type": "text", "text": PLAN_MODE_REMINDER}],
    )
    del messages[13]
    focus = section(summarize(realistic_request(messages)), "current_focus")
    assert "jittered exponential backoff" in focus
    assert "Plan mode is active" not in focus


def test_only_real_errors_are_active_issues():
    issues = section(summarize(realistic_request()), "active_issues")
    # The real failure, fixed by the edit and the test run that followed.
    assert "AttributeError: 'TimeoutError' object has no attribute 'value'" in issues
    # Code that merely mentions errors is not an error.
    assert "max_attempts must be >= 1" not in issues
    assert "class RetryExhausted(RuntimeError)" not in issues
    assert "except TimeoutError as exc" not in issues
    # Nor are the lines of a diff.
    assert "ConnectionError) as exc" not in issues
    assert "attempts failed" not in issues


def test_a_git_diff_names_each_file_once():
    text = summarize(realistic_request())
    assert "a/src/payments/retry.py" not in text
    assert "b/src/payments/retry.py" not in text
    assert "a/tests/test_retry.py" not in text
    assert "b/tests/test_retry.py" not in text
    assert "src/payments/retry.py" in section(text, "code_state")


def compact_range_tokens(messages: list[Message], request: CompactionRequest) -> int:
    return sum(message_tokens(messages[i]) for i in request.plan.compact_indices)


def test_the_summary_is_smaller_than_the_messages_it_replaces():
    messages = session_messages()
    request = realistic_request(messages)
    text = summarize(request)
    assert estimate_tokens(build_compact_summary_text(text)) + 4 <= compact_range_tokens(
        messages, request
    )


GREP_OUTPUT = "\n".join(
    f"src/payments/{name}.py:{line}:    except RetryError as exc:"
    for line, name in enumerate(
        (
            "cards",
            "wallets",
            "refunds",
            "payouts",
            "ledger",
            "fx",
            "fees",
            "disputes",
            "invoices",
            "webhooks",
            "settlement",
            "chargebacks",
        ),
        10,
    )
)


def short_busy_session() -> list[Message]:
    """Short turns full of file names and error output: the full extract (file list,
    errors with their fixes, facts) is longer than the messages themselves."""
    return [
        Message.make("user", "Rename RetryError to RetryExhausted everywhere; keep tests green."),
        assistant("Searching.", call("Shell:0", "Shell", command="grep -rn RetryError src")),
        tool("Shell:0", "Command executed successfully.", GREP_OUTPUT),
        assistant("Renamed in all twelve files.", call("Shell:1", "Shell", command="pytest -q")),
        tool(
            "Shell:1",
            "Command failed with exit code: 1.",
            "E   ImportError: cannot import name 'RetryError' from 'payments.retry'\n"
            "FAILED tests/test_fx.py::test_quote - ImportError: cannot import name",
        ),
        assistant("Fixed the import in tests/test_fx.py because it still used the old name."),
        tool("Shell:2", "Command executed successfully.", "41 passed in 0.90s"),
        Message.make("user", "Thanks."),
        assistant("OK."),
    ]


def test_grep_output_is_not_a_file_list_and_the_summary_fits():
    """The twelve files of a grep's output are lines of a tool's output, not files
    anyone named or touched: they are not listed, so the summary fits whole."""
    messages = short_busy_session()
    request = realistic_request(messages)
    text = summarize(request)
    assert estimate_tokens(build_compact_summary_text(text)) + 4 <= compact_range_tokens(
        messages, request
    )
    for name in SECTIONS:
        assert f"<{name}>" in text and f"</{name}>" in text
    assert "src/payments/wallets.py" not in text
    assert "RetryExhausted everywhere" in section(text, "current_focus")
    assert "ImportError: cannot import name 'RetryError'" in section(text, "active_issues")


TINY = [
    Message.make("user", "Run it."),
    assistant("Running.", call("Shell:0", "Shell", command="python app.py")),
    tool("Shell:0", "Command failed with exit code: 1.", "RuntimeError: boom"),
    assistant("Fixed."),
    Message.make("user", "ok"),
    assistant("OK."),
]


async def test_messages_shorter_than_any_summary_keep_the_key_facts_and_warn():
    request = realistic_request(TINY)
    text = summarize(request)
    for name in SECTIONS:
        assert f"<{name}>" in text and f"</{name}>" in text
    assert "Run it." in section(text, "current_focus")
    assert "RuntimeError: boom" in section(text, "active_issues")
    # said first, before anything else
    first = section(text, "current_focus").split("\n")[1]
    assert first.startswith("- Note: this summary") and "larger than the messages it" in first
    events: list[StreamEvent] = []
    result = await stream_summary(ProviderConfig(kind="offline"), request, events.append)
    assert result.summary == text
    notes = [e.text for e in events if e.kind == "status" and "larger than" in e.text]
    assert len(notes) == 1 and "would not make the session smaller" in notes[0]


async def test_no_size_note_when_the_summary_fits():
    events: list[StreamEvent] = []
    await stream_summary(ProviderConfig(kind="offline"), realistic_request(), events.append)
    assert not [e for e in events if "larger than" in e.text]


async def test_the_provider_streams_the_same_fixed_summary():
    request = realistic_request()
    result = await stream_summary(ProviderConfig(kind="offline"), request)
    assert result.status == "complete"
    assert result.summary == summarize(request)
    assert "Plan mode is active" not in section(result.summary, "current_focus")


@pytest.mark.parametrize("count", [1, 3])
def test_repeated_reminders_never_become_the_focus(count):
    messages = session_messages()
    for _ in range(count - 1):
        messages.insert(13, Message.make("user", PLAN_MODE_REMINDER))
    focus = section(summarize(realistic_request(messages)), "current_focus")
    assert "jittered exponential backoff" in focus


REAL_ERRORS = [
    (
        'error[E0308]: mismatched types\n --> src/main.rs:4:18\n  |\n4 |     let n: u32 = "4";\n',
        "error[E0308]: mismatched types",
    ),
    (
        "=== RUN   TestQuote\n--- FAIL: TestQuote (0.00s)\n    quote_test.go:12: got 3, want 4\n",
        "failing test TestQuote",
    ),
    (
        "..F\n========================= 1 failed, 2 passed in 0.05s =========================\n",
        "1 failed, 2 passed in 0.05s",
    ),
    (
        "TypeError: Cannot read properties of undefined (reading 'id')\n"
        "    at render (/app/src/view.js:14:22)\n",
        "TypeError: Cannot read properties of undefined (reading 'id')",
    ),
    ("npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\n", "npm ERR! code ELIFECYCLE"),
]
NOT_ERRORS = [
    RETRY_SOURCE,
    GIT_DIFF,
    "def parse(text):\n    try:\n        return int(text)\n    except ValueError as exc:\n"
    "        raise ParseError(text) from exc\n",
    "class ConfigError(Exception):\n    pass\n",
    "All checks passed: no errors, 0 failed.\n",
]


def errors_of_output(output: str) -> list[str]:
    """The errors the extractor finds in ``output`` as a tool's result."""
    from kimi_compact_tui.formats.kimi_cli.plugin import KimiCliFormat
    from kimi_compact_tui.specifics import extract

    messages = [
        assistant("Running it.", call("Shell:0", "Shell", command="make check")),
        tool("Shell:0", "Command executed.", output),
    ]
    found = extract(messages, range(2), KimiCliFormat().vocabulary())
    return [i.text for i in found.of("errors")]


@pytest.mark.parametrize(("output", "headline"), REAL_ERRORS)
def test_real_error_outputs_are_found(output, headline):
    assert errors_of_output(output) == [headline]


@pytest.mark.parametrize("output", NOT_ERRORS)
def test_code_and_diffs_are_not_errors(output):
    assert errors_of_output(output) == []


def test_a_checklist_in_prose_is_not_a_task():
    """A "still to do" in the person's or the agent's prose is not a plan item:
    only the agent's plan tool sets open tasks."""
    messages = [
        Message.make("user", "Set up the payments repository for the new retry module."),
        Message.make(
            "user",
            "Still to do after that: the follow-up migration for the ledger tables, which "
            "has to run before Friday's release and must keep the old column names.",
        ),
        assistant("Plan:\n- [ ] Write the migration\n- [x] Verify CI passes"),
        Message.make("user", "First, though, what Python version do we target?"),
        assistant("Python 3.12."),
    ]
    text = summarize(realistic_request(messages))
    issues = section(text, "active_issues")
    assert "Verify CI passes" not in section(text, "completed_tasks")
    assert "[pending]" not in issues and "[completed]" not in text
    # the request itself is kept verbatim, in order
    assert "Still to do after that: the follow-up migration" in section(text, "current_focus")

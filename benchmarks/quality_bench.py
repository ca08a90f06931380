"""Quality benchmark: what a summary keeps of the specifics that matter (issue 25).

One realistic scenario, written as each agent writes its session (Claude Code,
Codex, kimi-cli, and an OpenAI messages file): a long first request, the
agent's own bookkeeping, a plan set and then updated by the agent's plan tool
(one item finished, one in progress, one pending), a file written, a failing
test run fixed by a later run, a lint run still failing at the end, a standing
rule, and a short thanks. For each session it scores, by retention category:

- the offline provider's summary (what a new user sees first);
- a lossy model-style summary shipped here (:data:`MODEL_SUMMARY`): it tells the
  story in its own words, as models do, and loses the exact references;
- that summary after ``--anchor`` (the block of what it lost), and the block's
  size against its budget;
- an exhaustive but overconfident summary (:data:`OVERCONFIDENT_SUMMARY`): it
  calls the open plan items done and the failing lint run clean (misstated).

It also scores (issue 31), per category kept / misstated / missing, the offline
summary, a lossy model summary written for the session and that summary with
``--anchor``, on:

- the three long realistic sessions of :mod:`benchmarks.realistic` (a debugging
  session as Claude Code writes it, a refactor as Codex writes it, a session in
  Chinese as kimi-cli writes it), each with its own lossy summary;
- the agents' reference sessions (``../shared/reference/agents/``, written by
  the real agents against a fake model; skipped when absent), with the lossy
  summaries of :data:`REFERENCE_LOSSY`.

Run it::

    .venv/bin/python -m benchmarks.quality_bench          # the tables
    .venv/bin/python -m benchmarks.quality_bench --json   # the figures
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.realistic import REALISTIC
from kimi_compact_tui.compaction.tokens import estimate_tokens
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.providers.offline import offline_summary
from kimi_compact_tui.retention import CATEGORIES, retention_report
from kimi_compact_tui.retention.anchor import DEFAULT_ANCHOR_BUDGET, anchor

CONFIG = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})

TASK = (
    "The monthly revenue report in src/report.py double-counts refunds when a refund "
    "and its original charge fall in different months. Rework the aggregation so a "
    "refund is booked against the month of its charge, add a regression test in "
    "tests/test_report.py that covers a refund crossing a month boundary, and make "
    "sure the CSV export keeps its current column order because finance imports it "
    "into a spreadsheet with fixed formulas."
)
RULE = "Never touch the migrations folder; keep the CSV header order exactly as it is."
THANKS = "thanks"
PLAN_1 = [
    ("Rework the refund aggregation", "in_progress"),
    ("Add the month-boundary regression test", "pending"),
    ("Run the linters", "pending"),
]
PLAN_2 = [
    ("Rework the refund aggregation", "completed"),
    ("Add the month-boundary regression test", "in_progress"),
    ("Run the linters", "pending"),
]
REPORT_PY = "def monthly_totals(rows):\n    return aggregate(rows, by='charge_month')\n"
FAILED = (
    "FAILED tests/test_report.py::test_refund_crosses_month - AssertionError: 120 != 100\n"
    "1 failed, 7 passed in 0.31s"
)
PASSED = "8 passed in 0.29s"
LINT = "src/report.py:14:1: E302 expected 2 blank lines, found 1\nerror: lint failed, exit code 1"

# A model's summary of the same range, in its own words (as models write them):
# the story is right, the exact references are mostly gone.
MODEL_SUMMARY = """<current_focus>
Fixing how refunds are attributed in the monthly revenue report.
</current_focus>
<environment>
- Python project with a pytest suite.
</environment>
<completed_tasks>
- Reworked the refund aggregation in the report module.
- Tests pass now.
</completed_tasks>
<active_issues>
- Some lint warnings remain.
</active_issues>
<code_state>
- The report module aggregates by charge month.
</code_state>
<important_context>
- Finance relies on the CSV layout.
</important_context>
"""


# The same story told by an overconfident model: every request, the rule and
# the file word for word, but it calls the open plan items done and the failing
# lint run clean. Retention calls those items misstated (CRITICAL for the open
# tasks), and the score counts them against it.
OVERCONFIDENT_SUMMARY = f"""<current_focus>
The user asked: {TASK}
Rule from the user: {RULE}
</current_focus>
<completed_tasks>
- [completed] Rework the refund aggregation
- [completed] Add the month-boundary regression test
- [completed] Run the linters
- Wrote src/report.py; the whole suite passes now (8 passed).
- ruff check src: passed.
</completed_tasks>
"""


# ----------------------------------------------------------------------------- sessions


def claude_code(folder: Path) -> Path:
    from tests.factories import claude_code as cc

    t = cc.Transcript()
    cc.command_echo(t, "clear", "")
    t.user(TASK)
    t.assistant([cc.text("Planning."), cc.tool_use("t1", "TodoWrite", cc.todos(*PLAN_1))])
    t.result("t1", "Todos have been modified successfully.")
    write = {"file_path": "/work/project/src/report.py", "content": REPORT_PY}
    t.assistant([cc.tool_use("t2", "Write", write)])
    t.result("t2", "File created successfully.")
    t.assistant([cc.tool_use("t3", "Bash", {"command": "pytest -q tests/test_report.py"})])
    t.result("t3", FAILED, is_error=True)
    t.user(f"{RULE}<system-reminder>The todo list changed.</system-reminder>")
    t.assistant([cc.tool_use("t4", "Bash", {"command": "pytest -q"})])
    t.result("t4", PASSED)
    t.assistant([cc.tool_use("t5", "TodoWrite", cc.todos(*PLAN_2))])
    t.result("t5", "Todos have been modified successfully.")
    t.assistant([cc.tool_use("t6", "Bash", {"command": "ruff check src"})])
    t.result("t6", LINT, is_error=True)
    t.assistant([cc.text("Next steps:\n- [ ] Fix lint\n- [ ] Ship it")])
    t.user(THANKS)
    t.assistant([cc.text("You're welcome.")])
    cc.command_echo(t, "compact", "Compacted")
    return t.write(folder)


def codex(folder: Path) -> Path:
    from tests.factories.codex import Rollout, text_item

    r = Rollout()
    r.event("task_started", turn_id="turn-1")
    r.item(text_item("user", TASK))

    def call(name: str, args: Any, output: str, custom: bool = False) -> None:
        r.calls += 1
        cid = f"call_{r.calls}"
        if custom:
            r.item({"type": "custom_tool_call", "name": name, "input": args, "call_id": cid})
            r.item({"type": "custom_tool_call_output", "call_id": cid, "output": output})
        else:
            r.item(
                {
                    "type": "function_call",
                    "name": name,
                    "arguments": json.dumps(args),
                    "call_id": cid,
                }
            )
            r.item({"type": "function_call_output", "call_id": cid, "output": output})

    def plan(items: list[tuple[str, str]]) -> dict[str, Any]:
        return {"plan": [{"step": s, "status": st} for s, st in items]}

    call("update_plan", plan(PLAN_1), "Plan updated")
    patch = "*** Begin Patch\n*** Add File: src/report.py\n+" + REPORT_PY.replace("\n", "\n+")
    call("apply_patch", patch + "\n*** End Patch\n", "Success.", custom=True)
    call("exec_command", {"cmd": "pytest -q tests/test_report.py"}, FAILED + "\nexit code 1")
    r.item(text_item("assistant", "The boundary test fails; fixing it."))
    r.event("task_complete", turn_id="turn-1")
    r.event("task_started", turn_id="turn-2")
    r.item(text_item("user", RULE))
    call("exec_command", {"cmd": "pytest -q"}, PASSED + "\nexit code 0")
    call("update_plan", plan(PLAN_2), "Plan updated")
    call("exec_command", {"cmd": "ruff check src"}, LINT)
    r.item(text_item("assistant", "Next steps:\n- [ ] Fix lint\n- [ ] Ship it"))
    r.event("task_complete", turn_id="turn-2")
    r.event("task_started", turn_id="turn-3")
    r.item(text_item("user", THANKS))
    r.item(text_item("assistant", "You're welcome."))
    r.event("task_complete", turn_id="turn-3")
    return r.write(folder)


def _call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def _messages(
    shell: str, write: str, plan_tool: str, title: str, note: str
) -> list[dict[str, Any]]:
    def plan(items: list[tuple[str, str]]) -> dict[str, Any]:
        return {"todos": [{title: t, "status": s.replace("completed", "done")} for t, s in items]}

    def tool(cid: str, text: str) -> dict[str, Any]:
        return {"role": "tool", "content": text, "tool_call_id": cid}

    def assistant(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            out["tool_calls"] = list(calls)
        return out

    return [
        {"role": "user", "content": TASK},
        assistant("Planning.", _call("c1", plan_tool, plan(PLAN_1))),
        tool("c1", "Todo list updated"),
        assistant("", _call("c2", write, {"path": "src/report.py", "content": REPORT_PY})),
        tool("c2", "Wrote src/report.py"),
        assistant("", _call("c3", shell, {"command": "pytest -q tests/test_report.py"})),
        tool("c3", f"<system>ERROR: Command failed with exit code: 1.</system>\n{FAILED}"),
        {"role": "user", "content": note},
        {"role": "user", "content": RULE},
        assistant("", _call("c4", shell, {"command": "pytest -q"})),
        tool("c4", PASSED),
        assistant("", _call("c5", plan_tool, plan(PLAN_2))),
        tool("c5", "Todo list updated"),
        assistant("", _call("c6", shell, {"command": "ruff check src"})),
        tool("c6", LINT),
        assistant("Next steps:\n- [ ] Fix lint\n- [ ] Ship it"),
        {"role": "user", "content": THANKS},
        assistant("You're welcome."),
    ]


def kimi_cli(folder: Path) -> Path:
    session = folder / "kimi-session"
    session.mkdir(parents=True)
    lines = [{"role": "_system_prompt", "content": "You are kimi."}]
    lines += _messages(
        "Shell", "WriteFile", "SetTodoList", "title", "<system>Plan mode is off.</system>"
    )
    path = session / "context.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return session


def openai(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "chat.jsonl"
    messages = _messages(
        "Bash", "Write", "SetTodoList", "title", "<system-reminder>Be brief.</system-reminder>"
    )
    path.write_text("".join(json.dumps(x) + "\n" for x in messages), encoding="utf-8")
    return path


SESSIONS: dict[str, Callable[[Path], Path]] = {
    "claude-code": claude_code,
    "codex": codex,
    "kimi-cli": kimi_cli,
    "openai": openai,
}


# ----------------------------------------------------------------------------- scoring


def score(path: Path, summaries: dict[str, str] | None = None) -> dict[str, Any]:
    """Retention by category of the offline summary and of :data:`MODEL_SUMMARY`
    (or of ``summaries``: name → text) for the session at ``path``."""
    session = load_session(path)
    prep = prepare_compaction(session, CONFIG)
    assert prep.request is not None, prep.plan.noop
    texts = dict(
        summaries
        or {
            "offline": offline_summary(prep.request),
            "model": MODEL_SUMMARY,
            "overconfident": OVERCONFIDENT_SUMMARY,
        }
    )
    out: dict[str, Any] = {"compacted": len(prep.plan.compact_indices)}
    if summaries is None:  # the model summary with --anchor's block, and the block's size
        anchored = anchor(retention_report(session, prep.plan, MODEL_SUMMARY), MODEL_SUMMARY)
        texts["model+anchor"] = anchored.text
        out["anchor"] = {
            "tokens": estimate_tokens(anchored.block),
            "budget": DEFAULT_ANCHOR_BUDGET,
            "left_out": len(anchored.left_out),
        }
    for name, text in texts.items():
        report = retention_report(session, prep.plan, text)
        out[name] = {
            "categories": {c: list(report.figures()[c]) for c in CATEGORIES},
            "misstated": {c: len(report.categories[c].misstated) for c in CATEGORIES},
            "score": round(report.score(), 1),
            "critical": report.critical_line(),
            "missing": {
                c: [i.text[:80] for i in cat.missing]
                for c, cat in report.categories.items()
                if cat.missing
                and c in ("user_requests", "instructions", "open_tasks", "edited_files")
            },
        }
    return out


def bench_quality() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        return {name: score(make(Path(tmp) / name)) for name, make in SESSIONS.items()}


def table(results: dict[str, Any]) -> str:
    head = ["session", "summary", *CATEGORIES, "score"]
    rows = [head]
    for name, result in results.items():
        for kind in ("offline", "model", "model+anchor", "overconfident"):
            if kind not in result:
                continue
            cats, wrong = result[kind]["categories"], result[kind]["misstated"]
            cells = []
            for c in CATEGORIES:
                k, t = cats[c]
                cells.append((f"{k}/{t}" + (f" !{wrong[c]}" if wrong[c] else "")) if t else "-")
            rows.append([name, kind, *cells, f"{result[kind]['score']:.0f}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


# ----------------------------------------------------------------------------- issue 31


def _reference() -> Path:
    """../shared/reference beside the checkout (or beside the folder of worktrees
    it is in), or $KIMI_COMPACT_TUI_REFERENCE."""
    if os.environ.get("KIMI_COMPACT_TUI_REFERENCE"):
        return Path(os.environ["KIMI_COMPACT_TUI_REFERENCE"])
    here = Path(__file__).resolve()
    places = [here.parents[n] / "shared" / "reference" for n in (2, 3)]
    return next((p for p in places if p.is_dir()), places[0])


#: The agents' reference sessions: the session each is read from, and a lossy
#: summary of it written here. Gemini CLI's "before" file holds no message, so
#: its "after" file (the agent's own summary, then two turns) is the one scored.
REFERENCE = _reference()
REFERENCE_LOSSY: dict[str, tuple[str, str]] = {
    "claude-code (reference)": (
        "claude-session-before-compact.jsonl",
        "The user greeted the assistant and the assistant answered.\n",
    ),
    "codex (reference)": (
        "codex-session-before-compact.jsonl",
        "The user greeted the assistant, which answered twice.\n",
    ),
    "opencode (reference)": (
        "opencode-before-compact.db",
        "The user asked to list things and ran `echo MARK-T1`; then asked a sum (4).\n",
    ),
    "gemini-cli (reference)": (
        "gemini-session-after-compress.jsonl",
        "An earlier summary said the user greeted the assistant.\n",
    ),
}
KINDS = ("offline", "lossy", "lossy+anchor")


def verdicts(path: Path, lossy: str) -> dict[str, Any]:
    """Per category kept / misstated / missing of the offline summary, ``lossy``
    and ``lossy`` with ``--anchor``'s block, for the session at ``path``."""
    session = load_session(path)
    prep = prepare_compaction(session, CONFIG)
    out: dict[str, Any] = {"messages": len(session.messages)}
    if prep.request is None:
        out["noop"] = prep.plan.noop
        return out
    out["compacted"] = len(prep.plan.compact_indices)
    anchored = anchor(retention_report(session, prep.plan, lossy), lossy)
    texts = {"offline": offline_summary(prep.request), "lossy": lossy}
    texts["lossy+anchor"] = anchored.text
    for kind, text in texts.items():
        report = retention_report(session, prep.plan, text)
        cats = report.categories
        out[kind] = {
            "categories": {
                c: [len(cats[c].kept), len(cats[c].misstated), len(cats[c].missing)]
                for c in CATEGORIES
            },
            "critical": report.critical_line(),
            "misstated": [
                f"[{m.item.category}] {m.item.text[:60]}: {m.describe()}"
                for m in report.misstated_items()
            ],
            "score": round(report.score(), 1),
        }
    out["anchor"] = {"tokens": estimate_tokens(anchored.block), "left_out": len(anchored.left_out)}
    return out


def bench_realistic() -> dict[str, Any]:
    """:func:`verdicts` of each session of :mod:`benchmarks.realistic`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for name, (agent, make, lossy) in REALISTIC.items():
            out[f"{name} ({agent})"] = verdicts(make(Path(tmp) / name), lossy)
        return out


def bench_reference() -> dict[str, Any]:
    """:func:`verdicts` of each reference session that is here."""
    out = {}
    for name, (file, lossy) in REFERENCE_LOSSY.items():
        path = REFERENCE / "agents" / file
        if path.exists():
            out[name] = verdicts(path, lossy)
    return out


def verdict_table(results: dict[str, Any]) -> str:
    """A markdown table: per category kept/misstated/missing (``-``: empty)."""
    head = ["session", "summary", *CATEGORIES, "critical"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, result in results.items():
        if "noop" in result:
            rows.append(f"| {name} | (nothing to compact) |" + " |" * (len(head) - 2))
            continue
        for kind in KINDS:
            r = result[kind]
            cells = [
                "-" if not sum(r["categories"][c]) else "/".join(map(str, r["categories"][c]))
                for c in CATEGORIES
            ]
            crit = "**CRITICAL**" if r["critical"] else "no"
            rows.append("| " + " | ".join([name, kind, *cells, crit]) + " |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    results = bench_quality()
    realistic, reference = bench_realistic(), bench_reference()
    if "--json" in argv:
        both = {"scenarios": results, "realistic": realistic, "reference": reference}
        print(json.dumps(both, indent=2, ensure_ascii=False))
        return 0
    print(table(results))
    print("(k/t: kept of total; !n: n misstated; score: (kept - misstated) / total, %)")
    for name, result in results.items():
        a = result["anchor"]
        print(f"{name}: anchor block {a['tokens']}/{a['budget']} tokens, {a['left_out']} left out")
    print("\nkept/misstated/missing:\n")
    print(verdict_table({**realistic, **reference}))
    for name, result in {**realistic, **reference}.items():
        for kind in KINDS:
            for line in result.get(kind, {}).get("misstated", []):
                print(f"{name} {kind}: misstated {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

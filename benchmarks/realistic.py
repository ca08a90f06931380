"""Three long, realistic coding sessions for the quality benchmark (issue 31).

Each is written as its agent writes it (through ``tests/factories``), and each
comes with a lossy summary of the kind a model writes (``LOSSY``): the story in
its own words, with the errors models make.

* ``debug`` (Claude Code): a flaky retry worker. A long first request with typos
  whose point is its last sentence, a TodoWrite plan, exploratory reads, a
  failing test, an edit the user rejects (``is_error``, "was NOT written") and
  Claude Code's ``[Request interrupted by user for tool use]``, a fix in another
  file, a timeout raised "from 30s to 90s", successes without an exit code, a
  ``mypy`` run still failing at the end, a Grafana URL.
* ``refactor`` (Codex): a config loader split into stages. The user asks for a
  design first, rejects the first one (a global registry), gives standing rules
  and accepts the second; ``update_plan``, ``apply_patch``, ``go test`` whose
  exit arrives in a later ``write_stdin`` poll, a failing test fixed, ``go vet``
  whose only output is its exit, figures with units, an issue URL.
* ``chinese`` (kimi-cli): a slow order export, every request in Chinese (with a
  homophone typo), ``SetTodoList``, commands whose results are kimi-cli's
  ``<system>Command executed successfully.</system>``, a write the user rejects
  (``<system>ERROR``), a standing rule (以后…都要…), seconds and megabytes, a wiki URL.

The lossy summaries call an open task done, state a failing command as passed or
a rejected write as written, paraphrase a request and drop its point, forget a
file and a rule, and change a number: what retention must catch.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

# ----------------------------------------------------------------------------- debug

DEBUG_TASK = (
    "so the retry worker in our webhook service has been flaky since tuesdays deploy. "
    "sometimes a delivery goes out twice and sometimes the worker just hangs untill the pod "
    "gets killed by the liveness probe. p99 delivery latency went from about 180 ms to 2.4 s "
    "on the dashboard (https://grafana.internal.example.com/d/webhooks-latency), and support "
    "has two tickets from partners who got the same invoice.paid event twice. the retry logic "
    "is in src/webhooks/retry.py, the worker loop in src/webhooks/worker.py and the tests in "
    "tests/test_retry.py. find the root cause and fix it, but do not change the signature of "
    "schedule_retry because the billing service imports it directly."
)
DEBUG_REJECT = (
    "no, stop - that edit changes schedule_retry's signature, which is exactly what I said "
    "not to do. keep retry.py's public functions as they are and take the lease in the worker "
    "instead."
)
DEBUG_TIMEOUT = (
    "nice, that explains the duplicates. while you are at it raise the partner http timeout "
    "from 30s to 90s in config/webhooks.yaml, two of the partner endpoints are just slow"
)
DEBUG_RULE = "Never run the integration tests against the shared staging queue, they page on-call."
DEBUG_LATER = "ok leave the mypy error for now, I want to look at it myself after lunch"
DEBUG_PLAN_1 = [
    ("Reproduce the duplicate delivery in a test", "in_progress"),
    ("Find the root cause in the retry path", "pending"),
    ("Fix it without changing schedule_retry's signature", "pending"),
    ("Run the full test suite and the type checker", "pending"),
]
DEBUG_PLAN_2 = [
    ("Reproduce the duplicate delivery in a test", "completed"),
    ("Find the root cause in the retry path", "completed"),
    ("Fix it without changing schedule_retry's signature", "completed"),
    ("Run the full test suite and the type checker", "in_progress"),
    ("Write the incident note in docs/incidents/2026-11-webhooks.md", "pending"),
]

_RETRY_PY = '''"""Retry scheduling for webhook deliveries."""
from datetime import timedelta

from .backoff import next_delay
from .store import DeliveryStore

LEASE = timedelta(seconds=30)


def schedule_retry(store: DeliveryStore, delivery_id: str, attempt: int) -> None:
    delay = next_delay(attempt)
    store.requeue(delivery_id, after=delay)


def claim(store: DeliveryStore, worker: str):
    return store.claim_next(worker, lease=LEASE)
'''
_WORKER_PY = '''"""The delivery worker loop."""
import httpx

from .retry import claim, schedule_retry

TIMEOUT = 30.0


def run_once(store, worker: str, client: httpx.Client) -> bool:
    delivery = claim(store, worker)
    if delivery is None:
        return False
    try:
        client.post(delivery.url, json=delivery.payload, timeout=TIMEOUT)
    except httpx.HTTPError:
        schedule_retry(store, delivery.id, delivery.attempt + 1)
        return True
    store.mark_delivered(delivery.id)
    return True
'''
_BACKOFF_PY = """def next_delay(attempt: int) -> float:
    return min(2 ** attempt, 600)
"""
_STORE_PY = """class DeliveryStore:
    def claim_next(self, worker, lease):
        row = self.db.execute(CLAIM_SQL, (worker, lease.total_seconds())).fetchone()
        return Delivery.from_row(row) if row else None

    def requeue(self, delivery_id, after):
        self.db.execute(REQUEUE_SQL, (after, delivery_id))
"""
_TEST_PY = """def test_retry_backs_off(store):
    schedule_retry(store, "d1", 3)
    assert store.row("d1").not_before == 8


def test_retry_is_idempotent(store, slow_partner):
    run_twice_in_parallel(store, slow_partner, seconds=31)
    assert slow_partner.deliveries == 1
"""
_YAML = "partners:\n  http_timeout: 30s\n  max_attempts: 12\nqueue:\n  lease: 30s\n"
_WORKER_FIXED = _WORKER_PY.replace(
    "    try:\n        client.post",
    "    lease = store.extend_lease(delivery.id, until=TIMEOUT + 15)\n"
    "    try:\n        lease.renew()\n        client.post",
)


def debug(folder: Path) -> Path:
    from tests.factories import claude_code as cc

    t = cc.Transcript(cwd="/home/dev/webhooks")
    n = iter(range(1, 1000))

    def call(name: str, args: dict[str, Any], out: str, is_error: bool = False) -> None:
        cid = f"toolu_{next(n):03d}"
        t.assistant([cc.tool_use(cid, name, args)])
        t.result(cid, out, is_error=is_error)

    def read(path: str, body: str) -> None:
        numbered = "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(body.split("\n"), 1))
        call("Read", {"file_path": f"/home/dev/webhooks/{path}"}, numbered)

    t.user(DEBUG_TASK)
    t.assistant([cc.thinking("Two symptoms: duplicates and hangs. Probably the lease.")])
    call("TodoWrite", cc.todos(*DEBUG_PLAN_1), "Todos have been modified successfully.")
    read("src/webhooks/retry.py", _RETRY_PY)
    read("src/webhooks/worker.py", _WORKER_PY)
    read("src/webhooks/backoff.py", _BACKOFF_PY)
    read("src/webhooks/store.py", _STORE_PY)
    read("tests/test_retry.py", _TEST_PY)
    read("config/webhooks.yaml", _YAML)
    call(
        "Grep",
        {"pattern": "schedule_retry", "path": "/home/dev/webhooks"},
        "Found 4 files\nsrc/webhooks/retry.py\nsrc/webhooks/worker.py\n"
        "tests/test_retry.py\nvendor/billing_client/hooks.py",
    )
    call(
        "Bash",
        {"command": "git log --oneline -5 -- src/webhooks"},
        "9c1e2f4 Shorter lease for faster redelivery\n77ab013 Retry on 5xx only\n"
        "e02d9aa Batch requeue\n4410b7c Worker metrics\n1be88c2 Initial webhooks service",
    )
    call(
        "Bash",
        {"command": "git show 9c1e2f4 --stat"},
        "commit 9c1e2f4\n    Shorter lease for faster redelivery\n\n"
        " src/webhooks/retry.py | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)",
    )
    t.assistant(
        [
            cc.text(
                "Found it. Tuesday's commit 9c1e2f4 cut the lease from 120 s to 30 s, the same "
                "as the partner HTTP timeout. A partner that answers in 30 s or more lets the "
                "lease lapse mid-request, a second worker claims the same delivery and posts "
                "it again; when both then requeue, the store's row lock makes one of them wait "
                "forever. That is both the duplicates and the hangs."
            )
        ]
    )
    call(
        "Bash",
        {"command": "pytest -q tests/test_retry.py"},
        "F.........\n"
        "FAILED tests/test_retry.py::test_retry_is_idempotent - AssertionError: "
        "assert 2 == 1\n1 failed, 9 passed in 0.84s",
        is_error=True,
    )
    edit = {
        "file_path": "/home/dev/webhooks/src/webhooks/retry.py",
        "old_string": "def schedule_retry(store: DeliveryStore, delivery_id: str, attempt: int)",
        "new_string": "def schedule_retry(store: DeliveryStore, delivery: Delivery, lease: Lease)",
    }
    call(
        "Edit",
        edit,
        "The user doesn't want to proceed with this tool use. The tool use was rejected "
        "(eg. if it was a file edit, the new_string was NOT written to the file). "
        "STOP what you are doing and wait for the user to tell you how to proceed.",
        is_error=True,
    )
    t.user([cc.text("[Request interrupted by user for tool use]")])
    t.user(DEBUG_REJECT)
    t.assistant([cc.text("Understood: retry.py stays as it is; the worker extends the lease.")])
    fix = {
        "file_path": "/home/dev/webhooks/src/webhooks/worker.py",
        "old_string": "    try:\n        client.post",
        "new_string": "    lease = store.extend_lease(delivery.id, until=TIMEOUT + 15)\n"
        "    try:\n        lease.renew()\n        client.post",
    }
    call(
        "Edit",
        fix,
        "The file /home/dev/webhooks/src/webhooks/worker.py has been updated successfully.",
    )
    read("src/webhooks/worker.py", _WORKER_FIXED)
    call("Bash", {"command": "pytest -q tests/test_retry.py"}, "..........\n10 passed in 0.91s")
    t.assistant([cc.text("The idempotency test passes now: one delivery, not two.")])
    t.user(DEBUG_TIMEOUT)
    call(
        "Edit",
        {
            "file_path": "/home/dev/webhooks/config/webhooks.yaml",
            "old_string": "  http_timeout: 30s",
            "new_string": "  http_timeout: 90s",
        },
        "The file /home/dev/webhooks/config/webhooks.yaml has been updated successfully.",
    )
    t.user(DEBUG_RULE)
    t.assistant([cc.text("Noted: unit tests only, never the staging queue.")])
    call("TodoWrite", cc.todos(*DEBUG_PLAN_2), "Todos have been modified successfully.")
    call(
        "Bash",
        {"command": "pytest -q -m 'not integration'"},
        "214 passed, 3 deselected in 38.52s",
    )
    call("Bash", {"command": "ruff check src tests"}, "All checks passed!")
    call(
        "Bash",
        {"command": "mypy src"},
        'src/webhooks/worker.py:14: error: Item "None" of "Lease | None" has no attribute '
        '"renew"  [union-attr]\nFound 1 error in 1 file (checked 42 source files)',
        is_error=True,
    )
    t.assistant(
        [
            cc.text(
                "The suite passes (214 passed in 38.52s) and ruff is clean, but mypy still "
                "fails: extend_lease can return None when the row was already delivered. Next "
                "step: guard the lease before renew(), then write the incident note."
            )
        ]
    )
    t.user(DEBUG_LATER)
    t.assistant([cc.text("Fine, I'll leave worker.py:14 as it is.")])
    t.user("thanks")
    t.assistant([cc.text("You're welcome.")])
    return t.write(folder)


DEBUG_LOSSY = """<current_focus>
The user reported that the webhook retry worker sends duplicate deliveries and sometimes
hangs since a recent deploy, and asked to find the root cause and fix it.
</current_focus>
<completed_tasks>
- Found the cause: a recent commit shortened the delivery lease to match the HTTP timeout.
- Edited src/webhooks/retry.py and src/webhooks/worker.py so the worker extends the lease.
- Raised the partner timeout to 60 s.
- Ran the full test suite and the type checker: all green, mypy passed.
</completed_tasks>
<active_issues>
- None.
</active_issues>
<important_context>
- The billing service depends on the retry module.
</important_context>
"""

# ----------------------------------------------------------------------------- refactor

REFACTOR_TASK = (
    "internal/config/loader.go has grown to about 1,400 lines and Load() does parsing, env "
    "overrides, defaults and validation in one function, which is why every config bug takes "
    "a day to find (see https://github.com/example/deployctl/issues/212 for the last one). I "
    "want it split into seperate stages that can be tested on their own, with the existing "
    "behaviour unchanged, including the order in which env vars override the file. Before "
    "you write any code, propose a design and wait for me to approve it."
)
REFACTOR_REJECT = (
    "no, not a registry. no global state and no init() side effects, I have been burned by "
    "that in this codebase before. try again with plain functions composed in Load()."
)
REFACTOR_RULES = (
    "Also two rules for the rest of this work: always run go vet ./... before you tell me "
    "something is done, and never touch anything under vendor/."
)
REFACTOR_ACCEPT = "yes, B is what I want. go ahead, one stage at a time."
REFACTOR_PLAN_1 = [
    ("Extract the parse stage into parse.go", "in_progress"),
    ("Extract env overrides into env.go", "pending"),
    ("Extract defaults and validation", "pending"),
    ("Run go test and go vet on the whole module", "pending"),
]
REFACTOR_PLAN_2 = [
    ("Extract the parse stage into parse.go", "completed"),
    ("Extract env overrides into env.go", "completed"),
    ("Extract defaults and validation", "in_progress"),
    ("Run go test and go vet on the whole module", "pending"),
]
_LOADER_GO = """package config

func Load(path string) (*Config, error) {
\traw, err := os.ReadFile(path)
\tif err != nil {
\t\treturn nil, fmt.Errorf("read %s: %w", path, err)
\t}
\tvar cfg Config
\tif err := yaml.Unmarshal(raw, &cfg); err != nil {
\t\treturn nil, err
\t}
\tif v := os.Getenv("DEPLOYCTL_PORT"); v != "" {
\t\tcfg.Port, _ = strconv.Atoi(v)
\t}
\t// ... 1,380 more lines of overrides, defaults and checks
\treturn &cfg, nil
}
"""


def refactor(folder: Path) -> Path:
    from tests.factories.codex import Rollout, text_item

    r = Rollout()
    turn = iter(range(1, 100))

    def start() -> str:
        tid = f"turn-{next(turn)}"
        r.event("task_started", turn_id=tid)
        r.add("turn_context", {"turn_id": tid, "model": "gpt-5-codex"})
        return tid

    def say(role: str, text: str) -> None:
        r.item(text_item(role, text))

    def run(cmd: str, output: str) -> str:
        r.calls += 1
        cid = f"call_{r.calls}"
        args = json.dumps({"cmd": cmd, "workdir": "/home/dev/deployctl"})
        r.item({"type": "function_call", "name": "exec_command", "arguments": args, "call_id": cid})
        r.item({"type": "function_call_output", "call_id": cid, "output": output})
        return cid

    def poll(session: int, output: str) -> None:
        r.calls += 1
        cid = f"call_{r.calls}"
        args = json.dumps({"session_id": session, "chars": ""})
        r.item({"type": "function_call", "name": "write_stdin", "arguments": args, "call_id": cid})
        r.item({"type": "function_call_output", "call_id": cid, "output": output})

    def patch(body: str) -> None:
        r.calls += 1
        cid = f"call_{r.calls}"
        r.item({"type": "custom_tool_call", "name": "apply_patch", "input": body, "call_id": cid})
        out = json.dumps({"output": "Success. Updated the following files.", "metadata": {}})
        r.item({"type": "custom_tool_call_output", "call_id": cid, "output": out})

    def plan(items: list[tuple[str, str]]) -> None:
        r.calls += 1
        cid = f"call_{r.calls}"
        args = json.dumps({"plan": [{"step": s, "status": st} for s, st in items]})
        r.item({"type": "function_call", "name": "update_plan", "arguments": args, "call_id": cid})
        r.item({"type": "function_call_output", "call_id": cid, "output": "Plan updated"})

    def harness(body: str, code: int = 0) -> str:
        return (
            f"Chunk ID: 4f1a\nWall time: 0.{code + 3}12 seconds\n"
            f"Process exited with code {code}\nOriginal token count: 211\nOutput:\n{body}"
        )

    tid = start()
    say("user", REFACTOR_TASK)
    run("wc -l internal/config/*.go", harness("  1412 internal/config/loader.go\n  1412 total"))
    run("sed -n 1,200p internal/config/loader.go", harness(_LOADER_GO))
    run("sed -n 200,400p internal/config/loader.go", harness(_LOADER_GO.replace("1,380", "1,180")))
    run(
        "rg -n 'os.Getenv' internal/config",
        harness(
            'internal/config/loader.go:12:\tif v := os.Getenv("DEPLOYCTL_PORT"); v != "" {\n'
            'internal/config/loader.go:231:\tif v := os.Getenv("DEPLOYCTL_REGION"); v != "" {'
        ),
    )
    run(
        "rg -n 'func Test' internal/config",
        harness("internal/config/loader_test.go:9:func TestLoad"),
    )
    say(
        "assistant",
        "Design A: a Stage interface and a package-level registry; each stage file registers "
        "itself in init(), and Load() runs the registered stages in order of their priority.",
    )
    r.event("task_complete", turn_id=tid)

    tid = start()
    say("user", REFACTOR_REJECT)
    say(
        "assistant",
        "Design B: four plain functions of the same shape, func(*Config) error: parseFile, "
        "applyEnv, applyDefaults and validate, called in that order by Load(); no package "
        "state, each stage tested on its own with a table of cases.",
    )
    r.event("task_complete", turn_id=tid)

    tid = start()
    say("user", REFACTOR_RULES)
    say("assistant", "Understood: go vet before I call anything done, and vendor/ stays untouched.")
    r.event("task_complete", turn_id=tid)

    tid = start()
    say("user", REFACTOR_ACCEPT)
    plan(REFACTOR_PLAN_1)
    patch(
        "*** Begin Patch\n*** Add File: internal/config/parse.go\n+package config\n+\n"
        "+func parseFile(path string, cfg *Config) error {\n+\treturn readYAML(path, cfg)\n+}\n"
        "*** Update File: internal/config/loader.go\n@@\n-\traw, err := os.ReadFile(path)\n"
        "+\tif err := parseFile(path, &cfg); err != nil {\n*** End Patch\n"
    )
    running = "Chunk ID: 9b20\nWall time: 10.0 seconds\nProcess running with session ID 7\n"
    run("go test ./internal/config/...", running + "Original token count: 0\nOutput:\n")
    poll(
        7,
        harness("ok  \texample.com/deployctl/internal/config\t1.204s"),
    )
    patch(
        "*** Begin Patch\n*** Add File: internal/config/env.go\n+package config\n+\n"
        "+func applyEnv(cfg *Config) error {\n+\treturn overrideFromEnv(cfg, os.LookupEnv)\n+}\n"
        "*** End Patch\n"
    )
    run(
        "go test ./internal/config/...",
        harness(
            "--- FAIL: TestEnvOverridesPort (0.00s)\n    env_test.go:41: port = 8080, want 9090\n"
            "FAIL\nFAIL\texample.com/deployctl/internal/config\t0.981s",
            1,
        ),
    )
    say(
        "assistant",
        "applyEnv ran before parseFile in the new Load(), so the file's port 8080 overrode "
        "DEPLOYCTL_PORT=9090. Env must come after the file, as before.",
    )
    patch(
        "*** Begin Patch\n*** Update File: internal/config/loader.go\n@@\n"
        "-\tfor _, stage := range []func(*Config) error{applyEnv, parse} {\n"
        "+\tfor _, stage := range []func(*Config) error{parse, applyEnv} {\n*** End Patch\n"
    )
    run(
        "go test ./internal/config/...",
        harness("ok  \texample.com/deployctl/internal/config\t1.187s"),
    )
    plan(REFACTOR_PLAN_2)
    run("go vet ./...", harness(""))
    run(
        "go test -run xxx -bench BenchmarkLoad ./internal/config/",
        harness("BenchmarkLoad-8   \t    2911\t    398 µs/op\nPASS"),
    )
    say(
        "assistant",
        "parse.go and env.go are in; Load() is down to 41 lines and BenchmarkLoad went from "
        "412 µs to 398 µs per op. go vet is clean. Next step: applyDefaults and validate.",
    )
    r.event("task_complete", turn_id=tid)

    tid = start()
    say("user", "good. carry on with the defaults stage")
    say("assistant", "Starting on applyDefaults in defaults.go.")
    r.event("task_complete", turn_id=tid)
    return r.write(folder)


REFACTOR_LOSSY = """## Summary
The user wanted the oversized config loader split into separately testable stages.

## Design
We went with a registry of stages that each register themselves in init(); Load() runs
them in order.

## Progress
- [x] Extract the parse stage into parse.go
- [x] Extract env overrides into env.go
- [x] Extract defaults and validation
- Fixed an ordering bug where env overrides ran before the file was parsed.
- go test ./internal/config/... passes.

## Notes
- Run go vet before calling things done.
"""

# ----------------------------------------------------------------------------- chinese

ZH_TASK = (
    "订单导出接口现在太慢了，导出一个月的订单要 45 秒左右，运营那边经常超时，网关的超时是 30 秒。"
    "代码在 app/export/orders.py，SQL 在 app/export/queries.sql。"
    "先帮我找出慢在那里，先别急着改代码。最重要的是：导出的 CSV 列顺序不能变，财务的模板是按列号读的。"
)
ZH_REJECT = (
    "不要用 ORM 的 prefetch_related，我们这个版本的 prefetch 有内存泄漏，直接写一条 JOIN 的 SQL。"
)
ZH_RULE = "以后所有导出查询都必须加上 LIMIT 保护，单次最多 50000 行。"
ZH_NEXT = "好的，顺便把导出的进度写到日志里，格式参考 https://wiki.example.cn/ops/export-logging 这个页面。"
ZH_PLAN_1 = [
    ("定位导出慢的原因", "in_progress"),
    ("用一条 JOIN 查询替换逐行查询", "pending"),
    ("确认 CSV 列顺序不变", "pending"),
    ("跑完整的导出测试", "pending"),
]
ZH_PLAN_2 = [
    ("定位导出慢的原因", "done"),
    ("用一条 JOIN 查询替换逐行查询", "done"),
    ("确认 CSV 列顺序不变", "in_progress"),
    ("跑完整的导出测试", "pending"),
    ("把导出进度写到日志", "pending"),
]
OK = "<system>Command executed successfully.</system>"


def chinese(folder: Path) -> Path:
    session = folder / "kimi-session"
    session.mkdir(parents=True)
    lines: list[dict[str, Any]] = [
        {"role": "_system_prompt", "content": "You are Kimi.\n工作目录: /home/dev/shop"}
    ]
    n = iter(range(1, 1000))

    def call(name: str, args: dict[str, Any], out: str, text: str = "") -> None:
        cid = f"tool_{next(n):03d}"
        fn = {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}
        lines.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [{"type": "function", "id": cid, "function": fn}],
            }
        )
        lines.append({"role": "tool", "content": out, "tool_call_id": cid})

    def user(text: str) -> None:
        lines.append({"role": "user", "content": text})

    def say(text: str) -> None:
        lines.append({"role": "assistant", "content": text})

    def plan(items: list[tuple[str, str]]) -> None:
        todos = [{"title": t, "status": s} for t, s in items]
        call("SetTodoList", {"todos": todos}, "Todo list updated")

    user(ZH_TASK)
    plan(ZH_PLAN_1)
    call(
        "ReadFile",
        {"path": "app/export/orders.py"},
        "1\tdef export_month(month):\n2\t    orders = Order.objects.filter(month=month)\n"
        "3\t    for order in orders:\n4\t        order.items = fetch_items(order.id)\n"
        "5\t        yield row_of(order)\n",
    )
    call(
        "ReadFile",
        {"path": "app/export/queries.sql"},
        "-- name: fetch_items\nSELECT * FROM order_items WHERE order_id = %s;\n",
    )
    call("ReadFile", {"path": "app/export/columns.py"}, "1\tCOLUMNS = ['id', 'date', 'sku', 'qty']")
    call(
        "Shell",
        {"command": "python -m cProfile -s cumtime scripts/export_month.py 2026-10 | head -8"},
        f"{OK}\n   ncalls  cumtime  filename:lineno(function)\n        1   44.913  "
        "export_month.py:1(<module>)\n    61234   41.702  orders.py:4(fetch_items)\n",
    )
    say(
        "找到了：每个订单都单独查一次 order_items（61234 次查询，占 41.7 秒），典型的 N+1 问题。"
        "建议用 ORM 的 prefetch_related 一次取回。"
    )
    call(
        "WriteFile",
        {"path": "app/export/orders.py", "content": "orders = orders.prefetch_related('items')"},
        "<system>ERROR: The user rejected this tool call.</system>",
    )
    user(ZH_REJECT)
    user(ZH_RULE)
    say("明白，改成一条 JOIN 查询，并且加上 LIMIT 50000。")
    call(
        "StrReplaceFile",
        {
            "path": "app/export/queries.sql",
            "old": "SELECT * FROM order_items WHERE order_id = %s;",
            "new": "SELECT o.id, o.date, i.sku, i.qty FROM orders o JOIN order_items i "
            "ON i.order_id = o.id WHERE o.month = %s ORDER BY o.id LIMIT 50000;",
        },
        "<system>File successfully edited.</system>",
    )
    call(
        "StrReplaceFile",
        {"path": "app/export/orders.py", "old": "fetch_items(order.id)", "new": "rows_of(month)"},
        "<system>File successfully edited.</system>",
    )
    call(
        "Shell",
        {"command": "pytest -q tests/test_export.py"},
        "<system>ERROR: Command failed with exit code: 1.</system>\n"
        "FAILED tests/test_export.py::test_columns_order - AssertionError: "
        "['id', 'sku', 'date', 'qty'] != ['id', 'date', 'sku', 'qty']\n1 failed, 5 passed in 1.32s",
    )
    say("JOIN 的列顺序写错了，sku 跑到了 date 前面，改回和 columns.py 一致。")
    call(
        "StrReplaceFile",
        {"path": "app/export/orders.py", "old": "row[2], row[1]", "new": "row[1], row[2]"},
        "<system>File successfully edited.</system>",
    )
    call("Shell", {"command": "pytest -q tests/test_export.py"}, f"{OK}\n6 passed in 1.18s")
    call(
        "Shell",
        {"command": "/usr/bin/time -v python scripts/export_month.py 2026-10 > /tmp/out.csv"},
        f"{OK}\n\tElapsed (wall clock) time: 3.2 s\n\tMaximum resident set size: 212 MB",
    )
    plan(ZH_PLAN_2)
    say(
        "导出从 45 秒降到 3.2 秒，内存峰值 212 MB。下一步：和财务模板逐列核对 CSV，然后跑完整测试。"
    )
    user(ZH_NEXT)
    say("好的，我先核对列顺序，再加日志。")
    user("谢谢")
    say("不客气。")
    path = session / "context.jsonl"
    path.write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8"
    )
    return session


ZH_LOSSY = """<current_focus>
用户反馈订单导出太慢，要求优化导出接口。
</current_focus>
<completed_tasks>
- 定位导出慢的原因：N+1 查询。
- 用一条 JOIN 查询替换逐行查询，已修改 app/export/orders.py。
- 确认 CSV 列顺序不变：已完成。
- 导出从 45 秒降到 5 秒，测试全部通过。
</completed_tasks>
<important_context>
- 不要用 ORM 的 prefetch。
</important_context>
"""

# ----------------------------------------------------------------------------- the set

#: name → (the agent it is written as, its generator, its lossy model summary)
REALISTIC: dict[str, tuple[str, Callable[[Path], Path], str]] = {
    "debug": ("claude-code", debug, DEBUG_LOSSY),
    "refactor": ("codex", refactor, REFACTOR_LOSSY),
    "chinese": ("kimi-cli", chinese, ZH_LOSSY),
}

"""`kimi-compact-tui compact` in process (``cli_main``; the Ctrl+C and closed-stdout
tests run the real console entry in a subprocess) against the loopback server: what streams to stdout/stderr, the exit code, and whether a file is written.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import procs
from tests.cli_fixtures import CliResult
from tests.factories import write_openai_json
from tests.loopback_server import Reply, moonshot_sse, openai_sse

FAKE_KEY = "sk-cli-LEAKCHECK-0a1b2c3d4e5f"
ROOT = Path(__file__).resolve().parents[2]

MESSAGES = [
    {"role": "user", "content": "Please fix the crash in app/main.py"},
    {
        "role": "tool",
        "content": "Traceback (most recent call last):\n"
        '  File "app/main.py", line 3, in <module>\n'
        "    run()\n"
        "RuntimeError: boom",
    },
    {"role": "assistant", "content": "Fixed: run() now checks its input."},
    {"role": "user", "content": "Thanks. Now add logging."},
    {"role": "assistant", "content": "Added logging to run()."},
    {"role": "user", "content": "And a test?"},
    {"role": "assistant", "content": "Added tests/test_main.py."},
]


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    return write_openai_json(tmp_path / "session.json", MESSAGES, model="m")


@pytest.fixture
def cli(tmp_path: Path, loopback, cli_main, monkeypatch):
    config = tmp_path / "config.yaml"

    def write_config(kind: str = "openai", **extra) -> Path:
        lines = [
            "provider:",
            f"  kind: {kind}",
            f"  base_url: {loopback.root_url if kind == 'ollama' else loopback.base_url}",
            "  model: cli-model",
            "  api_key_env: KCT_CLI_KEY",
            "  retry_base_delay: 0.01",
            "  retry_cap: 0.05",
            "  read_timeout: 5",
        ]
        lines += [f"  {k}: {v}" for k, v in extra.items()]
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return config

    def run(*args: str, kind: str = "openai", **extra) -> CliResult:
        cfg = write_config(kind, **extra)
        monkeypatch.setenv("KCT_CLI_KEY", FAKE_KEY)
        monkeypatch.setenv("NO_COLOR", "1")
        argv = ["compact", *args]
        if "--config" not in args:
            argv += ["--config", str(cfg)]
        return cli_main(*argv)

    return run


def assert_clean_failure(proc: CliResult, code: int) -> None:
    assert proc.code == code, proc.stderr
    assert "Traceback (most recent call last)" not in proc.stderr
    error_lines = [x for x in proc.stderr.splitlines() if "error:" in x]
    assert len(error_lines) == 1


def test_complete_stream_writes_output(cli, loopback, session_file, tmp_path):
    loopback.script([openai_sse(["<current_focus>\n", "logging\n", "</current_focus>\n"])])
    out = tmp_path / "compacted.json"
    proc = cli(str(session_file), "--output", str(out))
    assert proc.code == 0, proc.stderr
    assert proc.stdout == "<current_focus>\nlogging\n</current_focus>\n"
    assert out.exists()
    data = json.loads(out.read_text(encoding="utf-8"))
    texts = json.dumps(data)
    assert "Previous context has been compacted" in texts
    assert "logging" in texts
    assert "Please fix the crash" not in texts  # compacted away
    req = loopback.requests[0]
    assert req.headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert "tools" not in req.json and "tool_choice" not in req.json
    assert req.json["model"] == "cli-model"


def test_flags_override_config(cli, loopback, session_file):
    loopback.script([openai_sse(["ok"])])
    proc = cli(str(session_file), "--model", "flag-model", "--provider", "moonshot")
    assert proc.code == 0, proc.stderr
    assert loopback.requests[0].json["model"] == "flag-model"
    assert "stream_options" not in loopback.requests[0].json  # moonshot kind


def test_reasoning_goes_to_stderr_not_stdout(cli, loopback, session_file):
    loopback.script([moonshot_sse(["SUMMARY-TEXT"], reasoning=["HIDDEN-THOUGHTS"])])
    proc = cli(str(session_file), kind="moonshot")
    assert proc.code == 0, proc.stderr
    assert "SUMMARY-TEXT" in proc.stdout
    assert "HIDDEN-THOUGHTS" not in proc.stdout
    assert "HIDDEN-THOUGHTS" in proc.stderr


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(openai_sse(["partial"], finish=None, done=False), id="cut"),
        pytest.param(
            openai_sse(["partial"], extra_events=[{"error": {"message": "x"}}]), id="inband"
        ),
        pytest.param(openai_sse(["partial"], extra_events=["{oops"]), id="badjson"),
        pytest.param(openai_sse(["partial", "rest"], stall=4, stall_after=2), id="stall"),
        pytest.param(Reply.error(404, {"error": {"message": "no such model"}}), id="404"),
    ],
)
def test_failures_write_nothing_and_exit_3(cli, loopback, session_file, tmp_path, reply):
    loopback.script([reply])
    out = tmp_path / "out.json"
    proc = cli(str(session_file), "--output", str(out), read_timeout=0.5)
    assert_clean_failure(proc, 3)
    assert not out.exists()
    assert "nothing written" in proc.stderr


def test_retries_then_success(cli, loopback, session_file, tmp_path):
    loopback.script(
        [
            Reply.error(429, {"error": {"message": "slow down"}}, retry_after="0"),
            Reply.error(500, {"error": {"message": "oops"}}),
            openai_sse(["fine"]),
        ]
    )
    out = tmp_path / "out.json"
    proc = cli(str(session_file), "--output", str(out))
    assert proc.code == 0, proc.stderr
    assert proc.stderr.count("retry:") == 2
    assert out.exists()


def test_truncated_needs_allow_truncated(cli, loopback, session_file, tmp_path):
    loopback.script([openai_sse(["cut"], finish="length"), openai_sse(["cut"], finish="length")])
    out = tmp_path / "out.json"
    proc = cli(str(session_file), "--output", str(out))
    assert_clean_failure(proc, 3)
    assert "--allow-truncated" in proc.stderr
    assert not out.exists()
    proc = cli(str(session_file), "--output", str(out), "--allow-truncated")
    assert proc.code == 0, proc.stderr
    assert out.exists()


def test_json_result_object(cli, loopback, session_file):
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    loopback.script(
        [
            openai_sse(["a", "b"], usage=usage),
            Reply.error(401, {"error": {"message": f"bad key {FAKE_KEY}"}}),
        ]
    )
    proc = cli(str(session_file), "--json")
    assert proc.code == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "complete"
    assert data["summary"] == "ab"
    assert data["usage"] == usage
    assert data["provider"] == "openai"
    assert data["model"] == "loopback-model"
    assert set(data["timings"]) == {"time_to_first_token", "total"}
    assert data["error"] is None
    assert data["written"] is False

    proc = cli(str(session_file), "--json")
    assert proc.code == 3
    data = json.loads(proc.stdout)
    assert data["status"] == "failed"
    assert "HTTP 401" in data["error"]
    assert FAKE_KEY not in proc.stdout and FAKE_KEY not in proc.stderr


def test_noop_exits_0(cli, loopback, tmp_path):
    path = tmp_path / "short.json"
    path.write_text(json.dumps({"messages": MESSAGES[:1]}), encoding="utf-8")
    proc = cli(str(path), "--json")
    assert proc.code == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "noop"
    assert loopback.requests == []


def test_offline_default_says_no_model_wrote_it(cli, session_file, tmp_path):
    config = tmp_path / "empty.yaml"
    config.write_text("compaction:\n  enabled: true\n  type: kimi\n", encoding="utf-8")
    out = tmp_path / "out.json"
    proc = cli(str(session_file), "--config", str(config), "--output", str(out))
    assert proc.code == 0, proc.stderr
    assert "No model wrote this summary" in proc.stderr
    for section in ("<current_focus>", "<code_state>", "</important_context>"):
        assert section in proc.stdout
    assert "RuntimeError: boom" in proc.stdout
    assert out.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["does-not-exist.json"],
        ["{session}", "--provider", "gemini"],
        ["{session}", "--base-url", "nope"],
        ["{session}", "--output", "{session}"],
        ["{session}", "--up-to", "99"],
    ],
)
def test_bad_input_exits_2(cli, loopback, session_file, args):
    args = [a.replace("{session}", str(session_file)) for a in args]
    proc = cli(*args)
    assert_clean_failure(proc, 2)
    assert loopback.requests == []


def test_ctrl_c_cancels_with_130_and_writes_nothing(loopback, session_file, tmp_path):
    loopback.script([openai_sse(["first line\n", "second"], stall=20, stall_after=2)])
    config = tmp_path / "c.yaml"
    config.write_text(
        f"provider:\n  kind: openai\n  base_url: {loopback.base_url}\n  model: m\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    cmd = [sys.executable, "-m", "kimi_compact_tui", "compact", str(session_file)]
    cmd += ["--config", str(config), "--output", str(out)]
    # Its own session: the SIGINT goes to the child alone, and nothing the child does
    # to its process group reaches this test process (or an xdist worker).
    with procs.spawned(
        cmd,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        first = proc.stdout.readline()
        assert first == "first line\n"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert not out.exists()


def test_closed_stdout_does_not_stop_the_stream(loopback, session_file, tmp_path):
    loopback.script([openai_sse(["one\n", "two\n"], stall=0.3, stall_after=1)])
    config = tmp_path / "c.yaml"
    config.write_text(
        f"provider:\n  kind: openai\n  base_url: {loopback.base_url}\n  model: m\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    cmd = [sys.executable, "-m", "kimi_compact_tui", "compact", str(session_file)]
    cmd += ["--config", str(config), "--output", str(out)]
    with procs.spawned(
        cmd,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        proc.stdout.close()  # like `| head -0`: the reader is gone before the summary arrives
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert out.exists()

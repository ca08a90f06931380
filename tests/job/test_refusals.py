"""The job's refusals, typed values the job owns with its readiness (an empty
prompt, a file or folder that cannot be written): each is computed once in the
job, before any request, and every front end renders the same value.

Requests go to a real HTTP server on 127.0.0.1 that records them: "nothing was
sent" is checked by its record, not by trusting the code.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import ApplyError, ConfigError
from kimi_compact_tui.job import CompactionJob
from kimi_compact_tui.job.feature import ACTION_COMPACT_CONVERSATION, KimiCompactionFeature
from kimi_compact_tui.providers.base import ProviderConfig, StreamResult
from tests import procs
from tests.factories import conversation, tool_session, write_session
from tests.loopback_server import LoopbackServer, openai_sse

ENABLED = {"compaction": {"enabled": True, "type": "kimi"}}


def config_file(tmp_path: Path, server: LoopbackServer, extra: str = "") -> Path:
    """A config whose provider is the loopback server (no key needed)."""
    path = tmp_path / "config.yaml"
    path.write_text(
        "compaction: {enabled: true, type: kimi" + extra + "}\n"
        f"provider: {{kind: openai, base_url: '{server.base_url}', model: m, api_key_env: ''}}\n",
        encoding="utf-8",
    )
    return path


def one_line_exit_2(result) -> str:
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    return result.stderr


# ------------------------------------------------------------------------------------ empty prompts


@pytest.mark.parametrize("content", ["", "  \n\n"])
def test_an_empty_prompt_file_is_refused_before_any_request(cli_main, tmp_path, loopback, content):
    session = write_session(tmp_path, "openai-json", conversation(8))
    before = session.read_bytes()
    prompt = tmp_path / "prompt.md"
    prompt.write_text(content, encoding="utf-8")
    loopback.script([openai_sse(["never sent"])])
    config = config_file(tmp_path, loopback)
    for argv in (
        ["compact", session, "--config", config, "--prompt-file", prompt, "--in-place", "--yes"],
        ["compact", session, "--config", config, "--prompt-file", prompt],
    ):
        err = one_line_exit_2(cli_main(*argv))
        assert str(prompt) in err and "empty" in err, err
    assert loopback.requests == [] and session.read_bytes() == before


def test_an_empty_prompt_file_from_the_config_is_refused(cli_main, tmp_path, loopback):
    session = write_session(tmp_path, "openai-json", conversation(8))
    prompt = tmp_path / "empty.md"
    prompt.write_text("", encoding="utf-8")
    config = config_file(tmp_path, loopback, f", prompt_file: '{prompt}'")
    err = one_line_exit_2(cli_main("compact", session, "--config", config))
    assert str(prompt) in err and "empty" in err
    assert loopback.requests == []


def test_the_facade_refuses_an_empty_prompt_without_calling_the_model(tmp_path):
    from kimi_compact_tui.compaction.prompts import PromptSource

    session = CompactionJob.load(
        write_session(tmp_path, "openai-json", conversation(8)), AppConfig()
    ).session
    called = []
    result = KimiCompactionFeature().execute_action(
        ACTION_COMPACT_CONVERSATION,
        session=session,
        config=ENABLED,
        summarize=lambda request: called.append(request) or "summary",
        prompt=PromptSource("file", str(tmp_path / "p.md"), "", "0" * 64),
    )
    assert called == []
    assert result["ok"] is False and result["error"]["type"] == "empty_prompt"
    assert str(tmp_path / "p.md") in result["error"]["message"]


# --------------------------------------------------------------------------- what cannot be written


def can_chattr(tmp_path: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    probe = tmp_path / "probe"
    probe.write_text("x", encoding="utf-8")
    ok = procs.run(["chattr", "+i", str(probe)], capture_output=True).returncode == 0
    if ok:
        procs.run(["chattr", "-i", str(probe)])
    return ok


@contextmanager
def immutable(path: Path) -> Iterator[None]:
    """``chattr +i``: the kernel refuses every write, root's too."""
    assert procs.run(["chattr", "+i", str(path)]).returncode == 0
    try:
        yield
    finally:
        assert procs.run(["chattr", "-i", str(path)]).returncode == 0


@pytest.fixture
def chattr(tmp_path: Path) -> None:
    if not can_chattr(tmp_path):
        pytest.skip("chattr +i is not available here (needs CAP_LINUX_IMMUTABLE and ext4/xfs)")


@pytest.mark.parametrize("fmt", ["kimi", "openai-json"])
def test_an_immutable_session_file_is_refused_before_any_request(
    cli_main, tmp_path, loopback, chattr, fmt
):
    session = write_session(tmp_path / "s", fmt, conversation(8))
    before = session.read_bytes()
    loopback.script([openai_sse(["never sent"])])
    config = config_file(tmp_path, loopback)
    with immutable(session):
        result = cli_main("compact", session, "--config", config, "--in-place", "--yes")
    err = one_line_exit_2(result)
    assert str(session) in err and "cannot be written" in err, err
    assert loopback.requests == [] and session.read_bytes() == before
    assert sorted(p.name for p in session.parent.iterdir()) == [session.name]


def test_an_immutable_folder_is_refused_naming_the_folder(cli_main, tmp_path, loopback, chattr):
    session = write_session(tmp_path / "s", "openai-json", conversation(8))
    config = config_file(tmp_path, loopback)
    with immutable(session.parent):
        result = cli_main("compact", session, "--config", config, "--in-place", "--yes")
    err = one_line_exit_2(result)
    assert str(session) in err and f"needs {session.parent}" in err, err
    assert loopback.requests == []


def test_a_file_marked_read_only_is_refused_even_for_root(cli_main, tmp_path, loopback):
    """Mode 0444: the kernel lets root write it, the check does not (the user
    marked it read-only)."""
    session = write_session(tmp_path / "s", "openai-json", conversation(8))
    session.chmod(0o444)
    before = session.read_bytes()
    config = config_file(tmp_path, loopback)
    result = cli_main("compact", session, "--config", config, "--in-place", "--yes")
    err = one_line_exit_2(result)
    assert str(session) in err and "read-only" in err and "r--r--r--" in err, err
    assert loopback.requests == [] and session.read_bytes() == before


def test_the_readiness_the_tui_uses_has_the_read_only_refusal(tmp_path):
    from kimi_compact_tui.job import RefusalKind
    from kimi_compact_tui.job.refusals import unwritable

    session = write_session(tmp_path / "s", "openai-json", conversation(8))
    session.chmod(0o444)
    job = CompactionJob.load(session, AppConfig(raw=ENABLED))
    prep = job.prepare()
    ready = job.readiness(prep, ProviderConfig(), write=True)
    assert ready.kinds() == [RefusalKind.READ_ONLY] and not ready.ready
    assert str(session) in str(ready.first)
    assert job.readiness(prep, ProviderConfig()).ready  # a look is not a write
    draft = job.draft(prep, StreamResult(status="complete", summary="S"))
    with pytest.raises(ApplyError, match="read-only"):
        job.commit(draft, None)
    session.chmod(0o644)
    assert unwritable(session) is None


def test_output_into_a_read_only_folder_is_refused_before_the_request(cli_main, tmp_path, loopback):
    session = write_session(tmp_path / "s", "openai-json", conversation(8))
    folder = tmp_path / "out"
    folder.mkdir()
    folder.chmod(0o555)
    config = config_file(tmp_path, loopback)
    err = one_line_exit_2(
        cli_main("compact", session, "--config", config, "--output", folder / "x.json")
    )
    assert str(folder) in err and "read-only" in err
    assert loopback.requests == []


# --------------------------------------------------------------------- one refusal, every front end


def test_the_cli_split_refusal_is_the_jobs_own_line(cli_main, tmp_path):
    from kimi_compact_tui.job import RefusalKind

    path = write_session(tmp_path, "openai-json", tool_session())
    job = CompactionJob.load(path, AppConfig())
    prep = job.prepare(up_to=3)
    ready = job.readiness(prep, ProviderConfig(), write=True, allow_split=False)
    assert ready.kinds() == [RefusalKind.SPLIT]
    result = cli_main("compact", path, "--up-to", "3", "--in-place", "--yes")
    err = one_line_exit_2(result)
    assert ready.first is not None and ready.first.message in err
    assert err.rstrip().endswith("(or pass --allow-split to write it anyway)")


def test_readiness_is_computed_once_per_compact_run(cli_main, tmp_path, monkeypatch):
    """``compact --in-place``: one readiness before the request, used by the
    request and by the write (not three checks in three wordings)."""
    path = write_session(tmp_path, "openai-json", conversation(8))
    calls = []
    original = CompactionJob.readiness

    def counted(self, *args, **kwargs):
        calls.append(kwargs.get("write", False))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CompactionJob, "readiness", counted)
    result = cli_main("compact", path, "--in-place", "--yes", "--provider", "offline")
    assert result.code == 0, result.stderr
    assert calls == [True]


def test_request_refusals_are_typed_and_ordered(tmp_path, monkeypatch):
    from kimi_compact_tui.job import RefusalKind

    path = write_session(tmp_path, "openai-json", conversation(8))
    job = CompactionJob.load(path, AppConfig(raw={}))
    prep = job.prepare()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ready = job.readiness(prep, ProviderConfig(kind="openai"))
    assert ready.kinds() == [RefusalKind.DISABLED, RefusalKind.NO_MODEL, RefusalKind.NO_KEY]
    with pytest.raises(Exception, match="compaction is not enabled"):
        ready.raise_first()
    assert isinstance(ready.refusals[1].error(), ConfigError)
    noop = job.prepare(up_to=1)
    assert job.readiness(noop, ProviderConfig()).kinds() == [RefusalKind.NOTHING_TO_COMPACT]


async def test_the_tui_run_is_refused_for_a_read_only_file_before_any_request(
    tmp_path, monkeypatch
):
    """The stream screen renders the job's readiness, computed once: a file
    marked read-only is named, and the model is never called."""
    from textual.widgets import Static

    from kimi_compact_tui.tui.screens.stream import StreamScreen
    from tests.tui_support import FlowHost, make_state, settle

    path = write_session(tmp_path / "s", "openai-json", conversation(8))
    path.chmod(0o444)
    calls: list[object] = []

    async def never(*args):
        calls.append(args)
        return StreamResult(status="complete", summary="x")

    counted: list[bool] = []
    original = CompactionJob.readiness

    def counting(self, *args, **kwargs):
        counted.append(kwargs.get("write", False))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CompactionJob, "readiness", counting)
    state = make_state(path)
    screen = StreamScreen(state, stream_fn=never)
    app = FlowHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        status = str(screen.query_one("#stream-status", Static).render())
        assert calls == [] and "not started" in status and "read-only" in status
        assert str(path) in status.replace("\n", "")
    assert counted == [True]


async def test_a_tui_run_computes_its_readiness_once(tmp_path, monkeypatch):
    """Before: ``check_ready`` ran on the screen and again in ``summarize``."""
    from kimi_compact_tui.tui.screens.stream import StreamScreen
    from tests.tui_support import FlowHost, make_state, settle, wait_until

    path = write_session(tmp_path / "s", "openai-json", conversation(8))
    calls: list[object] = []

    async def stream(*args):
        calls.append(args)
        return StreamResult(status="complete", summary="the summary")

    counted: list[bool] = []
    original = CompactionJob.readiness

    def counting(self, *args, **kwargs):
        counted.append(kwargs.get("write", False))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CompactionJob, "readiness", counting)
    state = make_state(path)
    screen = StreamScreen(state, stream_fn=stream)
    async with FlowHost(screen).run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: screen.result is not None, "the run to end")
        await settle(pilot)
    assert len(calls) == 1 and counted == [True]


def test_preview_says_an_empty_prompt_file_would_not_be_sent(cli_main, tmp_path):
    session = write_session(tmp_path, "openai-json", conversation(8))
    prompt = tmp_path / "prompt.md"
    prompt.write_text("", encoding="utf-8")
    text = cli_main("preview", session, "--prompt-file", prompt)
    assert text.code == 0, text.stderr
    (line,) = [x for x in text.stdout.split("\n") if x.startswith("NOT SENT")]
    assert str(prompt) in line and "empty" in line
    data = json.loads(cli_main("preview", session, "--prompt-file", prompt, "--json").stdout)
    assert [r["kind"] for r in data["refusals"]] == ["empty_prompt"]

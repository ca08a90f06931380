"""The job is the one path: the probe, the write to a new file and the
refusals are the job's typed values, and the command line only renders them.

Requests go to a real HTTP server on 127.0.0.1 that records them; the
sessions are real files and a real SQLite database.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from pathlib import Path

import pytest

import kimi_compact_tui
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.job import (
    CompactionJob,
    Refusal,
    RefusalKind,
    plan_probe_for,
    probe_readiness,
    probe_summary,
)
from kimi_compact_tui.job.probe import ProbePlan, ProbeReport
from kimi_compact_tui.job.probing import ProbeStopped, run_probe
from kimi_compact_tui.providers import ProviderConfig, StreamResult
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories import write_openai_json
from tests.factories.writers import write_opencode
from tests.loopback_server import LoopbackServer, openai_sse

PACKAGE = Path(kimi_compact_tui.__file__).parent
ENABLED = {"compaction": {"enabled": True, "type": "kimi"}}


def tool_call(cid: str, name: str, **args: str) -> dict[str, object]:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


MESSAGES = [
    {"role": "system", "content": "You are a coding agent in /work/app."},
    {"role": "user", "content": "Rename the retry option in the HTTP client to max_attempts."},
    {
        "role": "assistant",
        "content": "Editing the client.",
        "tool_calls": [tool_call("a1", "WriteFile", path="src/http/client.py", content="x = 1\n")],
    },
    {"role": "tool", "tool_call_id": "a1", "content": "Wrote 1 line."},
    {
        "role": "assistant",
        "content": "Running the suite.",
        "tool_calls": [tool_call("a2", "Shell", command="pytest -q tests/http")],
    },
    {"role": "tool", "tool_call_id": "a2", "content": "FAILED test_retry.py: KeyError: 'retries'"},
    {"role": "user", "content": "Now update the README section on retries."},
    {"role": "assistant", "content": "README updated."},
    {"role": "user", "content": "Thanks, that is all for now."},
    {"role": "assistant", "content": "Glad to help."},
]
SUMMARY = "<current_focus>\nThe README.\n</current_focus>\nThe retry option was renamed.\n"


def loopback_config(tmp_path: Path, server: LoopbackServer) -> Path:
    """A config whose provider is the loopback server (a model, no key needed)."""
    path = tmp_path / "config.yaml"
    path.write_text(
        "compaction: {enabled: true, type: kimi}\n"
        f"provider: {{kind: openai, base_url: '{server.base_url}', model: m, api_key_env: ''}}\n",
        encoding="utf-8",
    )
    return path


def one_line_exit_2(result) -> str:  # type: ignore[no-untyped-def]
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    return str(result.stderr)


def remote(server: LoopbackServer, **kw: object) -> ProviderConfig:
    fields: dict[str, object] = {"base_url": server.base_url, "model": "m", "api_key_env": ""}
    fields.update(kw)
    return ProviderConfig(kind="openai", **fields)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- --output of rows


def test_output_of_a_database_session_is_the_jobs_typed_refusal(tmp_path):
    ref = str(write_opencode(tmp_path / "oc"))
    job = CompactionJob.load(ref, AppConfig(raw=ENABLED), for_write=False)
    prep = job.prepare()
    ready = job.readiness(prep, ProviderConfig(), output=True)
    assert ready.kinds() == [RefusalKind.NOT_A_FILE]
    first = ready.first
    assert first is not None and first.message.startswith(f"{ref}: ")
    assert "--in-place" in first.message and "\n" not in first.message
    assert job.readiness(prep, ProviderConfig()).ready  # no --output, no refusal


def test_output_of_a_file_session_is_not_refused(tmp_path):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    job = CompactionJob.load(path, AppConfig(raw=ENABLED), for_write=False)
    assert job.readiness(job.prepare(), ProviderConfig(), output=True).ready


def test_compact_output_of_a_database_session_is_one_line_before_any_request(
    cli_main, tmp_path, loopback  # noqa: F811
):
    """The refusal is the job's, said before the announcement and the request:
    one line naming DB#KEY, --output and --in-place; no request reaches the
    server and no file is made."""
    ref = str(write_opencode(tmp_path / "oc"))
    db = Path(ref.rpartition("#")[0])
    before = db.read_bytes()
    loopback.script([openai_sse(["never sent"])])
    out = tmp_path / "copy.db"
    result = cli_main(
        "compact", ref, "--output", out, "--config", loopback_config(tmp_path, loopback)
    )
    err = one_line_exit_2(result)
    job = CompactionJob.load(ref, AppConfig(raw=ENABLED), for_write=False)
    refusal = job.readiness(job.prepare(), output=True).first
    assert refusal is not None and refusal.kind is RefusalKind.NOT_A_FILE
    assert refusal.message in err, err
    assert "--output" in err and "--in-place" in err and ref in err
    assert loopback.requests == [] and not out.exists() and db.read_bytes() == before


# ----------------------------------------------------------------------------- the probe


@pytest.fixture
def probed(tmp_path: Path) -> tuple[CompactionJob, object]:
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    job = CompactionJob.load(path, AppConfig(raw=ENABLED), for_write=False)
    return job, job.prepare()


def test_the_offline_provider_is_one_typed_refusal(probed):
    job, prep = probed
    ready = probe_readiness(job, prep, SUMMARY, ProviderConfig())
    assert ready.kinds() == [RefusalKind.OFFLINE_PROBE]
    got = probe_summary(job, prep, SUMMARY, ProviderConfig())
    assert isinstance(got, Refusal) and got == ready.first


def test_probe_refusals_come_in_order_and_say_why(probed, loopback):
    job, prep = probed
    no_model = remote(loopback, model=None)
    assert probe_readiness(job, None, SUMMARY, no_model).kinds() == [RefusalKind.NOTHING_TO_COMPACT]
    assert probe_readiness(job, prep, None, no_model).kinds() == [RefusalKind.NO_SUMMARY]
    assert probe_readiness(job, prep, "  \n", no_model).kinds() == [RefusalKind.NO_SUMMARY]
    assert probe_readiness(job, prep, SUMMARY, no_model).kinds() == [RefusalKind.NO_MODEL]
    assert probe_readiness(job, prep, SUMMARY, remote(loopback)).ready
    assert loopback.requests == []


def test_the_cli_renders_the_jobs_probe_refusal_as_it_is(cli_main, tmp_path):  # noqa: F811
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    summary = tmp_path / "summary.md"
    summary.write_text(SUMMARY, encoding="utf-8")
    job = CompactionJob.load(path, AppConfig(raw=ENABLED), for_write=False)
    refusal = probe_readiness(job, job.prepare(), SUMMARY, ProviderConfig()).first
    assert refusal is not None
    result = cli_main("probe", path, "--summary", summary, "--provider", "offline")
    err = one_line_exit_2(result)
    assert err == f"kimi-compact-tui: error: {refusal.message}\n"


def test_the_job_probes_through_the_provider_and_the_cli_says_the_same(
    cli_main, tmp_path, probed, loopback  # noqa: F811
):
    job, prep = probed
    plan = plan_probe_for(job, prep, SUMMARY, remote(loopback), limit=2)
    assert isinstance(plan, ProbePlan) and len(plan.questions) == 2
    answers = [q.expected[0] for q in plan.questions]
    loopback.script([openai_sse([a]) for a in answers])
    seen: list[ProbePlan] = []
    report = probe_summary(job, prep, SUMMARY, remote(loopback), limit=2, on_plan=seen.append)
    assert isinstance(report, ProbeReport) and len(seen) == 1
    assert report.score()["correct"] == 2 and len(loopback.requests) == 2
    assert [r.json["messages"] for r in loopback.requests] == [b["messages"] for b in plan.bodies]


# ----------------------------------------------------------------------------- other refusals


def test_a_summary_given_with_instructions_is_refused_by_the_job(tmp_path):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    job = CompactionJob.load(path, AppConfig(raw=ENABLED), for_write=False)
    plain = job.prepare()
    assert job.readiness(plain, None, given=True).ready
    with_words = job.prepare(custom_instruction="keep the paths")
    assert job.readiness(with_words, None, given=True).kinds() == [RefusalKind.GIVEN_SUMMARY]


def test_changed_on_disk_is_a_typed_refusal_the_confirm_dialog_can_render(tmp_path):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    job = CompactionJob.load(path, AppConfig(raw=ENABLED))
    assert job.changed_on_disk() is None
    with path.open("ab") as f:
        f.write(b"\n")
    changed = job.changed_on_disk()
    assert changed is not None and changed.kind is RefusalKind.CHANGED_ON_DISK
    assert str(path) in changed.message and "changed on disk" in changed.message
    draft = job.draft(job.prepare(), StreamResult(status="complete", summary="S"))
    with pytest.raises(kimi_compact_tui.errors.UserError):
        job.commit(draft, None)  # the store refuses it too, inside the write


# ----------------------------------------------------------------------------- the shape


def test_no_command_reads_argparse_with_getattr():
    hits = [
        f"{p.relative_to(PACKAGE)}:{n}"
        for p in (PACKAGE / "commands").rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").split("\n"), 1)
        if "getattr(args" in line
    ]
    assert hits == []


def test_only_config_mentions_the_spec_helper():
    hits = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "_get_compaction_config" in p.read_text(encoding="utf-8")
    ]
    assert hits == ["config.py"]


def test_no_namespace_flows_past_a_commands_run():
    """``argparse.Namespace`` is taken by ``run`` and the options' ``from_args`` only."""
    allowed = {"run", "from_args", "register"}
    found = []
    for p in (PACKAGE / "commands").rglob("*.py"):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name not in allowed:
                text = ast.unparse(node.args)
                if re.search(r"\bNamespace\b", text):
                    found.append(f"{p.name}:{node.name}")
    assert found == []


def test_compacts_run_reads_as_its_steps_in_under_50_lines():
    source = (PACKAGE / "commands" / "compact" / "__init__.py").read_text(encoding="utf-8")
    (run,) = [
        n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "run"
    ]
    assert run.end_lineno is not None and run.end_lineno - run.lineno + 1 < 50


# ----------------------------------------------------------------------------- for the TUI


def test_the_run_readiness_says_a_noop_calmly(tmp_path):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES[:2])
    job = CompactionJob.load(path, AppConfig(raw=ENABLED))
    first = job.run_readiness(job.prepare(), ProviderConfig()).first
    assert first is not None and first.kind is RefusalKind.NOTHING_TO_COMPACT
    assert first.nothing_to_do and not first.can_force
    path2 = write_openai_json(tmp_path / "long.json", MESSAGES)
    disabled = CompactionJob.load(path2, AppConfig(raw={"compaction": {"enabled": False}}))
    first = disabled.run_readiness(disabled.prepare(), ProviderConfig()).first
    assert first is not None and first.kind is RefusalKind.DISABLED and first.nothing_to_do


def test_the_write_readiness_has_what_the_write_dialog_shows(tmp_path):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    job = CompactionJob.load(path, AppConfig(raw=ENABLED))
    prep = job.prepare(up_to=3)  # message 3 calls a tool; its result is message 4
    ready = job.write_readiness(prep)
    assert ready.kinds() == [RefusalKind.SPLIT] and ready.refusals[0].can_force
    assert ready.forced.ready  # the user chose to write the split history
    assert job.write_readiness(prep, allow_split=True).ready
    with path.open("ab") as f:
        f.write(b" ")
    on_disk = job.write_readiness(prep, on_disk=True)
    assert on_disk.kinds() == [RefusalKind.SPLIT, RefusalKind.CHANGED_ON_DISK]
    assert not on_disk.forced.ready  # a change on disk is never forced from the dialog


# ----------------------------------------------------------------------------- wording


def test_a_mistyped_config_setting_names_the_one_it_resembles(tmp_path):
    from kimi_compact_tui.config import load_config
    from kimi_compact_tui.errors import ConfigError

    path = tmp_path / "c.yaml"
    path.write_text("provder: {kind: offline}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: provder: unknown setting (did you mean provider?)"
    path.write_text("compaction: {enabled: true, type: kimi, max_preserved: 3}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "did you mean max_preserved_messages?" in str(caught.value)
    path.write_text("colour: blue\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: colour: unknown setting"


def test_one_from_summary_is_not_given_1_times(cli_main, tmp_path):  # noqa: F811
    session = write_openai_json(tmp_path / "chat.json", MESSAGES)
    summary = tmp_path / "s.md"
    summary.write_text(SUMMARY, encoding="utf-8")
    done = cli_main("compact", session, "--from-summary", summary, "--revise", "a", "--revise", "b")
    assert done.code == 2 and "given once" in done.stderr and "1 times" not in done.stderr


# ----------------------------------------------------------------------------- a grown session


def compacted_run(path: Path):  # type: ignore[no-untyped-def]
    from kimi_compact_tui.commands.compact.options import CompactOptions
    from kimi_compact_tui.commands.compact.run import run_compaction
    from kimi_compact_tui.commands.options import ProviderOptions, SessionOptions

    opts = CompactOptions(
        SessionOptions(str(path)), ProviderOptions("offline"), in_place=True, yes=True
    )
    return opts, run_compaction(opts)


def test_a_write_refused_because_the_agent_went_on_keeps_the_summary(
    tmp_path, cli_main  # noqa: F811
):
    """Turns appended while the summary was made: nothing is written, the
    summary is kept, and the one line names the command that writes it on the
    grown session with the same range (the new turns in the kept tail)."""
    from kimi_compact_tui.commands.compact import write
    from kimi_compact_tui.errors import ApplyError
    from kimi_compact_tui.formats import load_session
    from kimi_compact_tui.store import locate
    from tests.factories.writers import write_kimi_cli

    path = locate(write_kimi_cli(tmp_path / "k")).path
    opts, run_ = compacted_run(path)
    assert run_.draft is not None
    boundary = run_.plan.boundary
    with path.open("ab") as f:  # the agent's next turn, written meanwhile
        f.write(b'{"role": "user", "content": "and now the changelog, please"}\n')
    grown = path.read_bytes()
    with pytest.raises(ApplyError) as caught:
        write(opts, run_, None)
    line = str(caught.value)
    assert "\n" not in line and path.read_bytes() == grown  # nothing written
    saved = Path(line.split(" is kept in ")[1].split(": ")[0])
    assert saved.read_text(encoding="utf-8") == run_.draft.summary
    assert f"--up-to {boundary} --in-place" in line
    command = line.split(": kimi-compact-tui ")[1].split(" writes it")[0]
    done = cli_main(*shlex.split(command), "--yes")
    assert done.code == 0, done.stderr
    after = load_session(path).messages
    assert after[-1].text() == "and now the changelog, please"
    assert any(run_.draft.summary.strip()[:40] in m.text() for m in after)


def test_a_change_inside_the_compacted_range_is_the_plain_refusal(tmp_path):
    from kimi_compact_tui.commands.compact import write
    from kimi_compact_tui.errors import ApplyError
    from kimi_compact_tui.samples import state_dir
    from kimi_compact_tui.store import locate
    from tests.factories.writers import write_kimi_cli

    path = locate(write_kimi_cli(tmp_path / "k")).path
    opts, run_ = compacted_run(path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("parser.py", "lexer.py", 1), encoding="utf-8")
    with pytest.raises(ApplyError) as caught:
        write(opts, run_, None)
    assert "reload the session and compact again" in str(caught.value)
    assert not (state_dir() / "summaries").exists()


def test_front_ends_probe_only_through_the_jobs_entry():
    """The TUI and the CLI plan and ask a probe through job/probing.py, never the
    engine's plan_probe/ask directly (one path: the same refusals and cancelling)."""
    hits = [
        f"{p.relative_to(PACKAGE)}:{n}"
        for folder in ("tui", "commands")
        for p in (PACKAGE / folder).rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").split("\n"), 1)
        if "from kimi_compact_tui.job.probe import" in line
        and any(name in line for name in ("plan_probe", " ask", "run"))
    ]
    assert hits == []


def test_a_probe_stopped_by_its_front_end_sends_nothing_more(probed, loopback):  # noqa: F811
    job, prep = probed
    plan = plan_probe_for(job, prep, SUMMARY, remote(loopback), limit=2)
    assert isinstance(plan, ProbePlan) and len(plan.questions) == 2
    loopback.script([openai_sse([q.expected[0]]) for q in plan.questions])
    with pytest.raises(ProbeStopped):
        run_probe(plan, remote(loopback), stopped=lambda: True)
    assert loopback.requests == []
    asked: list[int] = []

    def after_the_first() -> bool:
        return len(loopback.requests) >= 1

    with pytest.raises(ProbeStopped):
        run_probe(plan, remote(loopback), stopped=after_the_first)
    asked.append(len(loopback.requests))
    assert asked == [1]
    report = run_probe(plan, remote(loopback), stopped=lambda: False)  # never stopped: the report
    assert isinstance(report, ProbeReport) and len(report.answers) == 2

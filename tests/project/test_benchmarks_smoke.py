"""The benchmark steps that drive the app still run against today's APIs (a
figure is not checked here: speed belongs to ``python -m benchmarks.run``)."""

from __future__ import annotations

from benchmarks import generate
from benchmarks.stream_bench import stream_through_tui


async def test_the_stream_benchmark_drives_the_stream_screen_to_its_end(tmp_path):
    """It streamed through the screen until the last chunk was shown (it called
    an API of the TUI state that the redesign removed)."""
    path = generate.write_kimi(tmp_path / "context.jsonl", generate.generate_messages(200))
    figures = await stream_through_tui(50, session_path=path)
    assert set(figures) == {"lag", "total"}
    assert 0 <= figures["lag"] <= figures["total"]


def test_the_summary_benchmark_times_both_steps_against_plan_json(tmp_path):
    """It runs `plan --json`, the offline summary and retention in one run."""
    from benchmarks.summary_bench import bench_summary

    path = generate.write_kimi(tmp_path / "context.jsonl", generate.generate_messages(200))
    figures = bench_summary(path=path)
    assert figures["messages"] == 200 and figures["plan_json_cpu"] > 0
    assert figures["summary_cpu"] > 0 and figures["retention_cpu"] > 0
    assert figures["critical"] == 0  # the offline summary passes its own retention
    # scored again in a fresh process after the summary (the items shared): same report
    assert figures["retention_after_summary_cpu"] > 0


def test_the_summary_benchmark_times_its_steps_alone(tmp_path):
    from benchmarks.summary_bench import bench_parts

    path = generate.write_kimi(tmp_path / "context.jsonl", generate.generate_messages(200))
    figures = bench_parts(repeats=1, path=path)
    assert figures["messages"] == 200
    assert figures["extraction_cpu"] >= 0 and figures["read_back_cpu"] >= 0
    assert figures["sections_cpu"] >= 0

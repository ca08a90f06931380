"""The gate's hook benchmark runs the real command and each case does what it says
(the figures are the benchmark's to judge, not this test's)."""

from benchmarks import hook_bench


def test_the_hook_benchmark_runs_each_case():
    result = hook_bench.bench_hook(repeats=1)
    assert result["held"]["exit"] == [2]  # Claude Code held: exit 2
    assert result["codex held"]["exit"] == [0]  # Codex held: JSON on stdout
    assert result["allowed"]["exit"] == [0]
    table, targets = hook_bench.rows(result)
    assert [row[0] for row in table] == ["python -c pass", "held", "codex held", "allowed"]
    assert targets[0][0] == "hook run <= 0.2 s CPU"

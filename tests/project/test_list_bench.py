"""``benchmarks/list_bench.py`` still runs, and on its sessions the meters read from
the sessions' ends are those read in full (it asserts so; no figure is checked here)."""

from __future__ import annotations


def test_the_list_benchmark_reads_the_same_meters_from_the_ends_as_in_full():
    from benchmarks.list_bench import bench_list

    figures = bench_list(sessions=6, messages=40, repeats=1)
    assert figures["sessions"] == 6 and figures["meters_from_end_cpu"] >= 0

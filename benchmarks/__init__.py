"""Benchmarks for kimi-compact-tui (not part of the test run).

Run everything with ``.venv/bin/python -m benchmarks.run``; see docs/BENCHMARKS.md.
"""

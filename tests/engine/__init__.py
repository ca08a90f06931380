"""The compaction engine's plain-data steps: the plan, the tail, the request, sections, the diff."""

"""The compaction job: refusals, the probe, revisions and the spec facade."""

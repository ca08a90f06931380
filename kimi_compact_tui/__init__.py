"""kimi-compact-tui: review a conversation compaction before it is applied."""

__version__ = "0.1.0"

"""The command line: commands, usage errors, JSON output and ``serve``."""

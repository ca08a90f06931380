"""Naming and finding sessions: ids, folders, the bundled samples and their copies."""

"""The store: safe writes, backups, crash safety, the audit log and restore."""

"""Session formats: reading, writing and undoing each agent's sessions, and the format contract."""

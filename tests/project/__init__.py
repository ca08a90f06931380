"""The project's own rules: layers, imports, processes, docs, CI and benchmark scripts."""

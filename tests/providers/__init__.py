"""Providers: HTTP streams on the loopback server, keys, settings and the offline summarizer."""

"""Kimi Code CLI (``@moonshot-ai/kimi-code`` 2.1) sessions: see :mod:`.plugin`."""

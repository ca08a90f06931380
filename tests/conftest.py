"""Shared pytest fixtures. Each block below belongs to one area of the project."""

# --- provider fixtures (loopback HTTP server, provider configs): tests/provider_fixtures.py
from tests.provider_fixtures import *  # noqa: E402,F401,F403

# --- end provider fixtures

"""Robustness: property tests, the bad-input corpus and provider fault injection."""

"""Errors shown to users as one clear line (never a traceback)."""

from __future__ import annotations


class UserError(Exception):
    """Bad input: a file, a line or a field the user can fix. CLI exit code 2."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:  # one line, always
        return " ".join(self.message.split("\n"))


class SessionFormatError(UserError):
    """A session file that cannot be read: names the file and the line or field."""


class ConfigError(UserError):
    """A config file or value that is not valid: names the file and the field."""


class ProviderFailure(UserError):
    """A provider that failed, truncated or was cancelled. CLI exit code 3."""

    exit_code = 3


class ApplyError(UserError):
    """Writing the compacted session was refused or failed; nothing was lost."""


class RetentionShortfall(UserError):
    """A summary keeps fewer specifics than ``--min-retention`` asks: nothing
    is written. CLI exit code 4."""

    exit_code = 4

"""The kinds of specifics the extractor yields (an :class:`~.extractor.Item`'s
``category``), and how much each weighs when a summary must drop some."""

from __future__ import annotations

USER_REQUESTS = "user_requests"
INSTRUCTIONS = "instructions"
PLAN = "plan"
OPEN_TASKS = "open_tasks"
EDITED_FILES = "edited_files"
COMMANDS = "commands"
ERRORS = "errors"
FILE_PATHS = "file_paths"
DECISIONS = "decisions"
IDENTIFIERS = "identifiers"
NUMBERS = "numbers"
URLS = "urls"

#: Every kind the extractor yields (``open_tasks`` is a view of ``plan``).
KINDS = (
    USER_REQUESTS,
    INSTRUCTIONS,
    PLAN,
    EDITED_FILES,
    COMMANDS,
    ERRORS,
    FILE_PATHS,
    DECISIONS,
    IDENTIFIERS,
    NUMBERS,
    URLS,
)

WEIGHTS = {
    USER_REQUESTS: 10,
    INSTRUCTIONS: 9,
    PLAN: 8,
    EDITED_FILES: 7,
    COMMANDS: 6,
    ERRORS: 6,
    FILE_PATHS: 3,
    DECISIONS: 2,
    IDENTIFIERS: 2,
    NUMBERS: 1,
    URLS: 1,
}

"""Which opencode database schema this reader knows.

opencode records each schema migration it applied as a row of its ``migration``
table (``id``, ``time_completed``). The set of ids names the schema. Only the schema
checked with opencode 1.18.33 is read; any other is refused in one line (its
tables may mean something else), naming the database and the first unknown or
missing migration.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kimi_compact_tui.errors import SessionFormatError

OPENCODE_VERSION = "1.18.33"

# The migrations of opencode 1.18.33's database, in order (facts read from a database
# it made). The reader and the row builder were checked against exactly this schema.
CHECKED_MIGRATIONS: tuple[str, ...] = (
    "20260127222353_familiar_lady_ursula",
    "20260211171708_add_project_commands",
    "20260213144116_wakeful_the_professor",
    "20260225215848_workspace",
    "20260227213759_add_session_workspace_id",
    "20260228203230_blue_harpoon",
    "20260303231226_add_workspace_fields",
    "20260309230000_move_org_to_state",
    "20260312043431_session_message_cursor",
    "20260323234822_events",
    "20260410174513_workspace-name",
    "20260413175956_chief_energizer",
    "20260423070820_add_icon_url_override",
    "20260427172553_slow_nightmare",
    "20260428004200_add_session_path",
    "20260501142318_next_venus",
    "20260504145000_add_sync_owner",
    "20260507164347_add_workspace_time",
    "20260510033149_session_usage",
    "20260511000411_data_migration_state",
    "20260511173437_session-metadata",
    "20260601010001_normalize_storage_paths",
    "20260601202201_amazing_prowler",
    "20260602002951_lowly_union_jack",
    "20260602182828_add_project_directories",
    "20260603001617_session_message_projection_indexes",
    "20260603040000_session_message_projection_order",
    "20260603141458_session_input_inbox",
    "20260603160727_jittery_ezekiel_stane",
    "20260604172448_event_sourced_session_input",
    "20260605003541_add_session_context_snapshot",
    "20260605042240_add_context_epoch_agent",
    "20260611035744_credential",
    "20260611192811_lush_chimera",
    "20260612174303_project_dir_strategy",
    "20260622142730_simplify_session_context_epoch",
    "20260622170816_reset_v2_session_state",
    "20260622202450_simplify_session_input",
)

# The tables (and their columns) the reader and the row builder use.
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "session": (
        "id",
        "parent_id",
        "title",
        "directory",
        "time_created",
        "time_updated",
        "revert",
        "time_archived",
    ),
    "message": ("id", "session_id", "time_created", "time_updated", "data"),
    "part": ("id", "message_id", "session_id", "time_created", "time_updated", "data"),
}


def migrations(conn: sqlite3.Connection) -> list[str] | None:
    """The ids in the ``migration`` table, in order; None when there is no such table."""
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migration'"
    ).fetchone()
    if found is None:
        return None
    return [str(row[0]) for row in conn.execute("SELECT id FROM migration ORDER BY id")]


def check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse, in one line, a database whose schema is not the checked one."""
    applied = migrations(conn)
    if applied is None:
        raise SessionFormatError(f"{path}: not an opencode database (it has no migration table)")
    if tuple(applied) != CHECKED_MIGRATIONS:
        known = set(CHECKED_MIGRATIONS)
        unknown = [m for m in applied if m not in known]
        missing = [m for m in CHECKED_MIGRATIONS if m not in set(applied)]
        what = (
            f"migration {unknown[0]!r} is newer than this tool knows"
            if unknown
            else f"migration {missing[0]!r} has not been applied"
        )
        raise SessionFormatError(
            f"{path}: opencode schema not checked ({what}; checked: opencode "
            f"{OPENCODE_VERSION}, {len(CHECKED_MIGRATIONS)} migrations up to "
            f"{CHECKED_MIGRATIONS[-1]!r})"
        )
    for table, columns in REQUIRED_COLUMNS.items():
        have = {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}
        lacking = [c for c in columns if c not in have]
        if lacking:
            raise SessionFormatError(f"{path}: opencode table {table!r} has no {lacking[0]!r}")

"""opencode sessions, read from its SQLite database as opencode resumes them, and
compacted as opencode compacts them (a session is the database plus its id, ``DB#ses_…``).

- :mod:`.plugin`: the registered format (``FORMAT``), on the storage contract;
- :mod:`.store`: its transactional strategy: a session's own rows as its content,
  the write in one ``BEGIN IMMEDIATE`` transaction, undo by the session's rows;

- :mod:`.db`: the database opened read-only, in one read transaction (a consistent
  snapshot, the ``-wal`` beside it included), and a session's rows loaded;
- :mod:`.schema`: the ``migration`` table state this reader was checked against, and
  a one-line refusal for any other;
- :mod:`.history`: a session's rows as this tool's messages, exactly as opencode sends
  them when it resumes (its earlier compactions applied);
- :mod:`.discover`: where the database is, and its top-level sessions for a picker;
- :mod:`.rows`: the two rows of opencode's own compaction carrying a given summary,
  built (the strategy writes them).
"""

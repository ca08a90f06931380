"""kimi-cli's compaction hook, as the gate takes it (checked with kimi-cli
1.51; docs/hooks.md says how).

``[[hooks]]`` tables with ``event = "PreCompact"`` in its ``config.toml``
(``$KIMI_SHARE_DIR``, else ``~/.kimi``); its result is awaited and ignored
(advisory only), and it carries no transcript path. A table's matcher is a
string: every compaction is ``""``.

Standard library only: the hook loads it before every compaction.
"""

from __future__ import annotations

from kimi_compact_tui.agenthook import TOML_HOOK_TABLES, AgentHook

HOOK = AgentHook(
    "kimi-cli",
    "kimi-cli",
    "PreCompact",
    None,
    TOML_HOOK_TABLES,
    "KIMI_SHARE_DIR",
    ".kimi",
    "config.toml",
    None,
    manual_matcher="",
)

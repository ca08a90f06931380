"""The gate: the agent's own compaction held for review.

An agent that can veto its compaction from a hook (Claude Code's and Codex's
``PreCompact``) runs ``kimi-compact-tui hook run AGENT``, which records a
*pending review* in this tool's state folder and stops the compaction the
agent's way. Agents whose hook is advisory only get a hook that records the
compaction as made blind. See ``docs/hooks.md``.

- :mod:`.pending`: the pending reviews, the one-time allowances and the
  gate's ledger, in the state folder (atomic writes);
- :mod:`.run`: the hook itself (kept to the standard library: it runs
  before every compaction of the agent and costs well under 0.2 s);
- :mod:`.install`: adding our hook to the agent's configuration and taking
  exactly it out again (with the trust entry an agent may need).

What each agent's hook is (its event, where its configuration lives, how a
compaction is stopped, how its last usage is read, the trust it needs) is the
agent's format's to declare (``formats/<agent>/hook.py``, listed by
``formats/gate.py``), as the base module :mod:`kimi_compact_tui.agenthook`
types it; ``commands/hook.py`` finds it there and hands it down. This package
names no agent.

This package sits just above the base modules: the store imports it (a write
of a pending session clears it) and it imports no format.
"""

"""Claude Code's command echoes are the agent's bookkeeping, not turns: a
transcript that ends with ``/compact``'s local-command records keeps
its last real exchange in the default tail, as kimi-code's injected reminders do."""

from __future__ import annotations

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from tests.factories.claude_code import planned_session

CONFIG = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})


def test_the_default_tail_keeps_the_last_exchange_not_the_compact_echoes(tmp_path):
    session = load_session(planned_session().write(tmp_path))
    prep = prepare_compaction(session, CONFIG)
    kept = [session.messages[i].text() for i in prep.plan.preserved_indices]
    assert kept[:2] == ["thanks", "You're welcome."]  # not compacted
    assert kept[2:] == [m.text() for m in session.messages[-3:]]  # the echoes stay after it
    compacted = [session.messages[i].text() for i in prep.plan.compact_indices]
    assert "thanks" not in compacted


def test_the_echoes_are_bookkeeping_of_the_format(tmp_path):
    session = load_session(planned_session().write(tmp_path))
    kinds = [session.format.bookkeeping(m) for m in session.messages]
    # /clear's caveat, command and output first; /compact's last; nothing else
    assert kinds[:3] == ["command"] * 3 and kinds[-3:] == ["command"] * 3
    assert kinds[3:-3] == [None] * (len(kinds) - 6)


def test_an_earlier_summary_still_counts_in_the_tail(tmp_path):
    """Claude Code's own summary (``isCompactSummary``) is bookkeeping for the
    extractor, yet the tail scan counts it as the turns it stands for."""
    from kimi_compact_tui.model import Message

    fmt = load_session(planned_session().write(tmp_path)).format
    summary = Message({"role": "user", "content": "earlier", "claude": {"compact_summary": True}})
    assert fmt.bookkeeping(summary) == "summary"
    assert not fmt.tail_bookkeeping(summary)

"""`list`: the sessions the picker shows, as text or JSON, for scripts.

Light at import (``argparse`` only): the formats load when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kimi_compact_tui.formats.base import SessionInfo
    from kimi_compact_tui.formats.context import ContextUsage
    from kimi_compact_tui.hooks.pending import Pending

#: The one-line help of the command (listed by the top-level --help).
HELP = (
    "list the sessions on this machine (short id, agent, time, messages, context, title), "
    "pending reviews first"
)
#: How many sessions whose context fill needs a full read (no reply since their
#: last compaction) ``list`` reads in full, newest first; the others say "not read".
FULL_READS = 20
#: What ``--help`` of the command says it does.
DESCRIPTION = (
    "List the sessions the TUI's picker shows: those with a pending review (the gate "
    "held the agent's compaction) first, then newest first: the short id (any command "
    "takes it as SESSION), the agent, when it was last active, its messages, how full "
    "its context is against its agent's compaction threshold (read from the session's "
    f"end; the newest {FULL_READS} that need a full read for it are read in full) and "
    "its title. --json gives every field, with the full reference."
)
TIME_FORMAT = "%Y-%m-%d %H:%M"
NOT_READ = (
    f"not read: no reply since its last compaction, and only the newest {FULL_READS} such "
    "sessions are read in full (plan SESSION gives it)"
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("list", help=HELP, description=DESCRIPTION)
    p.add_argument(
        "--agent",
        metavar="NAME",
        default=None,
        help="only this agent's sessions (a format name such as claude-code, or the "
        "agent's name)",
    )
    p.add_argument("--json", action="store_true", help="print the sessions as JSON")


@dataclass(frozen=True)
class ListOptions:
    """``list``'s options, built from argparse once."""

    agent: str | None = None
    json: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ListOptions:
        return cls(agent=args.agent, json=args.json)


def _key(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def agent_filter(name: str) -> set[str]:
    """The format names ``name`` means (a format's name, its agent's or its
    label's words, case and punctuation aside; else the formats whose names
    start so); a usage error naming the accepted names when it means none."""
    from kimi_compact_tui.errors import UserError
    from kimi_compact_tui.formats import registry

    wanted = _key(name)
    keys = {
        fmt.name: (_key(fmt.name), _key(fmt.agent or ""), _key(fmt.label))
        for fmt in registry.FORMATS
    }
    found = {fmt for fmt, own in keys.items() if wanted and wanted in own}
    if not found:  # the start of a name: "claude", "openai"
        found = {
            fmt for fmt, own in keys.items() if wanted and any(k.startswith(wanted) for k in own)
        }
    if not found:
        names = ", ".join(fmt.name for fmt in registry.FORMATS)
        raise UserError(f"--agent {name}: no such agent (expected one of {names})")
    return found


def agent_of(info: SessionInfo) -> str:
    """Who writes the session: the format's agent, else its label, else "?"."""
    from kimi_compact_tui.errors import UserError
    from kimi_compact_tui.formats import registry

    try:
        fmt = registry.get(info.format)
    except (KeyError, UserError):
        return "?"
    return fmt.agent or fmt.label


def when_of(info: SessionInfo) -> float | None:
    """When the session was last active: its last record's own time, else the file's."""
    return info.last_record if info.last_record is not None else info.updated


@dataclass(frozen=True)
class Row:
    """One listed session: what the picker found, its meter, its pending review."""

    info: SessionInfo
    usage: ContextUsage | None = None
    note: str | None = None  # why there is no meter (None: no meter for its agent)
    pending: Pending | None = None


def row_json(row: Row, short: str | None) -> dict[str, Any]:
    info = row.info
    out = _info_json(info, short)
    out["context"] = row.usage.to_json() if row.usage is not None else None
    out["meter_note"] = row.note
    out["pending_review"] = row.pending.to_json() if row.pending is not None else None
    return out


def _info_json(info: SessionInfo, short: str | None) -> dict[str, Any]:
    import datetime as dt

    when = when_of(info)
    return {
        "ref": str(info.ref),
        "short_id": short,
        "session_id": info.session_id,
        "format": info.format,
        "agent": agent_of(info),
        "updated": (
            dt.datetime.fromtimestamp(when, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            if when is not None
            else None
        ),
        "time_from_file": info.last_record is None and info.updated is not None,
        "messages": info.message_count,
        "title": info.title,
        "work_dir": info.work_dir,
        "error": info.error,
    }


def context_text(row: Row) -> str:
    """The meter column: ``73% · compacts at 84%``, ``not read``, or ``-``."""
    if row.usage is not None:
        return row.usage.line()
    return "not read" if row.note == NOT_READ else "-"


def pending_text(pending: Pending) -> str:
    """``PENDING REVIEW (auto, held 2 times)``: the gate holds the agent's compaction."""
    from kimi_compact_tui.wording import count

    what = ", ".join(x for x in (pending.trigger, f"held {count(pending.blocks, 'time')}") if x)
    return f"PENDING REVIEW ({what})"


def row_text(row: Row, short: str | None, agent_width: int, context_width: int) -> str:
    import datetime as dt

    from kimi_compact_tui.sanitize import one_line, visible

    info = row.info
    when = when_of(info)
    shown = dt.datetime.fromtimestamp(when).strftime(TIME_FORMAT) if when is not None else "-"
    messages = "-" if info.message_count is None else f"{info.message_count:,}"
    title = one_line(info.title, 100) if info.title else "(untitled)"
    if info.error:
        title = f"cannot be opened: {one_line(info.error, 100)}"
    if row.pending is not None:
        title = f"{pending_text(row.pending)}  {title}"
    ident = short or visible(str(info.ref))
    return (
        f"{ident}  {visible(agent_of(info)):<{agent_width}}  {shown}  {messages:>6}  "
        f"{context_text(row):<{context_width}}  {title}"
    )


def pending_of(info: SessionInfo, pending: list[Pending], real: Any) -> Pending | None:
    """The pending review of the session ``info`` lists: by its transcript's path,
    or for an agent whose hook names none (kimi-cli), by its id naming one of the
    session's folders."""
    import os

    if not pending:
        return None
    target = real(str(info.path))
    parts = target.split(os.sep)
    for p in pending:
        if p.transcript:
            if real(p.transcript) == target:
                return p
        elif p.session and (p.session == info.session_id or p.session in parts):
            return p
    return None


def rows_of(
    sessions: list[SessionInfo], env: Any = None, full_reads: int = FULL_READS
) -> list[Row]:
    """The rows of ``sessions`` (newest first): each one's meter (read from its end;
    the newest ``full_reads`` that need it read in full) and its pending review,
    pending ones first."""
    import os

    from kimi_compact_tui.formats.meter import UNREAD, meter_of
    from kimi_compact_tui.hooks.pending import GateState

    pending = GateState().pending()
    cache: dict[str, str] = {}

    def real(path: str) -> str:
        if path not in cache:
            cache[path] = os.path.realpath(path)
        return cache[path]

    rows = []
    budget = full_reads
    for info in sessions:
        usage, why = meter_of(info, env)
        if usage is None and why == UNREAD:
            if budget > 0:
                budget -= 1
                usage, why = meter_of(info, env, full=True)
            else:
                why = NOT_READ
        note = None if why in (None, "no meter") else why
        rows.append(Row(info, usage, note, pending_of(info, pending, real)))
    return [r for r in rows if r.pending is not None] + [r for r in rows if r.pending is None]


def held_elsewhere(found: list[SessionInfo]) -> list[SessionInfo]:
    """The sessions of pending reviews that the picker's discovery does not find (a
    transcript outside the folders it scans: another ``CLAUDE_CONFIG_DIR`` or
    ``CODEX_HOME``), described from the transcript the hook named: listed too, so
    a held compaction is never out of sight."""
    import os
    from pathlib import Path

    from kimi_compact_tui.formats import registry
    from kimi_compact_tui.hooks.pending import GateState

    known = {os.path.realpath(info.path) for info in found}
    out = []
    for p in GateState().pending():
        if not p.transcript or not os.path.isfile(p.transcript):
            continue
        real = os.path.realpath(p.transcript)
        if real not in known:
            known.add(real)
            out.append(registry.describe_path(Path(p.transcript)))
    return out


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from kimi_compact_tui.commands.jsonout import print_json
    from kimi_compact_tui.formats import registry

    opts = ListOptions.from_args(args)
    wanted = agent_filter(opts.agent) if opts.agent is not None else None
    found = registry.discover_all(os.environ, Path.home())
    short = registry.short_ids(found)  # each short id names one session among them all
    found += held_elsewhere(found)  # no short id: they are named by their path
    found.sort(key=lambda s: when_of(s) or 0.0, reverse=True)
    sessions = [s for s in found if wanted is None or s.format in wanted]
    rows = rows_of(sessions)
    if opts.json:
        data = [row_json(r, short.get(r.info.session_id or "")) for r in rows]
        print_json({"agent": opts.agent, "full_reads": FULL_READS, "sessions": data})
        return 0
    if not sessions:
        what = f"{opts.agent} sessions" if opts.agent else "sessions"
        print(f"no {what} found on this machine", file=sys.stderr)
        return 0
    width = max(len(agent_of(r.info)) for r in rows)
    context_width = max(len(context_text(r)) for r in rows)
    out = "".join(
        row_text(r, short.get(r.info.session_id or ""), width, context_width) + "\n" for r in rows
    )
    sys.stdout.write(out)
    return 0

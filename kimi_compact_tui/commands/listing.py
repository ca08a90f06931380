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

#: The one-line help of the command (listed by the top-level --help).
HELP = "list the sessions on this machine (short id, agent, time, messages, title)"
#: What ``--help`` of the command says it does.
DESCRIPTION = (
    "List the sessions the TUI's picker shows, newest first: the short id (any "
    "command takes it as SESSION), the agent, when it was last active, its messages "
    "and its title. --json gives every field, with the full reference."
)
TIME_FORMAT = "%Y-%m-%d %H:%M"


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


def row_json(info: SessionInfo, short: str | None) -> dict[str, Any]:
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


def row_text(info: SessionInfo, short: str | None, agent_width: int) -> str:
    import datetime as dt

    from kimi_compact_tui.sanitize import one_line, visible

    when = when_of(info)
    shown = dt.datetime.fromtimestamp(when).strftime(TIME_FORMAT) if when is not None else "-"
    messages = "-" if info.message_count is None else f"{info.message_count:,}"
    title = one_line(info.title, 100) if info.title else "(untitled)"
    if info.error:
        title = f"cannot be opened: {one_line(info.error, 100)}"
    ident = short or visible(str(info.ref))
    return f"{ident}  {visible(agent_of(info)):<{agent_width}}  {shown}  {messages:>6}  {title}"


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from kimi_compact_tui.commands.jsonout import print_json
    from kimi_compact_tui.formats import registry

    opts = ListOptions.from_args(args)
    wanted = agent_filter(opts.agent) if opts.agent is not None else None
    found = registry.discover_all(os.environ, Path.home())
    short = registry.short_ids(found)  # each short id names one session among them all
    found.sort(key=lambda s: when_of(s) or 0.0, reverse=True)
    sessions = [s for s in found if wanted is None or s.format in wanted]
    if opts.json:
        rows = [row_json(s, short.get(s.session_id or "")) for s in sessions]
        print_json({"agent": opts.agent, "sessions": rows})
        return 0
    if not sessions:
        what = f"{opts.agent} sessions" if opts.agent else "sessions"
        print(f"no {what} found on this machine", file=sys.stderr)
        return 0
    width = max(len(agent_of(s)) for s in sessions)
    out = "".join(row_text(s, short.get(s.session_id or ""), width) + "\n" for s in sessions)
    sys.stdout.write(out)
    return 0

"""`hook`: hold the agent's own compaction for review.

- ``hook install AGENT [--scope user|project] [--manual]`` adds our hook to the
  agent's configuration (Claude Code, Codex: the compaction is held; Gemini
  CLI, kimi-cli: it is recorded as made blind), merged into what is there,
  with a backup; ``hook uninstall AGENT`` takes exactly it out;
- ``hook status [--json]``: where it is installed, and the pending reviews;
- ``hook allow SESSION``: let the agent's next compaction of that session
  through, once;
- ``hook run AGENT``: the hook itself, run by the agent (its JSON on stdin).

The machinery is :mod:`kimi_compact_tui.hooks`; the agents and their hooks'
facts are the formats' (``formats/gate.py``), found here by the agent's name
and handed down. See docs/hooks.md.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kimi_compact_tui.agenthook import AgentHook

#: The one-line help of the command (listed by the top-level --help).
HELP = "hold the agent's own compaction for review (install, status, allow, uninstall)"
DEFAULT_LET_THROUGH_AFTER = 3


def _either(labels: list[str], word: str) -> str:
    """``A``, ``A or B``, ``A, B or C`` (``word``: "or", "and")."""
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} {word} {labels[-1]}"


#: Words of the help that are the agents' facts, filled in when the help is shown
#: (:class:`FactsHelp`): the hook parses this command line before every
#: compaction, and loads no agent's facts but its own.
DESCRIPTION = "{description}"
TRUSTING = "{trusting}"


def description(hooks: list[AgentHook]) -> str:
    """The command's description: which agents' compactions are held, which only noted."""
    held = [h.label for h in hooks if h.blocking]
    blind = [h.label for h in hooks if not h.blocking]
    return (
        f"Install a hook in {_either(held, 'or')} that holds the agent's own compaction for "
        "review: the compaction is stopped, a pending review is recorded, and the agent is "
        f"resumed after the review is written. {_either(blind, 'and')} cannot be stopped: "
        "their hook records each compaction as made blind."
    )


def facts_text(text: str) -> str:
    """``text`` with :data:`DESCRIPTION` and :data:`TRUSTING` made the agents'
    facts (each agent's hook, declared by its format)."""
    if DESCRIPTION not in text and TRUSTING not in text:
        return text
    from kimi_compact_tui.formats.gate import hooks as agent_hooks

    hooks = agent_hooks()
    trusting = _either([h.label for h in hooks if h.trust is not None], "or")
    return text.replace(DESCRIPTION, description(hooks)).replace(TRUSTING, trusting)


class FactsHelp(argparse.HelpFormatter):
    """The help, with the agents' facts filled in as it is shown."""

    def add_text(self, text: str | None) -> None:
        super().add_text(facts_text(text) if text else text)

    def _expand_help(self, action: argparse.Action) -> str:
        return facts_text(super()._expand_help(action))


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kimi_compact_tui.formats.gate import names

    agent_names = names()  # the agents' facts load only when the help is shown
    p = sub.add_parser("hook", help=HELP, description=DESCRIPTION, formatter_class=FactsHelp)
    actions = p.add_subparsers(dest="hook_action", metavar="ACTION")
    actions.required = True

    inst = actions.add_parser(
        "install",
        help="add our hook to the agent's configuration (merged, with a backup)",
        formatter_class=FactsHelp,
    )
    inst.add_argument("agent", metavar="AGENT", help=", ".join(agent_names))
    inst.add_argument("--scope", choices=("user", "project"), default="user",
                      help="the user's configuration (default) or this project's")  # fmt: skip
    inst.add_argument(
        "--manual",
        action="store_true",
        help="hold the compactions the user asks for (/compact) too, not only automatic ones",
    )
    inst.add_argument(
        "--let-through-after",
        type=_count,
        metavar="N",
        default=DEFAULT_LET_THROUGH_AFTER,
        help="let a session through after it was held N times without a review "
        f"(default {DEFAULT_LET_THROUGH_AFTER}; 0: never)",
    )
    inst.add_argument(
        "--no-trust",
        action="store_true",
        help=f"{TRUSTING}: do not write the trust entry (trust the hook in {TRUSTING} "
        f"yourself; until then {TRUSTING} skips it)",
    )

    uninst = actions.add_parser("uninstall", help="take exactly our hook out again")
    uninst.add_argument("agent", metavar="AGENT", help=", ".join(agent_names))
    uninst.add_argument("--scope", choices=("user", "project"), default="user")

    st = actions.add_parser("status", help="where our hook is installed, and the pending reviews")
    st.add_argument("--json", action="store_true", help="print JSON")

    allow = actions.add_parser(
        "allow", help="let the agent's next compaction of SESSION through, once"
    )
    allow.add_argument("session", metavar="SESSION",
                       help="a pending session's id (or its start) or its transcript's path")  # fmt: skip
    allow.add_argument("--agent", choices=agent_names, default=None,
                       help="the agent, for a session that is not pending")  # fmt: skip

    # The hook: what follows AGENT is read here, not by argparse, so that no word on
    # it ever ends in a usage error (exit 2 would block Claude Code's compaction).
    run_p = actions.add_parser("run", help="the hook the agent runs (its JSON on stdin)")
    run_p.add_argument("agent", metavar="AGENT")
    run_p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def _run_options(rest: list[str]) -> int:
    """``--let-through-after N`` from the words after AGENT (anything else is ignored)."""
    for i, word in enumerate(rest):
        value = None
        if word == "--let-through-after" and i + 1 < len(rest):
            value = rest[i + 1]
        elif word.startswith("--let-through-after="):
            value = word.split("=", 1)[1]
        if value is not None and value.isdigit():
            return int(value)
    return DEFAULT_LET_THROUGH_AFTER


@dataclass(frozen=True)
class HookOptions:
    """Everything ``hook`` was asked, typed once (see ``register`` for each flag)."""

    action: str
    agent: str | None = None
    scope: str = "user"
    manual: bool = False
    let_through_after: int = DEFAULT_LET_THROUGH_AFTER
    no_trust: bool = False
    json: bool = False
    session: str = ""
    rest: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> HookOptions:
        given = vars(args)
        return cls(
            action=args.hook_action,
            agent=given.get("agent"),
            scope=given.get("scope") or "user",
            manual=bool(given.get("manual")),
            let_through_after=given.get("let_through_after", DEFAULT_LET_THROUGH_AFTER),
            no_trust=bool(given.get("no_trust")),
            json=bool(given.get("json")),
            session=given.get("session") or "",
            rest=tuple(given.get("rest") or ()),
        )


def run(args: argparse.Namespace) -> int:
    if args.hook_action == "run":  # the hook: its own agent's facts and nothing else
        from kimi_compact_tui.formats.gate import hook_of
        from kimi_compact_tui.hooks.run import main

        return main(args.agent, hook_of, _run_options(list(args.rest)))
    opts = HookOptions.from_args(args)
    actions = {"install": _install, "uninstall": _uninstall, "status": _status, "allow": _allow}
    return actions[opts.action](opts)


def _agent(name: str) -> AgentHook:
    """The agent named ``name``; one line when it has no hook we can use."""
    from kimi_compact_tui.errors import UserError
    from kimi_compact_tui.formats.gate import agent_named

    try:
        return agent_named(name)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _install(opts: HookOptions) -> int:
    from kimi_compact_tui.errors import UserError
    from kimi_compact_tui.hooks.install import install

    agent = _agent(opts.agent or "")
    if opts.scope == "project" and agent.project_file is None:
        raise UserError(f"{agent.label} has no project configuration; use --scope user")
    result = install(
        agent,
        opts.scope,
        manual=opts.manual,
        let_through_after=opts.let_through_after,
        trust=not opts.no_trust,
    )
    which = "every compaction" if opts.manual else "automatic compactions only"
    for change in result.changes:
        if change.changed:
            verb = "created" if change.created else "changed"
            print(
                f"{verb}: {change.file}" + (f" (backup: {change.backup})" if change.backup else "")
            )
        else:
            print(f"unchanged: {change.file} (already installed)")
    if agent.blocking:
        print(f"{agent.label} {agent.event} hook installed ({which}): a compaction is held "
              "for review, and `hook status` lists it")  # fmt: skip
    else:
        print(f"{agent.label} cannot stop a compaction (its {agent.event} hook is advisory "
              f"only): the hook records each one as compacted blind ({which}), and "
              "`history` lists it")  # fmt: skip
    for note in result.notes:
        print(note)
    return 0


def _uninstall(opts: HookOptions) -> int:
    from kimi_compact_tui.hooks.install import uninstall

    agent = _agent(opts.agent or "")
    result = uninstall(agent, opts.scope)
    for change in result.changes:
        if change.removed:
            print(f"removed: {change.file} (this tool had created it)")
        elif change.changed:
            print(
                f"changed: {change.file}" + (f" (backup: {change.backup})" if change.backup else "")
            )
    for note in result.notes:
        print(note)
    if result.changed:
        print(f"our {agent.event} hook is out of {agent.label}'s configuration")
    return 0


def _status(opts: HookOptions) -> int:
    from kimi_compact_tui.formats.gate import hooks as agent_hooks
    from kimi_compact_tui.hooks.install import status
    from kimi_compact_tui.hooks.pending import GateState

    state = GateState()
    installed = [entry for agent in agent_hooks() for entry in status(agent)]
    pending = state.pending()
    if opts.json:
        from kimi_compact_tui.commands.jsonout import print_json

        print_json(
            {
                "installed": installed,
                "pending": [p.to_json() for p in pending],
                "allowed": state.allowances(),
                "unreadable": [str(p) for p in state.unreadable()],
                "state": str(state.folder),
            }
        )
        return 0
    from kimi_compact_tui.sanitize import visible

    for entry in installed:
        hooks = entry["hooks"]
        if not hooks and "error" not in entry:
            continue
        for hook in hooks:
            which = "every compaction" if not hook["matcher"] else f"matcher {hook['matcher']!r}"
            trust = f", {hook['trust']}" if "trust" in hook else ""
            print(f"installed: {entry['agent']} ({entry['scope']}) {visible(entry['file'])}: "
                  f"{which}{trust}")  # fmt: skip
        if "error" in entry:
            print(f"unreadable: {visible(entry['error'])}")
    if not any(entry["hooks"] for entry in installed):
        print("installed: nowhere (`kimi-compact-tui hook install AGENT`)")
    if not pending:
        print("pending reviews: none")
    for p in pending:
        tokens = f", {p.tokens:,} tokens" if p.tokens is not None else ""
        held = f", held {p.blocks} times" if p.blocks > 1 else ""
        print(visible(f"pending: {p.agent} {p.session} since {p.time} "
                      f"({p.trigger or 'compaction'}{tokens}{held})"))  # fmt: skip
        if p.transcript:
            print(f"  review: kimi-compact-tui {visible(p.transcript)}")
    for name in state.allowances():
        print(f"allowed once: {name.replace('--', ' ', 1)}")
    for path in state.unreadable():
        print(f"unreadable pending review: {path}")
    return 0


def _allow(opts: HookOptions) -> int:
    from kimi_compact_tui.errors import UserError
    from kimi_compact_tui.hooks.pending import GateState

    state = GateState()
    found = state.find(opts.session)
    if opts.agent:
        found = [p for p in found if p.agent == opts.agent]
    if len(found) > 1:
        names = ", ".join(f"{p.agent} {p.session}" for p in found)
        raise UserError(f"{opts.session!r} names several pending sessions: {names}")
    if found:
        agent, session = found[0].agent, found[0].session
    elif opts.agent:
        agent, session = opts.agent, opts.session
    else:
        raise UserError(
            f"no pending review is of {opts.session!r}; give --agent AGENT and the whole "
            "session id to let a session that is not pending through"
        )
    state.allow(agent, session)
    print(f"allowed once: {agent}'s next compaction of {session} goes through")
    return 0

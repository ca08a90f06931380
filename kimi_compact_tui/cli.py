"""Command line front end: a thin layer over the engine.

Each subcommand is the module ``kimi_compact_tui/commands/<name>.py`` (or the
package ``commands/<name>/``, as ``compact`` is) and exposes ``HELP`` (its
one-line help), ``register(subparsers)`` (adds its parser) and
``run(args) -> int``; :data:`COMMAND_MODULES` imports them all. A command
module is light: it loads the engine, the config and the providers in
``run``, so ``--help`` answers at once and each command loads only what it
uses. The top-level ``--help`` registers no command's options; a command line
that starts with its command registers only that one.
``kimi-compact-tui SESSION`` (no subcommand) opens the review TUI.

Every usage error is one line on stderr and exit status 2, never a usage
dump. Options may come before the command (``kimi-compact-tui --config X plan
S``): they are handed to the command as if written after it.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Collection
from types import ModuleType
from typing import Any, NoReturn

from kimi_compact_tui import __version__
from kimi_compact_tui.commands import (
    compact,
    diff,
    history,
    hook,
    listing,
    plan,
    preview,
    probe,
    restore,
    retention,
    serve,
    tui,
)
from kimi_compact_tui.errors import UserError

#: Every command and the module that serves it, in the help's order.
COMMAND_MODULES: dict[str, ModuleType] = {
    "list": listing,
    "plan": plan,
    "preview": preview,
    "compact": compact,
    "diff": diff,
    "restore": restore,
    "serve": serve,
    "tui": tui,
    "retention": retention,
    "probe": probe,
    "hook": hook,
    "history": history,
}
COMMANDS = tuple(COMMAND_MODULES)
PROG = "kimi-compact-tui"
EXIT_USAGE = 2
TOP_LEVEL_FLAGS = ("-h", "--help", "--version")


def _shown(text: str) -> str:
    """Paths, YAML keys and provider messages come from outside: on a terminal,
    control characters in them are shown, not obeyed."""
    if not sys.stderr.isatty():
        return text
    from kimi_compact_tui.sanitize import visible

    return visible(text)


def usage_error(prog: str, message: str) -> NoReturn:
    """One line on stderr, exit 2 (raised as SystemExit, like argparse)."""
    text = " ".join(message.split())
    sys.stderr.write(f"{prog}: error: {_shown(text)}\n")
    raise SystemExit(EXIT_USAGE)


#: The metavars of values that name a file or folder: an empty one is an error
#: (``--output ""`` is not "no --output", ``plan ""`` is not the current folder).
PATH_METAVARS = ("SESSION", "FILE", "DIR", "A", "B")


class StoreOnce(argparse._StoreAction):
    """``store``, for an option that takes one value: given twice
    (``--up-to 3 --up-to 4``) it is an error, not a silent last-one-wins; a
    file name given empty is an error too."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if self.metavar in PATH_METAVARS and isinstance(values, str) and not values.strip():
            name = "/".join(self.option_strings) or str(self.metavar)
            parser.error(f"{name} is empty; give a {'folder' if self.metavar == 'DIR' else 'file'}")
        if self.option_strings:
            given: set[str] = namespace.__dict__.setdefault("_options_given", set())
            if self.dest in given:
                parser.error(f"{'/'.join(self.option_strings)} given twice; give it once")
            given.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage dump); an option
    that takes one value may be given once. Sub-parsers are made with the same
    class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def error(self, message: str) -> NoReturn:
        usage_error(self.prog, message)


def build_parser(only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser. ``only``: register just these commands' options (the
    others are listed with their help, enough for the top-level ``--help``);
    None registers every command."""
    parser = OneLineParser(
        prog=PROG,
        description="Review a conversation compaction before it is applied.",
        epilog=f"Run '{PROG} SESSION' to open the review TUI on a session.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in COMMAND_MODULES.items():
        if only is None or name in only:
            module.register(sub)
        else:
            sub.add_parser(name, help=module.HELP)
    return parser


def parser_for(argv: list[str]) -> argparse.ArgumentParser:
    """The parser ``argv`` needs: none of the commands' options for the
    top-level ``--help``/``--version``, one command's for a command line that
    starts with it, every command's otherwise (options before the command, a
    session, a typo)."""
    if argv and all(word in TOP_LEVEL_FLAGS for word in argv):
        return build_parser(only=())
    if argv and argv[0] in COMMAND_MODULES:
        return build_parser(only=(argv[0],))
    return build_parser()


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def value_options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string, in any command, that takes a value (``--config X``)."""
    out: set[str] = set()
    for sub in _subparsers(parser).values():
        for action in sub._actions:
            if action.option_strings and action.nargs != 0:
                out.update(action.option_strings)
    return out


def _first_positional(argv: list[str], takes_value: set[str]) -> int | None:
    """The index of the first word that is neither an option nor an option's value."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1 if i + 1 < len(argv) else None
        if word.startswith("-") and word != "-":
            i += 2 if ("=" not in word and word in takes_value) else 1
            continue
        return i
    return None


def _resolves_as_session(word: str) -> bool:
    """A path that exists, or an id a session format knows (a kimi-code session id)."""
    if os.path.exists(os.path.expanduser(word)):
        return True
    from kimi_compact_tui.formats.registry import SessionNameError, find_by_id

    try:
        return find_by_id(word) is not None
    except SessionNameError:  # a session's name, naming none or several: the TUI says so
        return True
    except (OSError, UserError):  # an unreadable session index: not a session
        return False


def _looks_like_a_command(word: str, rest: list[str], takes_value: set[str]) -> bool:
    """A word that is not a command: a session (the TUI) or a typo?"""
    if not word.strip() or _resolves_as_session(word):
        return False  # (an empty SESSION is the TUI's to refuse, naming SESSION)
    if _first_positional(rest, takes_value) is not None:
        return True  # `plna SESSION`: the TUI takes one SESSION, so `plna` meant a command
    if difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6):
        return True
    return not any(c in word for c in "/\\.~")


def normalise_argv(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """``argv`` with the command first: options given before the command move
    after it, and no command means the TUI. A word that is neither a command
    nor a session path is a usage error naming it."""
    takes_value = value_options(parser)
    index = _first_positional(argv, takes_value)
    if index is None:
        if argv and all(word in TOP_LEVEL_FLAGS for word in argv):
            return argv
        return ["tui", *argv]
    word = argv[index]
    before, after = argv[:index], argv[index + 1 :]
    if word in COMMANDS:
        if before and before[-1] == "--":
            before = before[:-1]
        return [word, *before, *after]
    if _looks_like_a_command(word, after, takes_value):
        close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else f"commands: {', '.join(COMMANDS)}"
        usage_error(PROG, f"unknown command {word!r} ({hint})")
    return ["tui", *argv]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = parser_for(argv)
    try:
        normal = normalise_argv(argv, parser)
        if normal[:1] == ["tui"] and "tui" not in argv:  # errors name what the user typed
            _subparsers(parser)["tui"].prog = PROG
        args = parser.parse_args(normal)
        if args.command is None:
            usage_error(PROG, f"no command given (commands: {', '.join(COMMANDS)})")
    except SystemExit as exc:  # usage errors (2), --help and --version (0)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return int(COMMAND_MODULES[args.command].run(args) or 0)
    except UserError as exc:
        print(f"{PROG}: error: {_shown(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: cancelled", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0

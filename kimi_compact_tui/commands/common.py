"""Options and steps shared by the subcommands.

Light to import (the command line imports every command): the engine, the
config and the providers load in the functions that use them.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.commands.options import ProviderOptions, SessionOptions
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.sanitize import visible

if TYPE_CHECKING:
    from kimi_compact_tui.compaction.pairs import ToolSplit
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.formats.base import Session
    from kimi_compact_tui.job import CompactionJob, Preparation, Readiness, Refusal
    from kimi_compact_tui.providers import ProviderConfig


def session_kinds() -> str:
    """What SESSION may be, from the registry (for the help text)."""
    from kimi_compact_tui.formats import registry

    return ", ".join(registry.labels())


def whole_number(what: str, ok: Callable[[int], bool], refused: str) -> Callable[[str], int]:
    """An argparse type: a whole number, ``expected {what}`` when the text is
    not one, and ``refused`` (``{text!r}`` and ``{value}`` filled in) when
    ``ok`` says no to it."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(refused.format(text=text, value=value))
        return value

    return parse


positive_int = whole_number(
    "a message number", lambda n: n >= 1, "messages are numbered from 1, got {text!r}"
)


def add_session_args(p: argparse.ArgumentParser, *, instructions: bool = False) -> None:
    p.add_argument(
        "session",
        metavar="SESSION",
        help=f"a session file or folder ({session_kinds()}), a session id or its start "
        "(the short id the picker shows), or sample:NAME (a bundled sample)",
    )
    p.add_argument(
        "--up-to",
        type=positive_int,
        metavar="N",
        default=None,
        help="explicit boundary: compact messages 1..N exactly (no preserved tail)",
    )
    p.add_argument("--config", metavar="FILE", default=None, help="YAML config file")
    p.add_argument(
        "--prompt-file",
        metavar="FILE",
        default=None,
        help="use this compaction prompt instead of the configured one",
    )
    if instructions:
        p.add_argument(
            "--instructions",
            metavar="TEXT",
            default="",
            help="custom compaction instructions (appended to the prompt)",
        )


def add_switches(p: argparse.ArgumentParser, switches: dict[str, str]) -> None:
    """On/off flags, in order: each ``"--name"`` (or ``"--name -n"``, with its
    short form) with its help."""
    for names, help_text in switches.items():
        p.add_argument(*names.split(), action="store_true", help=help_text)


def add_stored_session_arg(p: argparse.ArgumentParser) -> None:
    """SESSION for a command that reads the session as it is on disk (``history``,
    ``restore``): no boundary, config or prompt goes with it."""
    p.add_argument(
        "session",
        metavar="SESSION",
        help="a session file or folder, a session id or its start, or DB#KEY (a session "
        "in a database)",
    )


def provider_kinds() -> list[str]:
    """Every value ``--provider`` accepts, in the registry's order (docs/configuration.md lists the same)."""
    from kimi_compact_tui.providers import PROVIDER_KINDS

    return list(PROVIDER_KINDS)


def provider_kind(text: str) -> str:
    """``--provider``'s type: an accepted kind, else a usage error listing them all."""
    if text.strip().lower() not in provider_kinds():
        raise argparse.ArgumentTypeError(
            f"unknown provider kind {text!r} (expected one of {', '.join(provider_kinds())})"
        )
    return text


def add_provider_args(p: argparse.ArgumentParser) -> None:
    from kimi_compact_tui.providers import PROVIDER_KINDS

    p.add_argument(
        "--provider",
        metavar="KIND",
        type=provider_kind,
        default=None,
        help=f"one of {', '.join(PROVIDER_KINDS)} (default: from config, else offline)",
    )
    p.add_argument("--model", metavar="M", default=None, help="model for the compaction request")
    p.add_argument("--base-url", metavar="URL", default=None, help="provider base URL")


def provider_config(config: AppConfig, flags: ProviderOptions | None = None) -> ProviderConfig:
    """The provider config from the config file's ``provider:`` block and the flags."""
    from kimi_compact_tui.providers import provider_config_from

    flags = flags or ProviderOptions()
    return provider_config_from(
        config.provider, provider=flags.provider, base_url=flags.base_url, model=flags.model
    )


def load_and_prepare(
    session: SessionOptions,
    flags: ProviderOptions | None = None,
    *,
    for_write: bool = False,
) -> tuple[CompactionJob, Preparation]:
    """Load the config and the session (the job's one load path) and prepare
    the compaction; ``for_write``: the job holds the loaded file's fingerprint
    (taken from the same bytes that were parsed) for a write."""
    from kimi_compact_tui.config import load_config
    from kimi_compact_tui.job import CompactionJob

    flags = flags or ProviderOptions()
    config = load_config(session.config)
    # The loaded session lives until the command exits and holds no cycles: keep
    # its objects out of every later collection (each full pass would walk them
    # all again, e.g. while the tool-call pairs or the JSON output are built).
    # Frozen before the collector runs again: the first collection after the
    # load would otherwise walk every object the load made, once, for nothing.
    enabled = gc.isenabled()
    gc.disable()
    try:
        the_job = CompactionJob.load(
            session.session,
            config,
            for_write=for_write,
            prompt_file=session.prompt_file,
            base_model=provider_config(config, flags).model,
        )
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
    loaded = the_job.session
    warn_skipped(loaded)
    up_to = session.up_to
    if up_to is not None and not 1 <= up_to <= len(loaded.messages):
        n = len(loaded.messages)
        raise UserError(
            f"{loaded.ref}: --up-to {up_to} is out of range "
            f"(the session has {n} message{'' if n == 1 else 's'}, numbered 1 to {n})"
        )
    prep = the_job.prepare(
        up_to=up_to,
        custom_instruction=session.instructions,
        # An explicit --model is the request model, over any configured compaction_model.
        compaction_model=flags.model,
    )
    return the_job, prep


def warn_skipped(session: Session) -> None:
    """One stderr line per line the format skipped on load (as the agent does)."""
    for warning in session.warnings:
        print(f"kimi-compact-tui: warning: {visible(warning)}", file=sys.stderr)


# ----------------------------------------------------------------------------- tool splits


def tool_splits(prep: Preparation) -> list[ToolSplit]:
    """The tool calls the plan's boundary would cut off from their results."""
    from kimi_compact_tui.compaction.pairs import find_splits

    return find_splits(prep.session.messages, prep.plan, prep.exchanges)


def safe_up_to(prep: Preparation) -> int | None:
    """The nearest ``--up-to`` that keeps every tool call with its results."""
    from kimi_compact_tui.compaction.pairs import nearest_safe_up_to

    plan = prep.plan
    return nearest_safe_up_to(prep.session.messages, plan.boundary, plan.leading, prep.exchanges)


def split_advice(prep: Preparation) -> str:
    """What to do about a split: the nearest safe ``--up-to``, if there is one."""
    n = safe_up_to(prep)
    if n is None:
        return "no boundary keeps every tool call with its results"
    return f"--up-to {n} is the nearest boundary that keeps them together"


def split_json(prep: Preparation) -> dict[str, Any]:
    """``tool_splits`` and ``nearest_safe_up_to``: message numbers, 1-based as
    on the screen (``call_message``, ``result_messages``, and
    ``last_compacted_message``, the boundary)."""
    splits = tool_splits(prep)
    return {
        "tool_splits": [
            {
                "tool_call_id": s.tool_call_id,
                "call_message": s.call_index + 1,
                "result_messages": [i + 1 for i in s.result_indices],
                "last_compacted_message": s.boundary,
                "description": s.describe(),
            }
            for s in splits
        ],
        "nearest_safe_up_to": safe_up_to(prep) if splits else None,
    }


def write_split_lines(prep: Preparation, write: Any) -> None:
    """``SPLIT`` lines for ``plan`` and ``preview`` (nothing when there is no split)."""
    splits = tool_splits(prep)
    for split in splits:
        write(f"SPLIT    {visible(split.describe())}\n")
    if splits:
        write(
            f"         a history like this is rejected by OpenAI-compatible APIs; "
            f"{split_advice(prep)}\n"
        )


def warn_splits(prep: Preparation) -> None:
    """A boundary that splits a tool call from its result, for a summary not
    written over the session: one warning line (written in place, it is the
    job's refusal)."""
    splits = tool_splits(prep)
    if splits:
        what = "; ".join(s.describe() for s in splits)
        print(f"kimi-compact-tui: warning: {visible(what)}", file=sys.stderr)


# ----------------------------------------------------------------------------- refusals

#: What the command line adds to a refusal it has a flag for (by refusal kind).
CLI_OVERRIDES = {"split": " (or pass --allow-split to write it anyway)"}

#: The refusals the command line says in terms of its own flags (by refusal kind).
CLI_WORDS = {
    "given_summary": (
        "--instructions needs a model call; --from-summary alone writes the summary "
        "as it is (add --revise TEXT to have it revised)"
    ),
}


def refusal_error(refusal: Refusal) -> UserError:
    """The job's refusal as the command line says it: its one line (in terms
    of the flags for the few that are about one), and the flag that
    overrides it when there is one."""
    error = refusal.error()
    kind = refusal.kind.value
    error.message = CLI_WORDS.get(kind, refusal.message) + CLI_OVERRIDES.get(kind, "")
    return error


def refuse(ready: Readiness) -> None:
    """Raise the first of the job's refusals, as the command line says it."""
    if ready.first is not None:
        raise refusal_error(ready.first)

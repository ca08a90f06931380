"""Options and steps shared by the subcommands."""

from __future__ import annotations

import argparse
import gc
import json
import sys
from typing import Any

from kimi_compact_tui.compaction.pairs import ToolSplit, find_splits, nearest_safe_up_to
from kimi_compact_tui.config import AppConfig, load_config
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.job import CompactionJob, Preparation
from kimi_compact_tui.providers import PROVIDER_KINDS, ProviderConfig, provider_config_from
from kimi_compact_tui.sanitize import visible


def session_kinds() -> str:
    """What SESSION may be, from the registry (for the help text)."""
    return ", ".join(f.label for f in registry.FORMATS)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a message number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"messages are numbered from 1, got {text!r}")
    return value


def add_session_args(p: argparse.ArgumentParser, *, instructions: bool = False) -> None:
    p.add_argument(
        "session",
        metavar="SESSION",
        help=f"a session file or folder ({session_kinds()}), or a session id",
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


def provider_kinds() -> list[str]:
    """Every value ``--provider`` accepts, in the registry's order (docs/configuration.md lists the same)."""
    return list(PROVIDER_KINDS)


def provider_kind(text: str) -> str:
    """``--provider``'s type: an accepted kind, else a usage error listing them all."""
    if text.strip().lower() not in provider_kinds():
        raise argparse.ArgumentTypeError(
            f"unknown provider kind {text!r} (expected one of {', '.join(provider_kinds())})"
        )
    return text


def add_provider_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--provider",
        metavar="KIND",
        type=provider_kind,
        default=None,
        help=f"one of {', '.join(PROVIDER_KINDS)} (default: from config, else offline)",
    )
    p.add_argument("--model", metavar="M", default=None, help="model for the compaction request")
    p.add_argument("--base-url", metavar="URL", default=None, help="provider base URL")


def provider_config(config: AppConfig, args: argparse.Namespace) -> ProviderConfig:
    """The provider config from the config file's ``provider:`` block and flags."""
    return provider_config_from(
        config.provider,
        provider=getattr(args, "provider", None),
        base_url=getattr(args, "base_url", None),
        model=getattr(args, "model", None),
    )


def base_model(config: AppConfig, args: argparse.Namespace) -> str | None:
    return provider_config(config, args).model


def load_and_prepare(
    args: argparse.Namespace, *, for_write: bool = False
) -> tuple[CompactionJob, Preparation]:
    """Load the config and the session (the job's one load path) and prepare
    the compaction; ``for_write``: the job holds the loaded file's fingerprint
    (taken from the same bytes that were parsed) for a write."""
    config = load_config(args.config)
    # The loaded session lives until the command exits and holds no cycles: keep
    # its objects out of every later collection (each full pass would walk them
    # all again, e.g. while the tool-call pairs or the JSON output are built).
    # Frozen before the collector runs again: the first collection after the
    # load would otherwise walk every object the load made, once, for nothing.
    enabled = gc.isenabled()
    gc.disable()
    try:
        the_job = CompactionJob.load(
            args.session,
            config,
            for_write=for_write,
            prompt_file=args.prompt_file,
            base_model=base_model(config, args),
        )
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
    session = the_job.session
    warn_skipped(session)
    if args.up_to is not None and not 1 <= args.up_to <= len(session.messages):
        n = len(session.messages)
        raise UserError(
            f"{session.path}: --up-to {args.up_to} is out of range "
            f"(the session has {n} message{'' if n == 1 else 's'}, numbered 1 to {n})"
        )
    prep = the_job.prepare(
        up_to=args.up_to,
        custom_instruction=getattr(args, "instructions", "") or "",
        # An explicit --model is the request model, over any configured compaction_model.
        compaction_model=getattr(args, "model", None),
    )
    return the_job, prep


def warn_skipped(session: Session) -> None:
    """One stderr line per line the format skipped on load (as the agent does)."""
    for warning in session.warnings:
        print(f"kimi-compact-tui: warning: {visible(warning)}", file=sys.stderr)


def print_json(value: Any) -> None:
    """Pretty JSON on stdout. Long lists of plain numbers (message indices) are
    written on one line each: readable, and the C encoder writes them, not
    the slow pure-Python one that ``indent`` needs."""
    sys.stdout.write(_pretty(value, "") + "\n")


def _pretty(value: Any, pad: str) -> str:
    if isinstance(value, dict) and value:
        inner = pad + "  "
        items = (
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_pretty(v, inner)}"
            for k, v in value.items()
        )
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if (
        isinstance(value, list)
        and value
        and not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value)
    ):
        inner = pad + "  "
        return "[\n" + ",\n".join(inner + _pretty(x, inner) for x in value) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


# ----------------------------------------------------------------------------- tool splits


def tool_splits(prep: Preparation) -> list[ToolSplit]:
    """The tool calls the plan's boundary would cut off from their results."""
    return find_splits(prep.session.messages, prep.plan, prep.exchanges)


def safe_up_to(prep: Preparation) -> int | None:
    """The nearest ``--up-to`` that keeps every tool call with its results."""
    plan = prep.plan
    return nearest_safe_up_to(prep.session.messages, plan.boundary, plan.leading, prep.exchanges)


def split_advice(prep: Preparation) -> str:
    """What to do about a split: the nearest safe ``--up-to``, if there is one."""
    n = safe_up_to(prep)
    if n is None:
        return "no boundary keeps every tool call with its results"
    return f"--up-to {n} is the nearest boundary that keeps them together"


def split_json(prep: Preparation) -> dict[str, Any]:
    """``tool_splits`` (0-based indices, like the plan's) and ``nearest_safe_up_to``."""
    splits = tool_splits(prep)
    return {
        "tool_splits": [
            {
                "tool_call_id": s.tool_call_id,
                "call_index": s.call_index,
                "result_indices": list(s.result_indices),
                "boundary": s.boundary,
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


def check_splits(prep: Preparation, *, refuse: bool) -> None:
    """Before a write: a boundary that splits a tool call from its result is
    refused (``refuse``: an in-place write without ``--allow-split``, one line
    naming the messages and the nearest safe ``--up-to``) or warned about."""
    splits = tool_splits(prep)
    if not splits:
        return
    what = "; ".join(s.describe() for s in splits)
    if refuse:
        raise UserError(
            f"{prep.session.path}: the boundary splits a tool call from its result: "
            f"{what}; {split_advice(prep)} (or pass --allow-split to write it anyway)"
        )
    print(f"kimi-compact-tui: warning: {visible(what)}", file=sys.stderr)

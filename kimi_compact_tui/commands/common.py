"""Options and steps shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kimi_compact_tui.config import AppConfig, load_config
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.model import Session
from kimi_compact_tui.providers import provider_config_from


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a message number, got {text!r}") from None
    return value


def add_session_args(p: argparse.ArgumentParser, *, instructions: bool = False) -> None:
    p.add_argument(
        "session",
        metavar="SESSION",
        help="context.jsonl, a kimi-cli session folder, " "or an OpenAI-style .json/.jsonl file",
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


def add_provider_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--provider",
        metavar="KIND",
        default=None,
        help="openai, moonshot, ollama or offline (default: from config, else offline)",
    )
    p.add_argument("--model", metavar="M", default=None, help="model for the compaction request")
    p.add_argument("--base-url", metavar="URL", default=None, help="provider base URL")


def provider_config(config: AppConfig, args: argparse.Namespace) -> Any:
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
    args: argparse.Namespace, *, job: bool = False, fingerprint: bool = False
) -> Any:
    """Load the config and the session and prepare the compaction: returns
    ``(session, config, preparation)``, or with ``job=True`` ``(job,
    preparation)``; with ``fingerprint`` the job holds the loaded file's
    fingerprint (taken from the same bytes that were parsed) for a write."""
    from kimi_compact_tui.compaction.job import CompactionJob

    config = load_config(args.config)
    options = {"prompt_file": args.prompt_file, "base_model": base_model(config, args)}
    if fingerprint:
        the_job = CompactionJob.load(args.session, config, **options)
    else:
        the_job = CompactionJob(load_session(args.session), config, None, **options)
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
    if job:
        return the_job, prep
    return session, config, prep


def warn_skipped(session: Session) -> None:
    """One stderr line per line the format skipped on load (as the agent does)."""
    from kimi_compact_tui.tui.sanitize import visible

    for warning in session.warnings:
        print(f"kimi-compact-tui: warning: {visible(warning)}", file=sys.stderr)


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")

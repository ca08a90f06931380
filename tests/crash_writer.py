"""Helper process for the crash tests: apply a compaction to a session file.

    python tests/crash_writer.py SESSION --summary TEXT [--output-tokens N]
        [--exit-at-call K] [--exit-at-step NAME]
    python tests/crash_writer.py SESSION --restore [--exit-at-call K]

It loads the session, takes its fingerprint, builds the compaction (default
plan) and applies it. ``ready`` is printed (and flushed) just before the
apply starts, ``done`` when it returned. ``--exit-at-call K`` makes the
process ``os._exit(99)`` right before its K-th file-system call during the
apply (``os.open``, ``os.write``, ``os.fsync``, ``os.link``, ``os.rename``,
``os.replace``, ``os.unlink``, ``os.chmod``, ``os.utime``, ``os.close``);
``--exit-at-step`` exits at a named step of :mod:`kimi_compact_tui.formats.durable`.
The number of calls made is printed after ``done`` as ``calls N``. With
``--restore`` it runs :func:`kimi_compact_tui.store.restore` instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kimi_compact_tui import store as apply_mod  # noqa: E402
from kimi_compact_tui.compaction import make_plan  # noqa: E402
from kimi_compact_tui.formats import durable as durable_mod  # noqa: E402
from kimi_compact_tui.formats import load_session  # noqa: E402
from kimi_compact_tui.job import build_compacted_session  # noqa: E402
from kimi_compact_tui.store import Provenance  # noqa: E402

WRAPPED = (
    "open",
    "write",
    "fsync",
    "link",
    "rename",
    "replace",
    "unlink",
    "chmod",
    "utime",
    "close",
)
CRASH_CODE = 99


def install_call_counter(exit_at: int | None) -> list[int]:
    counter = [0]

    def wrap(name: str):
        real = getattr(os, name)

        def wrapper(*args, **kwargs):
            counter[0] += 1
            if exit_at is not None and counter[0] == exit_at:
                os._exit(CRASH_CODE)
            return real(*args, **kwargs)

        return wrapper

    for name in WRAPPED:
        setattr(os, name, wrap(name))
    return counter


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("session")
    parser.add_argument("--summary", default="")
    parser.add_argument("--restore", action="store_true")
    parser.add_argument("--output-tokens", type=int, default=None)
    parser.add_argument("--exit-at-call", type=int, default=None)
    parser.add_argument("--exit-at-step", default=None)
    args = parser.parse_args()

    path = Path(args.session)
    if args.restore:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        counter = install_call_counter(args.exit_at_call)
        apply_mod.restore(path)
        sys.stdout.write(f"done\ncalls {counter[0]}\n")
        sys.stdout.flush()
        return 0
    fp = apply_mod.fingerprint(path)
    session = load_session(path)
    plan = make_plan(session.messages)
    compacted = build_compacted_session(
        session, plan, args.summary, output_tokens=args.output_tokens
    )
    if args.exit_at_step is not None:

        def hook(step: str) -> None:
            if step == args.exit_at_step:
                os._exit(CRASH_CODE)

        durable_mod._step_hook = hook
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    counter = install_call_counter(args.exit_at_call)
    apply_mod.apply_compaction(
        session,
        compacted,
        loaded_fingerprint=fp,
        summary=args.summary,
        plan=plan,
        provenance=Provenance(prompt=None, provider="crash-test", model="none", usage=None),
    )
    calls = counter[0]
    sys.stdout.write(f"done\ncalls {calls}\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

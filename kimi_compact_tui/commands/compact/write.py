"""Where and how ``compact`` writes: ``--output FILE`` (a new file) and
``--in-place`` (:func:`write_in_place`: the job's write refusals, the
question on the terminal, then the job's commit).

`--output FILE`:

- An existing file is refused (before any request) unless ``--force``.
- The session being compacted is never the output, ``--force`` or not,
  however it is named: the same path, ``./x``, ``a/../x``, a symlink to it, a
  hard link to it, or the session file inside the folder given as SESSION.
  Paths are compared resolved, and an existing file by identity (device and
  inode).
- The write is atomic: a temporary file beside the target, fsynced, then
  linked into place, which fails if a file appeared there meanwhile (nothing
  is replaced that the user did not name with ``--force``); with ``--force``
  it is renamed over the old file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.commands.common import refuse
from kimi_compact_tui.errors import ApplyError, SessionFormatError, UserError
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.wording import count, number

if TYPE_CHECKING:
    from kimi_compact_tui.commands.compact.options import CompactOptions
    from kimi_compact_tui.commands.compact.run import CompactionRun
    from kimi_compact_tui.store import ApplyResult

NEW_FILE_MODE = 0o600  # as a session file: it holds the conversation


def _session_file(session: str | Path) -> Path | None:
    """The session file SESSION names, or None when it does not resolve (the
    load then says why, in its own words)."""
    from kimi_compact_tui.formats import resolve

    try:
        return resolve(session).path
    except SessionFormatError:
        return None


def is_same_file(out: Path, session: Path) -> bool:
    """``out`` names ``session``: by resolved path, or as the same file."""
    try:
        if out.resolve() == session.resolve():
            return True
    except (OSError, RuntimeError):  # a symlink loop is not the session
        return False
    try:
        return os.path.samefile(out, session)
    except OSError:  # either one missing or unreadable: not the same file
        return False


def refuse_the_session(out: Path, session: Path | None) -> None:
    if session is not None and is_same_file(out, session):
        raise UserError(
            f"{out}: --output is the session being compacted ({session}); it is never "
            "written over, even with --force (write over the source with --in-place)"
        )


def output_target(opts: CompactOptions) -> Path | None:
    """Check ``--output`` before anything is loaded or requested: the folder
    exists, it is not the session, and it is not an existing file (unless
    ``--force``). Returns the path, or None when there is no ``--output``."""
    force = opts.force
    if not opts.output:
        if force:
            raise UserError("--force goes with --output FILE (it allows replacing that file)")
        return None
    out = Path(opts.output).expanduser()
    refuse_the_session(out, _session_file(opts.session.session))
    if out.is_dir():
        raise UserError(f"{out}: --output is a folder; give a file name")
    parent = out.parent
    if not parent.exists():
        raise UserError(f"{parent}: folder for --output does not exist")
    if not parent.is_dir():
        raise UserError(f"{parent}: --output's folder is not a folder")
    if os.path.lexists(out) and not force:
        raise UserError(f"{out}: --output exists; pass --force to replace it")
    from kimi_compact_tui.job.refusals import unwritable

    why = unwritable(parent)  # said before the request, not after it
    if why is not None:
        raise UserError(f"{out}: --output cannot be written: {why} ({parent})")
    return out


def write_output(data: bytes, out: Path, session: Path, *, force: bool) -> None:
    """Write the compacted session's bytes to ``out`` atomically (see the module
    docstring); ``session`` is the file that was compacted."""
    from kimi_compact_tui.formats.durable import os_error_line, write_new_file
    from kimi_compact_tui.fsutil import atomic_write_bytes

    refuse_the_session(out, session)
    try:
        if force:
            atomic_write_bytes(out, data)
            return
        made = write_new_file(out.parent, [out.name], data, NEW_FILE_MODE, None)
    except OSError as exc:
        raise ApplyError(os_error_line(out, exc, "write the compacted session")) from None
    if made is None:
        raise ApplyError(
            f"{out}: a file appeared there while the summary was made; not written over "
            "(pass --force to replace it)"
        )


def write_in_place(
    opts: CompactOptions,
    run_: CompactionRun,
    *,
    stdin: Any = None,
    out: Any = None,
) -> ApplyResult | None:
    """``--in-place``: the job's write refusals (computed before the request;
    a split history unless ``--allow-split``), ask on the terminal (unless
    ``--yes``), then commit the draft through the job. Returns the store's
    ApplyResult, or None when the answer is no."""

    stdin = stdin if stdin is not None else sys.stdin
    out = out if out is not None else sys.stderr
    draft, job = run_.draft, run_.job
    assert draft is not None and job is not None
    allow_split = opts.allow_split
    ready = run_.ready
    if ready is None:  # a run made without the command's own start
        ready = job.readiness(draft.preparation, request=False, write=True, allow_split=allow_split)
    refuse(ready)
    if not opts.yes:
        isatty = getattr(stdin, "isatty", None)
        if not (callable(isatty) and isatty()):
            raise UserError(
                f"{run_.session.ref}: not written: --in-place asks for confirmation on a "
                "terminal and there is none; pass --yes to write without asking"
            )
        fmt = run_.session.format
        how = fmt.storage.keeps
        notes = fmt.write_notes
        grows = draft.growth_warning()
        out.write(
            f"Write the compacted session over {run_.session.ref}?\n"
            f"  {count(len(run_.session.messages), 'message')} → {number(len(draft.compacted.messages))}; "
            f"the current file is {how} first.\n"
            + (f"  warning: {grows}\n" if grows else "")
            + "".join(f"  {visible(note)}\n" for note in notes)
            + "Write it? [y/N] "
        )
        out.flush()
        if stdin.readline().strip().lower() not in ("y", "yes"):
            out.write("Not written.\n")
            return None
    result = job.commit(draft, run_.provider, allow_split=allow_split, ready=ready)
    out.write(result.describe() + "\n")
    return result


#: Where a summary refused by a session that grew meanwhile is kept (under the state folder).
SUMMARIES = "summaries"


def keep_for_the_grown_session(opts: CompactOptions, run_: CompactionRun) -> str | None:
    """A write refused because the agent appended turns while the summary was
    made: when the summary still holds (only turns after the compacted range
    were added), keep it in a file and return the one line that says how to
    write it on the grown session (``--from-summary`` with the same range);
    else None."""
    import shlex

    from kimi_compact_tui.fsutil import atomic_write_bytes
    from kimi_compact_tui.samples import state_dir
    from kimi_compact_tui.store.write import now_utc

    draft = run_.draft
    if draft is None or run_.job.regrown(run_.preparation) is None:
        return None
    ref = run_.session.ref
    stamp = now_utc(None).strftime("%Y%m%dT%H%M%SZ")
    name = Path(str(run_.session.path)).name
    saved = state_dir() / SUMMARIES / f"{name}.summary-{stamp}.md"
    try:
        saved.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write_bytes(saved, draft.summary.encode("utf-8"), mode=0o600)
    except OSError:
        return None
    n = run_.plan.boundary
    command = shlex.join(
        ["kimi-compact-tui", "compact", str(ref), "--from-summary", str(saved)]
        + ["--up-to", str(n), "--in-place"]
    )
    return (
        f"{ref}: changed on disk since it was loaded: the agent added turns after the "
        f"compacted range, so nothing was written; the summary still holds for messages "
        f"1–{n} and is kept in {saved}: {command} writes it on the grown session, the new "
        "turns in the kept tail"
    )

"""`compact SESSION --repair`: put what the agent's latest own summary lost into
that summary, in place.

The agent resumes from the summary of its latest compaction. When the messages
that compaction replaced are still on disk (the ledger reads them back), the
retention report says what its summary lost; the anchor block of those items
(the same block as ``compact --anchor``) is added to that summary message,
rewritten in the agent's own shape by ``formats/<agent>/repair.py`` (the plan and
the write are ``job/ledger.py``'s, shared with the TUI), with every
other byte of the file unchanged. The block is shown first and the write asks
(``--yes`` does not). The file as it was is kept as a restore point, and the
audit record makes ``restore`` put those bytes back. Earlier compactions are
history (the agent no longer resumes them): the ledger lists them, repair does
not touch them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.wording import count

if TYPE_CHECKING:
    from kimi_compact_tui.commands.compact.options import CompactOptions


def run_repair(opts: CompactOptions) -> int:
    from kimi_compact_tui.formats.loader import load
    from kimi_compact_tui.job.ledger import repair_plan, write_repair

    given = {
        "--output": opts.output,
        "--up-to": opts.session.up_to,
        "--from-summary": opts.from_summary,
        "--anchor": opts.anchor,
    }
    for option, value in given.items():
        if value:
            raise UserError(f"--repair works on the agent's own summary; drop {option}")
    if not opts.yes and not sys.stdin.isatty():
        raise UserError(
            f"{opts.session.session}: --repair asks for confirmation on a terminal and there is none; "
            "pass --yes to write without asking"
        )
    loaded = load(opts.session.session, hashed=True)
    session = loaded.session
    where = session.ref
    plan = repair_plan(session, opts.anchor_budget)
    agent, latest, anchored = plan.agent, plan.latest, plan.anchored
    if not plan.needed:
        print(f"nothing to repair: {agent}'s latest summary keeps every item the retention "
              "report checks")  # fmt: skip
        return 0
    shown = sys.stdout.write
    shown(f"{agent}'s latest summary ({latest.time}) loses {count(len(anchored.items), 'item')}; "
          "this block goes into it:\n")  # fmt: skip
    shown(anchored.block.rstrip("\n") + "\n")
    if anchored.note():
        shown(f"{anchored.note()}\n")
    if not opts.yes:
        answer = input(f"repair {where} in place? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("nothing written")
            return 0
    result, warnings = write_repair(plan, loaded.fingerprint)
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    print(f"repaired: {result['path']} (restore point {result['backup']}; "
          f"`kimi-compact-tui restore {where}` undoes it)")  # fmt: skip
    return 0

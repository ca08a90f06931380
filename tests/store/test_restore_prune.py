"""``restore --dry-run`` and ``restore --prune [--keep N]`` on real session
files written by this tool through the command line (the offline provider)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from kimi_compact_tui import store
from kimi_compact_tui.job import RefusalKind
from kimi_compact_tui.job.offers import offer_for, undo_offer
from tests.cli_fixtures import cli_main  # noqa: F401  (fixture)
from tests.factories.writers import write_claude_code, write_kimi_cli


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(folder: Path) -> dict[str, str]:
    return {p.name: sha(p) for p in folder.rglob("*") if p.is_file()}


def two_rounds(cli_main, session: Path) -> None:  # noqa: F811
    """Compact, undo, compact again: two backups made by this tool (a journal's
    undo cuts it back, keeping no copy)."""
    for argv in (
        ("compact", session, "--provider", "offline", "--in-place", "--yes"),
        ("restore", session, "--yes"),
        ("compact", session, "--provider", "offline", "--in-place", "--yes"),
    ):
        done = cli_main(*argv)
        assert done.code == 0, done.stderr


@pytest.fixture
def claude(tmp_path: Path, cli_main) -> Path:  # noqa: F811
    session = write_claude_code(tmp_path / "cc")
    two_rounds(cli_main, session)
    return session


def test_prune_removes_only_what_the_audit_log_says_this_tool_made(claude, cli_main):  # noqa: F811
    session = claude
    points = store.restore_points(session)
    ours = [p for p in points if p.ours]
    assert len(ours) >= 2, [p.path.name for p in points]
    undo_source = store.undo_plan(session).source
    # A file named like a backup that the audit log does not name: never touched.
    folder = ours[0].path.parent
    foreign = folder / f"{session.name}.bak-20200101T000000Z"
    foreign.write_bytes(b"made by hand\n")
    before_session = sha(session)

    done = cli_main("restore", session, "--prune", "--keep", "0", "--yes")
    assert done.code == 0, done.stderr
    left = {p.path for p in store.restore_points(session)}
    assert undo_source in left and foreign in left
    assert foreign.read_bytes() == b"made by hand\n" and sha(session) == before_session
    removed = [p.path for p in ours if p.path != undo_source]
    assert removed and not any(p.exists() for p in removed)
    assert "untouched" in done.stdout and foreign.name in done.stdout
    # The undo still works after the prune: its copy was kept.
    undone = cli_main("restore", session, "--yes")
    assert undone.code == 0, undone.stderr
    records = store.read_audit(session, store.locate(session).format)
    assert [r["action"] for r in records].count("prune") == 1


def test_prune_keeps_the_n_newest_and_a_changed_copy(claude, cli_main):  # noqa: F811
    session = claude
    ours = [p for p in store.restore_points(session) if p.ours]  # newest first
    undo_source = store.undo_plan(session).source
    oldest = ours[-1].path
    assert oldest != undo_source
    oldest.write_bytes(oldest.read_bytes() + b"\n")  # changed since this tool made it
    done = cli_main("restore", session, "--prune", "--keep", "1", "--yes")
    assert done.code == 0, done.stderr
    assert oldest.exists() and "changed since this tool made it" in done.stdout
    assert undo_source.exists()


def test_prune_asks_and_a_dry_run_changes_nothing(claude, cli_main):  # noqa: F811
    session = claude
    folder = session.parent
    before = listing(folder.parent)
    dry = cli_main("restore", session, "--prune", "--keep", "0", "--dry-run")
    assert dry.code == 0, dry.stderr
    assert "would remove" in dry.stdout and "nothing was changed" in dry.stdout
    refused = cli_main("restore", session, "--prune", "--keep", "0")  # no terminal, no --yes
    assert refused.code == 2 and refused.stderr.count("\n") == 1
    assert "not pruned" in refused.stderr and "--yes" in refused.stderr
    assert listing(folder.parent) == before


def test_prune_json_names_what_it_removed(claude, cli_main):  # noqa: F811
    import json

    done = cli_main("restore", claude, "--prune", "--keep", "0", "--yes", "--json")
    assert done.code == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["removed"] == [p["path"] for p in data["remove"]] and data["removed"]
    assert all(not Path(p).exists() for p in data["removed"])


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--keep", "2"], "--keep goes with --prune"),
        (["--prune", "--point", "x"], "--prune goes alone"),
        (["--prune", "--keep", "-1"], "must be 0 or more"),
    ],
)
def test_bad_prune_options_are_one_line(tmp_path, cli_main, argv, says):  # noqa: F811
    session = write_kimi_cli(tmp_path / "k")
    done = cli_main("restore", session, *argv)
    assert done.code == 2 and done.stderr.count("\n") == 1 and says in done.stderr


# ----------------------------------------------------------------------------- --dry-run


def test_dry_run_says_the_file_the_point_and_what_is_lost(tmp_path, cli_main):  # noqa: F811
    session = store.locate(write_kimi_cli(tmp_path / "k")).path
    done = cli_main("compact", session, "--provider", "offline", "--in-place", "--yes")
    assert done.code == 0, done.stderr
    before = listing(session.parent)
    offer = undo_offer(session)
    assert offer.point is not None
    dry = cli_main("restore", session, "--dry-run")
    assert dry.code == 0, dry.stderr
    out = dry.stdout
    assert str(session) in out and offer.point.path.name in out
    after = store.locate(session)
    n_now = len(after.format.storage.current(after.ref).data)
    assert f"{n_now:,} bytes" in out
    assert "leave the live session, which holds the point's" in out
    assert "nothing was changed" in out
    assert listing(session.parent) == before  # nothing written, not even the audit log


def test_dry_run_says_a_change_since_the_write(tmp_path, cli_main):  # noqa: F811
    session = store.locate(write_kimi_cli(tmp_path / "k")).path
    assert cli_main("compact", session, "--provider", "offline", "--in-place", "--yes").code == 0
    with session.open("ab") as f:
        f.write(b'{"role": "user", "content": "one more turn"}\n')
    dry = cli_main("restore", session, "--dry-run")
    assert dry.code == 0, dry.stderr
    assert "changed" in dry.stdout and "--force" in dry.stdout


def test_nothing_to_undo_is_a_typed_refusal(tmp_path, cli_main):  # noqa: F811
    session = write_kimi_cli(tmp_path / "k")
    offer = offer_for(session)
    assert offer.refusal is not None and offer.refusal.kind is RefusalKind.NOTHING_TO_UNDO
    dry = cli_main("restore", session, "--dry-run")
    assert dry.code == 2 and offer.refusal.message in dry.stderr


def test_dry_run_of_a_picked_point_names_it_and_changes_nothing(tmp_path, cli_main):  # noqa: F811
    session = store.locate(write_kimi_cli(tmp_path / "k")).path
    assert cli_main("compact", session, "--provider", "offline", "--in-place", "--yes").code == 0
    (point,) = store.restore_points(session)
    before = listing(session.parent)
    dry = cli_main("restore", session, "--point", point.path.name, "--dry-run")
    assert dry.code == 0, dry.stderr
    assert f"point    {point.path.name} (" in dry.stdout and "kept first as" in dry.stdout
    assert listing(session.parent) == before
    unknown = cli_main("restore", session, "--point", "nope", "--dry-run")
    assert unknown.code == 2 and "is not a restore point" in unknown.stderr

"""`compact --output FILE`: an existing file is refused
(exit 2, one line naming it, before any request) unless ``--force``, and
``--force`` never writes over the session being compacted, however it is
named (the same path, ``./x``, a symlink, a hard link, the file inside a
session folder). The write is atomic, and a file that appears while the
summary streams is not replaced either."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kimi_compact_tui.formats import load_session
from tests.factories import conversation, write_session
from tests.loopback_server import openai_sse


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def remote(loopback) -> list[str]:
    """A real provider on 127.0.0.1: any request it gets is recorded."""
    return ["--provider", "openai", "--base-url", loopback.base_url, "--model", "m"]


def assert_one_line_refusal(result, *needles: str) -> None:
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and "usage:" not in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return write_session(tmp_path, "openai-json", conversation(8))


def test_an_existing_file_is_refused_before_any_request(cli_main, session, loopback, tmp_path):
    other = write_session(tmp_path, "openai-jsonl", conversation(3), "other-session")
    before = listing(tmp_path)
    result = cli_main("compact", session, "--output", other, *remote(loopback))
    assert_one_line_refusal(result, str(other), "exists", "--force")
    assert loopback.requests == []
    assert listing(tmp_path) == before


def test_force_replaces_an_existing_file_atomically(cli_main, session, loopback, tmp_path):
    loopback.script([openai_sse(["<current_focus>\nfixing\n</current_focus>"])])
    other = tmp_path / "other.json"
    other.write_text("an older compaction\n", encoding="utf-8")
    result = cli_main("compact", session, "--output", other, "--force", *remote(loopback))
    assert result.code == 0, result.stderr
    assert len(loopback.requests) == 1
    written = load_session(other)
    assert "fixing" in written.messages[1].text()
    # Nothing left behind: no temporary file beside it, the session untouched.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.json", "session.json"]
    assert json.loads(session.read_text(encoding="utf-8")) == conversation(8)


def _same_path(session: Path, tmp_path: Path, monkeypatch) -> Path:
    return session


def _dot_relative(session: Path, tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return Path(".") / session.name


def _symlink(session: Path, tmp_path: Path, monkeypatch) -> Path:
    link = tmp_path / "link.json"
    link.symlink_to(session)
    return link


def _hard_link(session: Path, tmp_path: Path, monkeypatch) -> Path:
    link = tmp_path / "hard.json"
    os.link(session, link)
    return link


def _parent_dotdot(session: Path, tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "sub").mkdir()
    return tmp_path / "sub" / ".." / session.name


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
@pytest.mark.parametrize(
    "name_it", [_same_path, _dot_relative, _symlink, _hard_link, _parent_dotdot]
)
def test_the_session_itself_is_never_the_output(
    cli_main, session, loopback, tmp_path, monkeypatch, name_it, force
):
    target = name_it(session, tmp_path, monkeypatch)
    before = listing(tmp_path)
    extra = ["--force"] if force else []
    result = cli_main("compact", session, "--output", target, *extra, *remote(loopback))
    assert_one_line_refusal(result, "the session being compacted")
    assert loopback.requests == []
    assert listing(tmp_path) == before


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_the_file_inside_a_session_folder_is_the_session(
    cli_main, loopback, tmp_path, monkeypatch, force
):
    folder = write_session(tmp_path, "kimi", conversation(8)).parent
    monkeypatch.chdir(folder)
    before = listing(folder)
    extra = ["--force"] if force else []
    result = cli_main("compact", folder, "--output", "context.jsonl", *extra, *remote(loopback))
    assert_one_line_refusal(result, "the session being compacted")
    assert loopback.requests == []
    assert listing(folder) == before


def test_a_file_that_appears_while_streaming_is_not_replaced(
    cli_main, session, tmp_path, monkeypatch
):
    """The check before the request is not the last word: the write itself
    never replaces a file it was not told to replace."""
    from kimi_compact_tui.commands.compact import output

    out = tmp_path / "out.json"
    real = output.announce

    def announce_then_someone_writes(*args, **kwargs):
        real(*args, **kwargs)
        out.write_text("written by someone else meanwhile\n", encoding="utf-8")

    monkeypatch.setattr(output, "announce", announce_then_someone_writes)
    result = cli_main("compact", session, "--output", out)
    assert result.code == 2, result.stderr
    errors = result.error_lines
    assert len(errors) == 1 and str(out) in errors[0] and "--force" in errors[0], errors
    assert out.read_text(encoding="utf-8") == "written by someone else meanwhile\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "session.json"]


def test_force_without_output_is_a_usage_error(cli_main, session):
    result = cli_main("compact", session, "--force")
    assert_one_line_refusal(result, "--force", "--output")

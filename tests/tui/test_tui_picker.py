"""The session picker and kimi-cli session discovery.

A kimi-cli session is labelled by its title (``state.json``'s
``custom_title``, else the first ``TurnBegin`` user input in ``wire.jsonl``,
else the first user message) and its work folder (``kimi.json``), not by its
UUID; one that cannot be parsed is flagged with one line saying why. The
labels are read from the ends of the files, never the whole session.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from kimi_compact_tui.formats.base import SessionInfo
from kimi_compact_tui.formats.kimi_cli import discover as kimi_discover
from kimi_compact_tui.formats.kimi_cli.discover import discover
from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.picker import (
    ERROR_MARK,
    PickerScreen,
    sample_sessions,
    session_label,
)
from tests.factories.kimi_cli import kimi_line, share_session, write_kimi_json
from tests.tui_support import cells_text, press_and_settle, settle

WORK = "/home/dev/ledger-service"
OTHER_WORK = "/home/dev/网站"
SIZE = (100, 40)


CHAT = [
    {"role": "user", "content": "The nightly import crashes on March statements"},
    {"role": "assistant", "content": "Let me look at the importer."},
    {"role": "user", "content": [{"type": "text", "text": "and the tests too"}]},
]


def populated_share(root: Path) -> Path:
    share = root / "share"
    write_kimi_json(share, WORK, OTHER_WORK)
    share_session(share, WORK, "aaaa-wire", CHAT, wire_title="Fix the importer", mtime=3000)
    share_session(share, WORK, "bbbb-first-user", CHAT, mtime=2000)
    share_session(share, OTHER_WORK, "cccc-custom", CHAT, custom_title="重构订单模块", mtime=1000)
    bad = kimi_line(CHAT[0]) + "\n" + '{"role":"assistant","content":"half\n'
    share_session(share, WORK, "dddd-broken", raw=bad.encode(), mtime=500)
    return share


def by_id(sessions: list[SessionInfo]) -> dict[str, SessionInfo]:
    return {s.session_id: s for s in sessions}


def test_discover_labels_by_title_and_work_folder(tmp_path):
    share = populated_share(tmp_path)
    found = discover({"KIMI_SHARE_DIR": str(share)}, tmp_path / "nobody")
    assert [s.session_id for s in found] == [
        "aaaa-wire",
        "bbbb-first-user",
        "cccc-custom",
        "dddd-broken",
    ]  # newest first
    sessions = by_id(found)
    assert sessions["aaaa-wire"].title == "Fix the importer"  # wire.jsonl's first TurnBegin
    first_user = sessions["bbbb-first-user"]
    assert first_user.title == "The nightly import crashes on March statements"
    assert sessions["cccc-custom"].title == "重构订单模块"  # state.json custom_title
    assert sessions["cccc-custom"].work_dir == OTHER_WORK
    assert first_user.work_dir == WORK
    assert first_user.message_count == 3  # special records are not messages
    assert first_user.updated == 2000
    assert first_user.format == "kimi" and first_user.error is None
    assert first_user.path == share / "sessions" / hashlib.md5(WORK.encode()).hexdigest() / (
        "bbbb-first-user"
    )


def test_discover_uses_home_kimi_without_share_dir(tmp_path):
    share = tmp_path / "home" / ".kimi"
    share_session(share, WORK, "eeee", CHAT)
    found = discover({}, tmp_path / "home")
    assert [s.title for s in found] == ["The nightly import crashes on March statements"]
    assert found[0].work_dir is None  # no kimi.json: the folder is unknown, not guessed
    assert discover({}, tmp_path / "elsewhere") == []


def test_discover_flags_sessions_it_cannot_parse(tmp_path):
    share = tmp_path / "share"
    ok = kimi_line(CHAT[0]) + "\n"
    share_session(share, WORK, "half-written", raw=(ok + '{"role":"user","con').encode())
    share_session(share, WORK, "not-json", raw=(ok + "hello there\n" + ok).encode())
    share_session(share, WORK, "no-role", raw=(ok + '{"content": "x"}\n').encode())
    share_session(share, WORK, "latin1", raw=ok.encode() + b'{"role":"user","content":"\xe9"}\n')
    folder = share_session(share, WORK, "no-context", [], wire_title="Orphan wire")
    (folder / "context.jsonl").unlink()
    # a big session whose last line was cut: found from the tail alone
    big = ok * 20_000 + '{"role":"assistant","content":"cut'
    share_session(share, WORK, "big-cut", raw=big.encode())
    long_cut = ok * 3 + '{"role":"tool","content":"' + "x" * 200_000
    share_session(share, WORK, "long-last-line-cut", raw=long_cut.encode())
    long_ok = ok * 3 + '{"role":"tool","content":"' + "x" * 200_000 + '"}\n'
    share_session(share, WORK, "long-last-line-ok", raw=long_ok.encode())
    sessions = by_id(discover({"KIMI_SHARE_DIR": str(share)}, tmp_path))
    errors = {k: v.error for k, v in sessions.items()}
    assert errors["half-written"] == "context.jsonl: line 2 is not valid JSON"
    assert errors["not-json"] == "context.jsonl: line 2 is not valid JSON"
    assert errors["no-role"] == "context.jsonl: line 2 is not a kimi-cli record (no role)"
    assert errors["latin1"] == "context.jsonl: line 2 is not UTF-8"
    assert errors["no-context"] == "no context.jsonl in the session folder"
    assert errors["big-cut"] == "context.jsonl: the last line is not valid JSON (cut short?)"
    assert errors["long-last-line-cut"] == errors["big-cut"]
    assert errors["long-last-line-ok"] is None
    assert sessions["no-context"].title == "Orphan wire"
    assert sessions["big-cut"].title == CHAT[0]["content"]
    for error in filter(None, errors.values()):
        assert "\n" not in error


def test_discover_reads_only_the_ends_of_a_large_session(tmp_path, monkeypatch):
    share = tmp_path / "share"
    ok = kimi_line(CHAT[1]) + "\n"
    share_session(share, WORK, "huge", raw=(kimi_line(CHAT[0]) + "\n" + ok * 400_000).encode())
    path = share / "sessions" / hashlib.md5(WORK.encode()).hexdigest() / "huge" / "context.jsonl"
    size = path.stat().st_size
    assert size > 10 * kimi_discover.PROBE_BYTES
    monkeypatch.setattr(kimi_discover, "COUNT_LIMIT", size // 2)  # too big to count
    reads: list[int] = []
    real_open = Path.open

    def counting_open(self, mode="r", *args, **kwargs):
        handle = real_open(self, mode, *args, **kwargs)
        if self.name == "context.jsonl":
            read = handle.read

            def counted(n=-1):
                data = read(n)
                reads.append(len(data))
                return data

            handle.read = counted
        return handle

    monkeypatch.setattr(Path, "open", counting_open)
    (info,) = discover({"KIMI_SHARE_DIR": str(share)}, tmp_path)
    assert info.title == CHAT[0]["content"] and info.error is None
    assert info.message_count is None  # not counted above the limit
    assert sum(reads) <= 2 * kimi_discover.PROBE_BYTES


def test_discover_many_sessions(tmp_path):
    share = tmp_path / "share"
    write_kimi_json(share, WORK)
    for i in range(1500):
        share_session(share, WORK, f"s{i:04d}", CHAT, wire_title=f"task {i}")
    found = discover({"KIMI_SHARE_DIR": str(share)}, tmp_path)
    assert len(found) == 1500 and all(s.title and s.title.startswith("task ") for s in found)
    # Its speed (a shared machine makes wall time noise): benchmarks/discover_bench.py.


def test_label_shows_title_folder_count_and_flag():
    ok = SessionInfo(Path("/x/abc"), "kimi", title="Fix it", work_dir=WORK, message_count=1)
    text = session_label(ok).plain
    assert text.startswith("kimi-cli  Fix it") and WORK in text and "1 message" in text
    broken = SessionInfo(Path("/x/dead-beef"), "kimi", session_id="dead-beef", error="line 3 bad")
    lines = session_label(broken).plain.split("\n")
    assert lines[0].startswith("✗ kimi-cli  (untitled) dead-beef")
    assert lines[-1].strip() == "✗ cannot open: line 3 bad"
    markup = SessionInfo(Path("/x/m"), "kimi", title="[bold]x[/bold] \x1b[2J")
    assert "[bold]x[/bold] ␛[2J" in session_label(markup).plain  # text, never markup


def test_samples_are_listed():
    names = {s.path.name for s in sample_sessions()}
    assert {"kimi-debugging-session", "openai-retry-refactor.json"} <= names


async def test_picker_rows_name_sessions_and_flag_broken_ones(tmp_path, monkeypatch):
    share = populated_share(tmp_path)
    monkeypatch.setenv("KIMI_SHARE_DIR", str(share))
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        text = cells_text(app)
        assert "Fix the importer" in text
        assert "The nightly import crashes on March statements" in text  # no wire.jsonl
        assert "重构订单模块" in text and OTHER_WORK in text
        assert WORK in text and "3 messages" in text
        assert "bbbb-first-user" not in text.split("\n")[0]
        assert "✗ cannot open: context.jsonl: line 2 is not valid JSON" in text
        note = str(app.screen.query_one("#picker-note").render())
        assert note.startswith("4 kimi-cli sessions under ") and "1 cannot be opened" in note
        assert "kimi-debugging-session" in text  # the samples follow
        names = [e.path.name for e in app.screen.entries]
        await press_and_settle(pilot, *["down"] * names.index("bbbb-first-user"), "enter")
        assert not isinstance(app.screen, PickerScreen)
        assert app.state.session is not None
        assert app.state.session_path.parent.name == "bbbb-first-user"
        assert app.message_list.message_count == 3


async def test_picker_with_no_kimi_sessions_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("KIMI_SHARE_DIR", str(tmp_path / "empty"))
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        note = str(app.screen.query_one("#picker-note").render())
        where = f"kimi-cli sessions found under {tmp_path / 'empty' / 'sessions'}"
        assert note.startswith("No ") and f"no {where}" in note.lower(), note
        assert "sessions found under" in cells_text(app)  # on screen
        assert "kimi-debugging-session" in cells_text(app)


async def test_picker_highlight_is_reverse_video_without_colour(tmp_path, monkeypatch):
    monkeypatch.setenv("KIMI_SHARE_DIR", str(populated_share(tmp_path)))
    monkeypatch.setenv("NO_COLOR", "1")
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        listing = app.screen.query_one("#picker-list")
        style = listing.get_component_rich_style("option-list--option-highlighted")
        assert style.reverse


def test_discover_survives_hostile_json(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    (share / "kimi.json").write_text("[" * 100_000)
    deep = "[" * 20_000 + "\n"  # fits the probe; too deep for json to decode
    folder = share_session(share, WORK, "deep", raw=(kimi_line(CHAT[0]) + "\n" + deep).encode())
    (folder / "state.json").write_text("{" * 100_000)
    (folder / "wire.jsonl").write_text('{"TurnBegin": ' + "[" * 100_000 + "\n")
    (info,) = discover({"KIMI_SHARE_DIR": str(share)}, tmp_path)
    assert info.error == "context.jsonl: line 2 is not valid JSON"
    assert info.title == CHAT[0]["content"]


async def test_picker_reports_a_failed_lookup_in_one_line(tmp_path, monkeypatch):
    from kimi_compact_tui.tui.screens import picker

    def broken(env, home):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(picker, "discover_all", broken)
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        note = str(app.screen.query_one("#picker-note").render())
        assert note == "cannot list the sessions on this machine: disk on fire"
        assert "kimi-debugging-session" in cells_text(app)  # the samples are still there


# ------------------------------------------------------------------ every agent's sessions, flagged


def claude_home(root: Path) -> Path:
    """A Claude Code folder with one transcript whose last record is at
    2026-03-01 12:00:0N UTC, written (file time) long after."""
    from tests.factories.claude_code import two_turns

    config = root / "claude"
    path = two_turns().write(config)
    os.utime(path, (4_000_000_000, 4_000_000_000))  # a file time far from the session's
    return config


async def test_picker_rows_name_their_agent_and_the_sessions_own_time(tmp_path, monkeypatch):
    import datetime as dt

    from kimi_compact_tui.formats.claude_code.chain import _millis

    monkeypatch.setenv("KIMI_SHARE_DIR", str(populated_share(tmp_path)))
    config = claude_home(tmp_path)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    transcript = next(config.glob("projects/*/*.jsonl"))
    records = [json.loads(line) for line in transcript.read_bytes().split(b"\n") if line]
    last = [r for r in records if r.get("type") in ("user", "assistant")][-1]  # the last turn
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        rows = {e.path: session_label(e).plain for e in app.screen.entries}
        claude = rows[transcript]
        assert re.match(r"Claude Code +Run echo hi", claude), claude
        own = dt.datetime.fromtimestamp(_millis(last["timestamp"]) / 1000)
        assert own.strftime("%Y-%m-%d %H:%M") in claude and "(file time)" not in claude
        file_time = dt.datetime.fromtimestamp(4_000_000_000).strftime("%Y-%m-%d %H:%M")
        assert file_time not in claude
        kimi = [t for p, t in rows.items() if p.name == "bbbb-first-user"][0]
        assert "(file time)" in kimi  # no wire.jsonl: the file's time, said so
        lines = cells_text(app).split("\n")
        claude_line = next(line for line in lines if "Run echo hi" in line)
        kimi_line_ = next(line for line in lines if "Fix the importer" in line)
        assert "Claude Code" in claude_line and "kimi-cli" in kimi_line_
        # One agent column: the titles start in the same cell.
        assert claude_line.index("Run echo hi") == kimi_line_.index("Fix the importer")


async def test_a_binary_session_file_is_flagged(tmp_path, monkeypatch):
    from tests.factories.claude_code import SID

    config = tmp_path / "claude"
    binary = config / "projects" / "-work-project" / f"{SID}.jsonl"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("KIMI_SHARE_DIR", str(tmp_path / "none"))
    app = create_app(None, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        row = [e for e in app.screen.entries if e.path == binary]
        assert row and row[0].error and "NUL byte" in row[0].error
        text = cells_text(app)
        assert not re.search(r"(?<![\d,])0 messages", text)
        assert f"{ERROR_MARK} cannot open: {binary.name}:1: contains a NUL" in text
        assert "1 cannot be opened" in str(app.screen.query_one("#picker-note").render())

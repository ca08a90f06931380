"""Session formats: detection, lossless round trips, kimi-cli special records,
and one clear error (file and line/field) for bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import dump_session, load_session, save_session
from kimi_compact_tui.formats.kimi_cli.plugin import dump_message
from tests.core_helpers import sample_paths


@pytest.mark.parametrize("path", sample_paths(), ids=lambda p: p.name)
def test_samples_round_trip_unchanged(path: Path, tmp_path: Path):
    session = load_session(path)
    source = session.path.read_bytes()
    out = tmp_path / session.path.name
    save_session(session, out)
    if session.format.name == "openai-json":
        assert json.loads(out.read_bytes()) == json.loads(source)
    else:
        assert out.read_bytes() == source


def test_samples_cover_the_required_kinds():
    sessions = [load_session(p) for p in sample_paths()]
    formats = {s.format.name for s in sessions}
    assert {"kimi", "openai-json"} <= formats
    kimi = next(s for s in sessions if s.format.name == "kimi")
    assert kimi.meta.system_prompt and kimi.meta.recorded_tokens
    assert any(m.tool_calls for m in kimi.messages)
    assert any(m.has_think() for m in kimi.messages)
    assert any("image_url" in m.media_types() for m in kimi.messages)
    openai = next(s for s in sessions if s.format.name == "openai-json")
    assert openai.leading_system_indices()
    cjk = [
        s
        for s in sessions
        if any("\u4e00" <= ch <= "\u9fff" for m in s.messages for ch in m.text())
    ]
    assert cjk and any(m.text().count("\n") > 30 for s in cjk for m in s.messages)


def test_kimi_message_writer_shape():
    line = dump_message(
        {
            "partial": None,
            "tool_call_id": None,
            "content": [{"type": "text", "text": "héllo"}],
            "role": "user",
            "x_unknown": 1,
        }
    )
    assert line == '{"role":"user","content":"héllo","x_unknown":1}'
    two = dump_message(
        {"role": "user", "content": [{"type": "think", "think": "t", "encrypted": None}]}
    )
    assert '"encrypted":null' in two  # nulls inside parts are kept


def test_unknown_fields_roles_and_parts_survive(tmp_path: Path):
    data = {
        "model": "x",
        "extra_top": [1, 2],
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "developer", "content": "dev note", "x_field": {"a": None}},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "t"},
                    {"type": "video_url", "video_url": {"url": "u"}},
                    {"type": "hologram", "payload": 42},
                ],
                "name": "alice",
            },
            {"role": "assistant", "content": None, "tool_calls": [], "partial": True},
        ],
    }
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    session = load_session(path)
    assert session.format.name == "openai-json"
    assert [m.role for m in session.messages] == ["system", "developer", "user", "assistant"]
    out = tmp_path / "out.json"
    save_session(session, out)
    assert json.loads(out.read_text(encoding="utf-8")) == data
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(data["messages"]), encoding="utf-8")
    save_session(load_session(listed), out)
    assert json.loads(out.read_text(encoding="utf-8")) == data["messages"]


def test_openai_jsonl_round_trip_and_detection(tmp_path: Path):
    path = tmp_path / "chat.jsonl"
    lines = ['{"role": "system", "content": "s"}', '{"role":"user","content":"q"}']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = load_session(path)
    assert session.format.name == "openai-jsonl"
    assert dump_session(session) == path.read_bytes()


@pytest.mark.parametrize(
    "name, text, expected",
    [
        (
            "context.jsonl",
            '[1]\n{"role":"user"',
            "no valid kimi-cli record in the file (",
        ),
        ("chat.jsonl", '{"role":"user","content":1}\n', "chat.jsonl:1: field 'content' must be"),
        ("chat.jsonl", '{"content":"x"}\n', "chat.jsonl:1: message has no 'role'"),
        ("chat.jsonl", '{"role":3,"content":"x"}\n', "field 'role' must be a string"),
        ("chat.jsonl", "[1,2]\n", "expected a message object, got list"),
        ("chat.json", '{"messages": 3}', "chat.json: 'messages' must be a list"),
        ("chat.json", '{"msgs": []}', "has no 'messages' list"),
        (
            "chat.json",
            '[{"role":"user","content":[{"type":"text","text":5}]}]',
            "chat.json: [0]: content[0].text",
        ),
        (
            "chat.json",
            '[{"role":"user","content":"x","tool_calls":{}}]',
            "'tool_calls' must be a list",
        ),
        (
            "chat.json",
            '[{"role":"user","content":"x","partial":"yes"}]',
            "'partial' must be true or false",
        ),
        (
            "context.jsonl",
            '{"role": "_usage", "token_count": "9"}\n',
            "context.jsonl:1: _usage 'token_count'",
        ),
        (
            "context.jsonl",
            '{"role": "_checkpoint", "id": null}\n',
            "_checkpoint 'id' must be an integer",
        ),
        ("chat.txt", "hello there", "unknown session format"),
        ("chat.json", "", "file is empty"),
        ("chat.json", '[\n{"role": "user",\n "content": "x"\n', "chat.json:4: invalid JSON"),
    ],
)
def test_bad_input_gives_one_line_naming_file_and_place(tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SessionFormatError) as info:
        load_session(path)
    message = str(info.value)
    assert expected in message
    assert str(path) in message
    assert "\n" not in message


def test_kimi_cli_half_written_last_line_is_skipped_with_a_warning(tmp_path: Path):
    """A crash mid-write leaves a half line; kimi-cli resumes past it, so we open it."""
    path = tmp_path / "context.jsonl"
    data = b'{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}\n{"role":"user"'
    path.write_bytes(data)
    session = load_session(path)
    assert [m.text() for m in session.messages] == ["a", "b"]
    assert session.warnings == [
        f"{path}:3: skipped, as kimi-cli does on resume: invalid JSON "
        "(Expecting ',' delimiter, column 15)"
    ]
    assert dump_session(session) == data


def test_invalid_utf8_nul_missing_and_folder_errors(tmp_path: Path):
    bad = tmp_path / "chat.jsonl"
    bad.write_bytes(b'{"role":"user","content":"ok"}\n{"role":"user","content":"\xff"}\n')
    with pytest.raises(SessionFormatError, match=r"chat.jsonl:2: not valid UTF-8 \(byte 57:"):
        load_session(bad)  # lines are decoded one by one; the offset is still the file's
    kimi_bad = tmp_path / "s" / "context.jsonl"
    kimi_bad.parent.mkdir()
    kimi_bad.write_bytes(b'{"role": "_checkpoint", "id": 0}\n\n{"role":"user","content":"\xc3"}\n')
    # kimi-cli reads its files with errors="replace": so do we, with a warning.
    (warning,) = load_session(kimi_bad).warnings
    assert "context.jsonl:3: not valid UTF-8 (byte 60)" in warning
    bad.write_bytes(b'{"role":"user","content":"ok"}\n\x00\x00')
    with pytest.raises(SessionFormatError, match=r"chat.jsonl:2: contains a NUL byte"):
        load_session(bad)
    with pytest.raises(SessionFormatError, match="no such file"):
        load_session(tmp_path / "missing.json")
    with pytest.raises(SessionFormatError, match="folder holds no session"):
        load_session(tmp_path)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(SessionFormatError, match="not a regular file"):
        load_session(fifo)

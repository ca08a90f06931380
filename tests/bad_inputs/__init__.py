"""The bad-input corpus, built in a temporary folder at test time.

``build_corpus(root)`` writes every case under ``root`` and returns the cases.
A case is a session path (and, for config cases, a config path) plus what is
expected: ``"error"`` (one line on stderr, exit code 2) or ``"ok"`` (valid
input that looks odd: unknown roles and part types are kept, a 50 MB message
loads). Nothing large is committed: the 50 MB message is generated here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

GOOD_LINES = [
    '{"role": "_system_prompt", "content": "You are Kimi."}',
    '{"role": "_checkpoint", "id": 0}',
    '{"role":"user","content":"Fix the parser."}',
    '{"role":"assistant","content":"Done, the parser is fixed."}',
    '{"role":"user","content":"Now the tests."}',
    '{"role":"assistant","content":"All tests pass."}',
    '{"role": "_usage", "token_count": 42}',
]
GOOD_KIMI = ("\n".join(GOOD_LINES) + "\n").encode()

BIG_MESSAGE_BYTES = 50 * 1024 * 1024
DEEP = 100_000


@dataclass
class Case:
    name: str
    session: Path
    # "error" | "ok" | "skipped" (loads, warning of a skipped line) |
    # "either" (ok or one error line; no crash)
    expect: str = "error"
    config: Path | None = None
    special: str | None = None  # "fifo", "big", "deep": worth a real subprocess

    @property
    def kind(self) -> str:
        return "config" if self.config is not None else "session"

    def __str__(self) -> str:
        return self.name


def _msg(**fields: object) -> bytes:
    """A kimi-cli file whose third record is the message ``fields``."""
    line = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
    return ("\n".join([*GOOD_LINES[:2], line, *GOOD_LINES[2:]]) + "\n").encode()


def _special(record: dict) -> bytes:
    return ("\n".join([*GOOD_LINES, json.dumps(record)]) + "\n").encode()


# name -> (file name, bytes); every one must fail with a clear error.
SESSION_ERRORS: dict[str, tuple[str, bytes]] = {
    "truncated_json_file": ("chat.json", b'[{"role": "user", "content": "hi"}, {"role": "ass'),
    "invalid_utf8_json": ("chat.json", b'[{"role": "user", "content": "caf\xe9"}]'),
    "nul_bytes": ("context.jsonl", GOOD_KIMI + b"\x00\x00\x00\n"),
    "nul_inside_string": ("context.jsonl", GOOD_KIMI + b'{"role":"user","content":"a\x00b"}\n'),
    "byte_order_mark": ("chat.json", b'\xef\xbb\xbf[{"role": "user", "content": "hi"}]'),
    "binary_file": ("context.jsonl", bytes(range(256)) * 64),
    "binary_no_suffix": ("session.bin", b"\x89PNG\r\n\x1a\n" + bytes(range(1, 200)) * 10),
    "empty_file": ("context.jsonl", b""),
    "whitespace_only": ("chat.json", b"  \n\n\t \n"),
    "not_json_text": ("notes.txt", b"just some notes, not a session\n"),
    "message_is_number": ("chat.jsonl", b'{"role": "user", "content": "hi"}\n42\n'),
    "json_top_level_string": ("chat.json", b'"hello"\n'),
    "json_object_without_messages": ("chat.json", b'{"model": "gpt", "items": []}\n'),
    "json_messages_not_list": ("chat.json", b'{"messages": {"role": "user"}}\n'),
    "json_trailing_comma": ("chat.json", b'[{"role": "user", "content": "hi"},]\n'),
    "json_message_wrong_type": ("chat.json", b'[{"role": "user", "content": "hi"}, "oops"]\n'),
    "jsonl_invalid_line": ("chat.jsonl", b'{"role": "user", "content": "hi"}\n{nope}\n'),
    "deep_nesting_json": ("chat.json", b"[" * DEEP + b"]" * DEEP),
    "deep_nesting_object": (
        "chat.json",
        b'[{"role":"user","content":"x","meta":' + b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"}]",
    ),
    "kimi_every_line_malformed": ("context.jsonl", b'{"role": "user", "cont\n[1, 2]\n'),
    "kimi_cli_wire_log": (
        "wire.jsonl",
        b'{"timestamp": 1764470000.0, "message": {"type": "TurnBegin", "payload": {}}}\n',
    ),
}

# kimi-cli files with a line kimi-cli itself skips on resume (with a warning):
# they load, with one warning naming the line; the line's bytes are kept.
SESSION_SKIPPED: dict[str, tuple[str, bytes]] = {
    "truncated_last_line": ("context.jsonl", GOOD_KIMI + b'{"role":"user","content":"hel'),
    "invalid_utf8": ("context.jsonl", GOOD_KIMI + b'{"role":"user","content":"\xff\xfe"}\n'),
    "role_number": ("context.jsonl", _msg(role=7, content="x")),
    "role_missing": ("context.jsonl", _msg(content="x")),
    "role_null": ("context.jsonl", _msg(role=None, content="x")),
    "content_number": ("context.jsonl", _msg(role="user", content=3.5)),
    "content_object": ("context.jsonl", _msg(role="user", content={"text": "x"})),
    "part_not_object": ("context.jsonl", _msg(role="user", content=["plain string part"])),
    "part_without_type": ("context.jsonl", _msg(role="user", content=[{"text": "x"}])),
    "part_type_number": ("context.jsonl", _msg(role="user", content=[{"type": 1, "text": "x"}])),
    "text_not_string": ("context.jsonl", _msg(role="user", content=[{"type": "text", "text": 5}])),
    "tool_calls_not_list": ("context.jsonl", _msg(role="assistant", content="", tool_calls="x")),
    "tool_call_not_object": (
        "context.jsonl",
        _msg(role="assistant", content="", tool_calls=["call"]),
    ),
    "tool_call_function_not_object": (
        "context.jsonl",
        _msg(role="assistant", content="", tool_calls=[{"id": "c", "function": "f"}]),
    ),
    "tool_call_id_number": ("context.jsonl", _msg(role="tool", content="ok", tool_call_id=12)),
    "name_list": ("context.jsonl", _msg(role="user", content="x", name=["a"])),
    "partial_string": ("context.jsonl", _msg(role="assistant", content="x", partial="yes")),
    "message_is_list": ("context.jsonl", GOOD_KIMI + b"[1, 2, 3]\n"),
    "usage_token_count_string": (
        "context.jsonl",
        _special({"role": "_usage", "token_count": "many"}),
    ),
    "usage_token_count_float": ("context.jsonl", _special({"role": "_usage", "token_count": 1.5})),
    "checkpoint_id_string": ("context.jsonl", _special({"role": "_checkpoint", "id": "one"})),
    "system_prompt_content_list": (
        "context.jsonl",
        _special({"role": "_system_prompt", "content": ["a"]}),
    ),
    "deep_nesting_kimi": (
        "context.jsonl",
        GOOD_KIMI + b'{"role":"user","content":' + b"[" * DEEP + b"]" * DEEP + b"}\n",
    ),
}

# Valid inputs that look odd: they must load, and be kept as they are.
SESSION_OK: dict[str, tuple[str, bytes]] = {
    "unknown_roles_and_parts": (
        "context.jsonl",
        (
            "\n".join(
                [
                    *GOOD_LINES[:2],
                    '{"role":"developer","content":"Be brief."}',
                    '{"role":"user","content":[{"type":"hologram","data":{"x":1}},'
                    '{"type":"text","text":"看这个"}]}',
                    '{"role":"function","name":"f","content":"result","x_extra":[1,2]}',
                    *GOOD_LINES[2:],
                ]
            )
            + "\n"
        ).encode(),
    ),
    "unknown_fields_openai": (
        "chat.json",
        json.dumps(
            {
                "model": "m",
                "messages": [
                    {"role": "critic", "content": [{"type": "audio_url", "audio_url": {}}]},
                    {"role": "user", "content": "hi", "metadata": {"a": None}},
                    {"role": "assistant", "content": None, "refusal": "no"},
                ],
            },
            indent=2,
        ).encode(),
    ),
}

# Fields of known parts with the wrong type that the loader may accept (kept
# as they are) or refuse (one error line): either is fine, a crash is not.
SESSION_NO_CRASH: dict[str, tuple[str, bytes]] = {
    "think_not_string": (
        "context.jsonl",
        _msg(role="assistant", content=[{"type": "think", "think": 123}]),
    ),
    "think_list": (
        "context.jsonl",
        _msg(role="assistant", content=[{"type": "think", "think": ["a"]}]),
    ),
    "image_url_not_object": (
        "context.jsonl",
        _msg(role="user", content=[{"type": "image_url", "image_url": 5}]),
    ),
    "tool_call_name_number": (
        "context.jsonl",
        _msg(role="assistant", content="", tool_calls=[{"id": "c", "function": {"name": 5}}]),
    ),
    "tool_call_arguments_object": (
        "context.jsonl",
        _msg(
            role="assistant",
            content="",
            tool_calls=[{"id": "c", "function": {"name": "f", "arguments": {"a": [1]}}}],
        ),
    ),
    "tool_call_id_in_call_number": (
        "context.jsonl",
        _msg(role="assistant", content="", tool_calls=[{"id": 9, "type": 1}]),
    ),
    "checkpoint_extra_fields": (
        "context.jsonl",
        _special({"role": "_checkpoint", "id": 3, "x": [1]}),
    ),
    "unknown_special_record": ("context.jsonl", _special({"role": "_future_record", "v": 1})),
    # a Codex rollout with a session_meta and nothing else: a session with no messages
    "codex_rollout": (
        "rollout-2026-01-01.jsonl",
        b'{"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x"}}\n',
    ),
}

# YAML configs, each wrong in its own way (the session is valid).
CONFIG_ERRORS: dict[str, bytes | None] = {
    "yaml_syntax_error": b"compaction: [unclosed\n",
    "yaml_tab_indent": b"compaction:\n\tenabled: true\n",
    "yaml_not_mapping_list": b"- compaction\n- provider\n",
    "yaml_not_mapping_scalar": b"just a string\n",
    "unknown_top_level_key": b"compactoin:\n  enabled: true\n",
    "unknown_compaction_key": b"compaction:\n  enabled: true\n  type: kimi\n  bogus: 1\n",
    "compaction_not_mapping": b"compaction: 5\n",
    "enabled_wrong_type": b'compaction:\n  enabled: "yes"\n  type: kimi\n',
    "type_wrong_type": b"compaction:\n  enabled: true\n  type: 1\n",
    "max_preserved_wrong_type": (
        b'compaction:\n  enabled: true\n  type: kimi\n  max_preserved_messages: "two"\n'
    ),
    "max_preserved_float": (
        b"compaction:\n  enabled: true\n  type: kimi\n  max_preserved_messages: 2.5\n"
    ),
    "compaction_model_wrong_type": (
        b"compaction:\n  enabled: true\n  type: kimi\n  compaction_model: [a]\n"
    ),
    "prompt_wrong_type": b"compaction:\n  enabled: true\n  type: kimi\n  prompt: {a: 1}\n",
    "prompt_file_wrong_type": b"compaction:\n  enabled: true\n  type: kimi\n  prompt_file: 3\n",
    "prompt_file_missing": (
        b"compaction:\n  enabled: true\n  type: kimi\n  prompt_file: does-not-exist.md\n"
    ),
    "settings_overrides_wrong_type": (
        b"compaction:\n  enabled: true\n  type: kimi\n  settings_overrides: [1, 2]\n"
    ),
    "top_compaction_model_wrong_type": b"compaction_model: 42\n",
    "provider_not_mapping": b"provider: openai\n",
    "provider_unknown_kind": b"provider:\n  kind: carrier-pigeon\n",
    "provider_unknown_field": b"provider:\n  kind: openai\n  colour: blue\n",
    "provider_bad_url": b"provider:\n  kind: openai\n  base_url: not-a-url\n",
    "provider_key_in_file": b"provider:\n  kind: openai\n  api_key: sk-secret\n",
    "provider_bad_timeout": b"provider:\n  kind: openai\n  read_timeout: soon\n",
    "provider_bad_retries": b"provider:\n  kind: openai\n  max_retries: 99\n",
    "config_invalid_utf8": b"compaction:\n  prompt: \xff\xfe\n",
    "config_missing": None,  # the path does not exist
}


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def build_corpus(root: Path, *, big: bool = True) -> list[Case]:
    """Write every case under ``root``; ``big`` adds the 50 MB message."""
    cases: list[Case] = []
    for name, (fname, data) in SESSION_ERRORS.items():
        special = "deep" if name.startswith("deep_nesting") else None
        cases.append(Case(name, _write(root / name / fname, data), special=special))
    for name, (fname, data) in SESSION_SKIPPED.items():
        special = "deep" if name.startswith("deep_nesting") else None
        cases.append(Case(name, _write(root / name / fname, data), "skipped", special=special))
    for name, (fname, data) in SESSION_OK.items():
        cases.append(Case(name, _write(root / name / fname, data), expect="ok"))
    for name, (fname, data) in SESSION_NO_CRASH.items():
        cases.append(Case(name, _write(root / name / fname, data), expect="either"))

    # Paths that are not session files.
    empty_dir = root / "folder_without_session"
    (empty_dir / "notes").mkdir(parents=True)
    _write(empty_dir / "readme.txt", b"nothing here\n")
    cases.append(Case("folder_without_session", empty_dir))
    cases.append(Case("missing_path", root / "no" / "such" / "context.jsonl"))
    # "No permission": root ignores file modes, so use a path that cannot be
    # reached — a file standing where a folder should be (ENOTDIR).
    blocker = _write(root / "blocker", GOOD_KIMI)
    cases.append(Case("unreachable_under_a_file", blocker / "context.jsonl"))
    fifo = root / "fifo" / "context.jsonl"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    cases.append(Case("fifo", fifo, special="fifo"))
    cases.append(Case("fifo_folder", fifo.parent, special="fifo"))
    cases.append(Case("dev_null", Path("/dev/null")))

    if big:
        cases.append(
            Case(
                "big_50mb_message",
                write_big_message(root / "big" / "context.jsonl"),
                expect="ok",
                special="big",
            )
        )

    good = _write(root / "good" / "context.jsonl", GOOD_KIMI)
    for name, data in CONFIG_ERRORS.items():
        cfg = root / "configs" / name / "config.yaml"
        if data is not None:
            _write(cfg, data)
        cases.append(Case(f"config_{name}", good, config=cfg))
    cfg_dir = root / "configs" / "a_folder"
    cfg_dir.mkdir(parents=True)
    cases.append(Case("config_is_a_folder", good, config=cfg_dir))
    return cases


def write_big_message(path: Path, size: int = BIG_MESSAGE_BYTES) -> Path:
    """A valid kimi-cli session whose one user message is ``size`` bytes of text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    unit = "The quick brown fox jumps over the lazy dog. 敏捷的棕色狐狸。\\n"
    reps = size // len(unit.encode()) + 1
    with path.open("wb") as fh:
        fh.write(("\n".join(GOOD_LINES[:2]) + "\n").encode())
        fh.write(b'{"role":"user","content":"')
        fh.write((unit * reps).encode())
        fh.write(b'"}\n')
        fh.write(b'{"role":"assistant","content":"That is a long message."}\n')
    return path


def snapshot(paths: list[Path]) -> dict[str, str | None]:
    """sha256 (or a stat summary for non-regular files) of every file under ``paths``."""
    import hashlib
    import stat

    out: dict[str, str | None] = {}
    for base in paths:
        items: list[Path] = [base]
        if base.is_dir():
            items += sorted(base.rglob("*"))
        for p in items:
            try:
                st = p.lstat()
            except OSError:
                out[str(p)] = None
                continue
            if stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with p.open("rb") as fh:
                    for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                        h.update(block)
                out[str(p)] = h.hexdigest()
            else:
                out[str(p)] = f"mode={oct(st.st_mode)}"
    return out


Builder = Callable[[Path], list[Case]]

"""kimi-cli 1.51.0 sessions with media: its real ReadMediaFile tool puts an image into a
tool result. Compacted, the image is dropped from the request as kimi-cli drops it;
kept (after an explicit boundary), kimi-cli resumes it as it was."""

from __future__ import annotations

import struct
import zlib

import pytest

from tests.agents.fake_model import FakeModel, Turn, text_turn
from tests.agents.harness import (
    KimiCli,
    kimi_cli_compact_md,
    kimi_cli_installed,
    require_agent,
    run_ours,
    shared_template,
)

pytestmark = pytest.mark.agents

SUMMARY = "FAKE SUMMARY: the user showed a one-pixel image."
PROMPT = "Where were we?"


def _png() -> bytes:
    """A 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


CONVERSATION = [
    (
        "Look at pixel.png please",
        [
            Turn(tool_names=("ReadMediaFile",), tool_args={"path": "pixel.png"}),
            text_turn("It is one red pixel."),
        ],
    ),
    ("Is it big?", [text_turn("No, it is 1x1.")]),
    ("Thanks", [text_turn("You are welcome.")]),
]


def _compact(cli: KimiCli, sid: str, *extra: str, env: dict | None = None) -> None:
    code, _, err = run_ours(
        ["compact", str(cli.session_dir(sid)), "--in-place", "--yes", "--provider", "openai"]
        + ["--base-url", cli.fake.base_url, "--model", cli.fake.model, *extra],
        cli.root,
        env,
    )
    assert code == 0, err[-2000:]


def _put_pixel(runner: KimiCli) -> None:
    (runner.workdir / "pixel.png").write_bytes(_png())


@pytest.fixture(scope="module")
def media_session(tmp_path_factory):
    require_agent(kimi_cli_installed(), "kimi-cli")
    template, sid = shared_template(
        tmp_path_factory, "kimi-cli-media", KimiCli, CONVERSATION, ["image_in"], _put_pixel
    )
    with FakeModel(summary=SUMMARY, lifetime=1800) as fm:
        root = tmp_path_factory.mktemp("media")
        original = template.clone(root / "original", fm).resume(sid, PROMPT)
        yield template, fm, sid, original


def _has_image(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(p.get("type") == "image_url" for p in content)


def test_compacting_a_media_tool_result_matches_kimi_clis_own_compact(media_session, tmp_path):
    template, fm, sid, original = media_session
    history = original["messages"][1:-1]
    assert [m["role"] for m in history][:3] == ["user", "assistant", "tool"]
    assert _has_image(history[2]), "kimi-cli's ReadMediaFile sent no image"
    compact_md = kimi_cli_compact_md()
    assert compact_md is not None
    ours, theirs = template.clone(tmp_path / "ours", fm), template.clone(tmp_path / "theirs", fm)
    start = len(fm.requests)
    _compact(ours, sid, env={"KIMI_CLI_COMPACT_MD": str(compact_md)})
    our_request = [r.json for r in fm.requests[start:] if r.kind == "compaction"]
    their_request = theirs.compact(sid).compaction_bodies()
    assert len(our_request) == 1 and len(their_request) == 1
    assert our_request[0]["messages"] == their_request[0]["messages"]
    assert "image_url" not in str(our_request[0]["messages"])
    assert ours.context_file(sid).read_bytes() == theirs.context_file(sid).read_bytes()


def test_a_kept_media_message_is_resumed_as_it_was(media_session, tmp_path):
    template, fm, sid, original = media_session
    history = original["messages"][1:-1]
    copy = template.clone(tmp_path / "copy", fm)
    _compact(copy, sid, "--up-to", "1")  # the tool call and its image result are kept
    after = copy.resume(sid, PROMPT)
    assert after["messages"][2:-1] == history[1:]
    assert _has_image(after["messages"][3])
    assert {"type": "text", "text": SUMMARY} in after["messages"][1]["content"]

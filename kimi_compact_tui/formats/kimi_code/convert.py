"""kimi-code context messages as this tool's OpenAI-shaped messages.

One kimi-code context message becomes one :class:`Message`: ``role``,
``content`` as a list of parts (``text`` and ``think`` parts as kimi-code
keeps them, media parts in OpenAI's shape ``{"type": "image_url",
"image_url": {"url": ...}}`` with the journal's ``blobref:<mime>;<sha256>``
URL kept as it is, never the bytes), ``tool_calls`` in OpenAI's shape,
``tool_call_id``, ``partial`` for an assistant message kimi-code left open
(not sent), and ``kimi_code``: what kimi-code knows besides (``origin``,
``id``, ``isError``, ``note``, ``durationMs``, and ``synthetic`` for a
message this tool stands in for: an interrupted call's error result or a
compaction note).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kimi_compact_tui.model import Message

MEDIA_KEYS: dict[Any, str] = {
    "image_url": "imageUrl",
    "audio_url": "audioUrl",
    "video_url": "videoUrl",
}
META_KEYS = ("origin", "id", "isError", "note", "durationMs", "synthetic")
BLOBREF = "blobref:"


def part_to_openai(part: Any) -> Any:
    if type(part) is not dict:
        return part
    kind = part.get("type")
    camel = MEDIA_KEYS.get(kind)
    if camel is not None and camel in part:
        out = {k: v for k, v in part.items() if k != camel}
        out[kind] = part[camel]
        return out
    return part


def call_to_openai(call: Any) -> Any:
    if type(call) is not dict:
        return call
    out: dict[str, Any] = {
        "id": call.get("id"),
        "type": call.get("type", "function"),
        "function": {"name": call.get("name"), "arguments": call.get("arguments")},
    }
    if call.get("extras") is not None:
        out["extras"] = call["extras"]
    return out


def to_message(context_message: dict[str, Any]) -> Message:
    cm = context_message
    data: dict[str, Any] = {
        "role": cm["role"],
        "content": [part_to_openai(p) for p in cm["content"]],
    }
    if cm.get("name") is not None:
        data["name"] = cm["name"]
    calls = cm.get("toolCalls")
    if type(calls) is list and calls:
        data["tool_calls"] = [call_to_openai(c) for c in calls]
    if cm.get("toolCallId") is not None:
        data["tool_call_id"] = cm["toolCallId"]
    if cm.get("partial") is True:
        data["partial"] = True
    meta = {k: cm[k] for k in META_KEYS if cm.get(k) is not None}
    if meta:
        data["kimi_code"] = meta
    return Message(data)


def is_synthetic(message: Message) -> bool:
    meta = message.data.get("kimi_code")
    return type(meta) is dict and meta.get("synthetic") is not None


def origin_kind(message: Message) -> str | None:
    meta = message.data.get("kimi_code")
    origin = meta.get("origin") if type(meta) is dict else None
    return origin.get("kind") if type(origin) is dict else None


def media_urls(message: Message) -> list[str]:
    """The media URLs of ``message`` (``blobref:`` references or data URIs)."""
    urls = []
    for part in message.parts():
        kind = part.get("type") if type(part) is dict else None
        holder = part.get(kind) if kind in MEDIA_KEYS else None  # type: ignore[arg-type]  # kind is a str here (checked above)
        if type(holder) is dict and type(holder.get("url")) is str:
            urls.append(holder["url"])
    return urls


def parse_blobref(url: str) -> tuple[str, str] | None:
    """``(mime type, sha256)`` of a ``blobref:<mime>;<sha256>`` URL, else None."""
    if not url.startswith(BLOBREF):
        return None
    mime, sep, digest = url[len(BLOBREF) :].partition(";")
    if not sep or not digest:
        return None
    return mime, digest


def blob_file(wire_path: Path, url: str) -> Path | None:
    """Where kimi-code keeps the bytes of a ``blobref:`` URL of the agent whose
    journal is ``wire_path`` (``agents/<id>/blobs/<sha256>``), for display; None
    for any other URL."""
    ref = parse_blobref(url)
    if ref is None or "/" in ref[1] or ref[1] in ("", ".", ".."):
        return None
    return wire_path.parent / "blobs" / ref[1]

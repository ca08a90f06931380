"""The message model: messages and their parts as thin views over plain data.

A :class:`Message` wraps the decoded JSON object of one message and keeps the
original line's bytes (when read from a line-based file) so that an unchanged
session is written back byte for byte. Nothing here is format specific; the
session itself is the formats' (``formats.base.Session``).
"""

from __future__ import annotations

from typing import Any

KNOWN_ROLES = ("system", "user", "assistant", "tool")
MEDIA_PART_TYPES = ("image_url", "audio_url", "video_url")
COMPACTION_ROLES = ("user", "assistant")  # the roles the preserved-tail scan counts


class Message:
    """One message: ``role``, ``content`` (string, list of parts or None) and
    every other field kept as it was read (``tool_calls``, ``tool_call_id``,
    ``name``, ``partial`` and anything unknown)."""

    __slots__ = ("data", "raw")

    def __init__(self, data: dict[str, Any], raw: bytes | str | object | None = None) -> None:
        self.data = data
        # The exact source line as read (bytes; a str when built in memory), or
        # None for a message built here: written back unchanged when present.
        self.raw = raw

    @classmethod
    def make(cls, role: str, content: Any, **fields: Any) -> Message:
        data: dict[str, Any] = {"role": role, "content": content}
        data.update({k: v for k, v in fields.items() if v is not None})
        return cls(data)

    def __repr__(self) -> str:
        return f"Message(role={self.role!r}, parts={len(self.parts())})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Message) and other.data == self.data

    __hash__ = None  # type: ignore[assignment]

    @property
    def role(self) -> str:
        return self.data.get("role")  # type: ignore[return-value]

    @property
    def content(self) -> Any:
        return self.data.get("content")

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return self.data.get("tool_calls") or []

    @property
    def tool_call_id(self) -> str | None:
        return self.data.get("tool_call_id")

    @property
    def name(self) -> str | None:
        return self.data.get("name")

    @property
    def partial(self) -> bool:
        return bool(self.data.get("partial"))

    def parts(self) -> list[dict[str, Any]]:
        """Content as a list of parts; a string is one text part."""
        content = self.data.get("content")
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        if isinstance(content, list):
            return content
        return []

    def text_parts(self) -> list[str]:
        """The texts kimi-cli keeps for the compaction input: a string content
        whole, else the ``text`` of each part whose type is ``text``, in order."""
        content = self.data.get("content")
        if isinstance(content, str):
            return [content]
        if isinstance(content, list):
            return [
                p["text"]
                for p in content
                if isinstance(p, dict)
                and p.get("type") == "text"
                and isinstance(p.get("text"), str)
            ]
        return []

    def text(self) -> str:
        return "".join(self.text_parts())

    # Markers used by previews and the TUI.
    def has_think(self) -> bool:
        return any(p.get("type") == "think" for p in self.parts() if isinstance(p, dict))

    def media_types(self) -> list[str]:
        return [
            p["type"]
            for p in self.parts()
            if isinstance(p, dict) and p.get("type") in MEDIA_PART_TYPES
        ]

    def is_tool_result(self) -> bool:
        return self.role == "tool" or self.tool_call_id is not None

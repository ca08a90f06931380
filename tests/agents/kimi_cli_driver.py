"""Run kimi-cli's own compaction code on test cases; run with kimi-cli's Python.

    <kimi-cli venv>/bin/python kimi_cli_driver.py < cases.json > upstream.json

This script imports nothing of ours: only kimi-cli (``kimi_cli.soul.compaction``) and its
message library kosong, from the venv ``.ci/install-agents`` made. It reads

    {"summary": str, "summary_think": str, "output_tokens": int, "system_prompt": str,
     "cases": [{"name", "messages", "max_preserved_messages", "custom_instruction"}, ...]}

on stdin and prints, per case name, what kimi-cli makes of it:

- ``messages``: the input as kosong's message model dumps it (kimi-cli's own form);
- ``compaction_input_parts``: the text parts of ``SimpleCompaction.prepare``'s compaction
  message (null when kimi-cli makes no request), and ``to_preserve``;
- ``request``: what ``SimpleCompaction.compact`` hands the chat provider (its system prompt,
  its tools, and the messages as kosong's Kimi provider puts them on the wire);
- ``compacted`` / ``compacted_without_usage``: the messages ``compact`` returns for a model
  answering ``summary_think`` + ``summary`` (with and without reported usage), and kimi-cli's
  ``estimated_token_count`` of them;
- ``files``: the ``context.jsonl`` kimi-cli's ``Context`` writes for the input messages
  under ``system_prompt`` (``before``), the one it writes after the compaction with usage
  (``after``), and the names of the rotated files.

A case that kimi-cli rejects gets ``{"error": ...}``. Everything is one JSON object on stdout.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import tempfile
import traceback
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any


def _dump(message: Any) -> dict[str, Any]:
    return message.model_dump(mode="json", exclude_none=True)


async def _context_files(folder: Path, system_prompt: str, messages: list[Any], result: Any):
    """The context.jsonl kimi-cli's Context writes for the messages, and the one it writes
    after a compaction, in the order ``KimiSoul.compact_context`` makes its calls: the
    rotation (``clear``), the system prompt, a checkpoint, the compacted messages and
    their estimated token count."""
    from kimi_cli.soul.context import Context

    folder.mkdir(parents=True)
    path = folder / "context.jsonl"
    path.touch()
    context = Context(path)
    await context.write_system_prompt(system_prompt)
    await context.append_message(messages)
    before = path.read_text(encoding="utf-8")
    context = Context(path)
    await context.restore()
    await context.clear()
    await context.write_system_prompt(system_prompt)
    await context.checkpoint(False)
    await context.append_message(list(result.messages))
    await context.update_token_count(result.estimated_token_count)
    rotated = sorted(p.name for p in folder.iterdir() if p.name != "context.jsonl")
    return {"before": before, "after": path.read_text(encoding="utf-8"), "rotated": rotated}


async def _run_case(case: dict[str, Any], settings: dict[str, Any], folder: Path) -> dict[str, Any]:
    from kimi_cli.soul.compaction import SimpleCompaction
    from kosong.chat_provider import TokenUsage
    from kosong.chat_provider.kimi import _convert_message
    from kosong.chat_provider.mock import MockChatProvider, MockStreamedMessage
    from kosong.message import Message, TextPart, ThinkPart

    class Answer(MockStreamedMessage):
        def __init__(self, parts: list[Any], usage: TokenUsage | None) -> None:
            super().__init__(parts)
            self._usage = usage

        @property
        def usage(self) -> TokenUsage | None:
            return self._usage

    class Recorder(MockChatProvider):
        """A chat provider that records what kimi-cli asks and answers with the summary."""

        def __init__(self, usage: TokenUsage | None) -> None:
            super().__init__([])
            self.usage = usage
            self.calls: list[dict[str, Any]] = []

        async def generate(self, system_prompt, tools, history, **_: Any):  # type: ignore[override]
            self.calls.append(
                {
                    "system_prompt": system_prompt,
                    "tools": [getattr(t, "name", repr(t)) for t in tools],
                    # the wire form kosong's Kimi provider sends (Kimi.generate)
                    "messages": (
                        [{"role": "system", "content": system_prompt}] if system_prompt else []
                    )
                    + [_convert_message(m) for m in history],
                }
            )
            parts: list[Any] = []
            if settings["summary_think"]:
                parts.append(ThinkPart(think=settings["summary_think"]))
            parts.append(TextPart(text=settings["summary"]))
            return Answer(parts, self.usage)

    messages = [Message.model_validate(m) for m in case["messages"]]
    compaction = SimpleCompaction(max_preserved_messages=case["max_preserved_messages"])
    instruction = case.get("custom_instruction") or ""
    prepared = compaction.prepare(messages, custom_instruction=instruction)
    out: dict[str, Any] = {
        "messages": [_dump(m) for m in messages],
        "compaction_input_parts": None,
        "to_preserve": [_dump(m) for m in prepared.to_preserve],
        "request": None,
    }
    if prepared.compact_message is not None:
        parts = prepared.compact_message.content
        assert all(isinstance(p, TextPart) for p in parts), parts
        out["compaction_input_parts"] = [p.text for p in parts]

    for key, usage in (
        ("compacted", TokenUsage(input_other=0, output=settings["output_tokens"])),
        ("compacted_without_usage", None),
    ):
        provider = Recorder(usage)
        llm = SimpleNamespace(chat_provider=provider)
        result = await compaction.compact(messages, llm, custom_instruction=instruction)
        out[key] = {
            "messages": [_dump(m) for m in result.messages],
            "estimated_token_count": result.estimated_token_count,
            "requests": len(provider.calls),
        }
        if provider.calls and out["request"] is None:
            out["request"] = provider.calls[0]
        if key == "compacted":
            out["files"] = await _context_files(folder, settings["system_prompt"], messages, result)
    return out


async def _main(payload: dict[str, Any]) -> dict[str, Any]:
    import kimi_cli.prompts as prompts

    compact_md = Path(prompts.__file__).with_name("compact.md")
    results: dict[str, Any] = {}
    scratch = Path(tempfile.mkdtemp(prefix="cases-", dir=Path.cwd()))  # the caller's folder
    for index, case in enumerate(payload["cases"]):
        try:
            results[case["name"]] = await _run_case(case, payload, scratch / str(index))
        except Exception as exc:  # reported per case, so one bad case names itself
            results[case["name"]] = {
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=5),
            }
    return {
        "kimi_cli_version": metadata.version("kimi-cli"),
        "kosong_version": metadata.version("kosong"),
        "compact_md": str(compact_md),
        "prompt_sha256": hashlib.sha256(prompts.COMPACT.encode("utf-8")).hexdigest(),
        "cases": results,
    }


if __name__ == "__main__":
    data = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdout.buffer.write(json.dumps(asyncio.run(_main(data)), ensure_ascii=False).encode())

"""Deterministic generator of realistic sessions for the benchmarks.

A session is a run of agent turns: a user request, an assistant reply with a
think part and tool calls (JSON arguments), the tool results (long outputs,
code, Python tracebacks), and a final assistant answer; some turns are in
Chinese or Japanese, a few user messages carry an image part. The same seed
always gives the same bytes.

Two shapes, each seeded:

* ``default``: long tool outputs (numbered listings, tracebacks, JSON, CJK
  text), so JSON decoding dominates a load;
* ``dense``: message-dense, short messages (about 650 bytes a message on
  average in ``context.jsonl``, its special records included), tool calls on
  half the assistant replies: the per-message cost of every step dominates.

Formats written:

* kimi-cli ``context.jsonl``: ``_system_prompt`` and ``_checkpoint`` records,
  ``_usage`` after assistant replies, message lines written the way
  :mod:`kimi_compact_tui.formats.kimi_cli.plugin` writes them (compact JSON, UTF-8 raw,
  special records with ``json.dumps`` defaults);
* OpenAI ``.json`` (a list of messages, indented) and ``.jsonl``.

Usage::

    .venv/bin/python -m benchmarks.generate            # 1k, 10k, 100k into benchmarks/out/
    .venv/bin/python -m benchmarks.generate 5000 --out /tmp/x --shape dense
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.kimi_cli.plugin import dump_message, dump_special

OUT_DIR = Path(__file__).resolve().parent / "out"
SIZES = (1_000, 10_000, 100_000)
SEED = 20260
SHAPES = ("default", "dense")

SYSTEM_PROMPT = (
    "You are Kimi, an AI agent running in the user's terminal. You can read and write "
    "files, run shell commands and search the web. Be precise, keep answers short, and "
    "always explain what you changed.\n\n# Working directory\n/home/dev/project\n"
)

WORDS = (
    "the parser config session message tool output error value file line function test "
    "cache request response stream token model summary index region plan apply diff "
    "backup rotate folder module import class return raise yield await async buffer "
    "queue socket header payload schema field record entry checkpoint usage compact"
).split()

CJK_SENTENCES = (
    "请帮我检查一下这个函数为什么在处理空列表时会抛出异常。",
    "我已经修改了配置文件，现在测试全部通过了。",
    "这个会话太长了，我们需要先压缩一下上下文再继续。",
    "日志里显示连接在第三次重试之后被服务器关闭。",
    "このファイルの文字コードはUTF-8ですか？確認してください。",
    "エラーメッセージを一行にまとめて、終了コードは2にしました。",
    "把缓存的大小限制在一百兆以内，超过之后按最近最少使用的顺序淘汰。",
)

TOOLS = ("ReadFile", "WriteFile", "Shell", "Grep", "Glob", "StrReplaceFile", "SearchWeb")

CODE_SNIPPETS = (
    """def load(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
""",
    """class Cache:
    def __init__(self, limit: int = 128) -> None:
        self.limit = limit
        self.items: dict[str, bytes] = {}

    def get(self, key: str) -> bytes | None:
        return self.items.get(key)
""",
    """async def fetch(client, url):
    async with client.stream("GET", url) as response:
        async for chunk in response.aiter_bytes():
            yield chunk
""",
    """fn main() {
    let args: Vec<String> = std::env::args().collect();
    println!("{:?}", args);
}
""",
)


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.call_no = 0

    # -- text pieces

    def words(self, lo: int, hi: int) -> str:
        r = self.rng
        n = r.randint(lo, hi)
        text = " ".join(r.choice(WORDS) for _ in range(n))
        return text[:1].upper() + text[1:] + "."

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.words(5, 18) for _ in range(sentences))

    def cjk(self, n: int) -> str:
        return "".join(self.rng.choice(CJK_SENTENCES) for _ in range(n))

    def code_block(self) -> str:
        lang = "python" if self.rng.random() < 0.8 else "rust"
        return f"```{lang}\n{self.rng.choice(CODE_SNIPPETS)}```"

    def traceback(self) -> str:
        r = self.rng
        frames = []
        for _ in range(r.randint(3, 9)):
            mod = r.choice(WORDS)
            frames.append(
                f'  File "/home/dev/project/src/{mod}.py", line {r.randint(1, 900)}, '
                f"in {r.choice(WORDS)}_{r.choice(WORDS)}\n    {r.choice(WORDS)} = "
                f"{r.choice(WORDS)}({r.choice(WORDS)})"
            )
        exc = r.choice(("KeyError: 'role'", "ValueError: bad value", "TypeError: 'NoneType'"))
        return "Traceback (most recent call last):\n" + "\n".join(frames) + "\n" + exc

    def long_output(self) -> str:
        r = self.rng
        kind = r.random()
        if kind < 0.35:
            lines = [
                f"{i:5d}\t{r.choice(WORDS)} = {r.choice(WORDS)}({r.randint(0, 999)})"
                for i in range(1, r.randint(20, 120))
            ]
            return "\n".join(lines)
        if kind < 0.55:
            return self.traceback()
        if kind < 0.75:
            rows = [
                {"id": i, "name": r.choice(WORDS), "ok": r.random() < 0.5}
                for i in range(r.randint(5, 40))
            ]
            return json.dumps(rows, indent=2)
        if kind < 0.85:
            return self.cjk(r.randint(3, 20))
        return self.code_block() + "\n" + self.paragraph(r.randint(1, 4))

    # -- messages

    def user(self) -> dict[str, Any]:
        r = self.rng
        if r.random() < 0.15:
            text = self.cjk(r.randint(1, 4))
        else:
            text = self.paragraph(r.randint(1, 3))
            if r.random() < 0.2:
                text += "\n\n" + self.traceback()
        if r.random() < 0.02:
            png = "".join(
                r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789+/") for _ in range(600)
            )
            content: Any = [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
            ]
            return {"role": "user", "content": content}
        return {"role": "user", "content": text}

    def assistant(self, with_tools: bool) -> dict[str, Any]:
        r = self.rng
        parts: list[dict[str, Any]] = []
        if r.random() < 0.7:
            parts.append({"type": "think", "think": self.paragraph(r.randint(1, 5))})
        text = self.paragraph(r.randint(1, 3))
        if r.random() < 0.25:
            text += "\n\n" + self.code_block()
        if r.random() < 0.1:
            text = self.cjk(r.randint(1, 3)) + "\n" + text
        parts.append({"type": "text", "text": text})
        msg: dict[str, Any] = {"role": "assistant", "content": parts}
        if with_tools:
            calls = []
            for _ in range(r.randint(1, 2)):
                self.call_no += 1
                name = r.choice(TOOLS)
                args = {"path": f"src/{r.choice(WORDS)}/{r.choice(WORDS)}.py"}
                if name in ("Shell", "Grep"):
                    args = {"command": f"{r.choice(WORDS)} --{r.choice(WORDS)} {r.randint(1, 99)}"}
                if name == "StrReplaceFile":
                    args["old"] = r.choice(CODE_SNIPPETS)[:80]
                    args["new"] = r.choice(CODE_SNIPPETS)[:80]
                calls.append(
                    {
                        "type": "function",
                        "id": f"call_{self.call_no:08d}",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                )
            msg["tool_calls"] = calls
        return msg

    def tool(self, call_id: str) -> dict[str, Any]:
        r = self.rng
        output = self.long_output()
        if r.random() < 0.5:
            content: Any = [{"type": "text", "text": "<system>Command executed.</system>"}]
            content.append({"type": "text", "text": output})
        else:
            content = output
        return {"role": "tool", "content": content, "tool_call_id": call_id}

    def turns(self) -> Iterator[dict[str, Any]]:
        r = self.rng
        while True:
            yield self.user()
            for _ in range(r.choice((0, 1, 1, 2, 3))):
                reply = self.assistant(with_tools=True)
                yield reply
                for call in reply["tool_calls"]:
                    yield self.tool(call["id"])
            yield self.assistant(with_tools=False)


class _DenseGen(_Gen):
    """Short messages: a sentence or two from the user, a short think and
    reply from the assistant, tool calls on half the replies, short results."""

    def user(self) -> dict[str, Any]:
        r = self.rng
        if r.random() < 0.15:
            return {"role": "user", "content": self.cjk(r.randint(2, 7))}
        return {"role": "user", "content": self.paragraph(r.randint(2, 7))}

    def assistant(self, with_tools: bool) -> dict[str, Any]:
        r = self.rng
        parts: list[dict[str, Any]] = []
        if r.random() < 0.6:
            parts.append({"type": "think", "think": self.paragraph(r.randint(2, 8))})
        text = self.paragraph(r.randint(2, 8))
        if r.random() < 0.1:
            text = self.cjk(1) + "\n" + text
        parts.append({"type": "text", "text": text})
        msg: dict[str, Any] = {"role": "assistant", "content": parts}
        if with_tools:
            calls = []
            for _ in range(1 if r.random() < 0.8 else 2):
                self.call_no += 1
                name = r.choice(TOOLS)
                args = {"path": f"src/{r.choice(WORDS)}/{r.choice(WORDS)}.py"}
                if name in ("Shell", "Grep"):
                    args = {"command": f"{r.choice(WORDS)} --{r.choice(WORDS)} {r.randint(1, 99)}"}
                calls.append(
                    {
                        "type": "function",
                        "id": f"call_{self.call_no:08d}",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                )
            msg["tool_calls"] = calls
        return msg

    def tool(self, call_id: str) -> dict[str, Any]:
        r = self.rng
        kind = r.random()
        if kind < 0.4:
            output = "\n".join(
                f"{i:4d}\t{r.choice(WORDS)} = {r.choice(WORDS)}({r.randint(0, 999)})"
                for i in range(1, r.randint(5, 34))
            )
        elif kind < 0.6:
            output = self.paragraph(r.randint(3, 8))
        elif kind < 0.75:
            output = self.cjk(r.randint(3, 10))
        else:
            output = json.dumps(
                [{"id": i, "name": r.choice(WORDS)} for i in range(r.randint(3, 14))]
            )
        content: Any = output
        if r.random() < 0.5:
            content = [
                {"type": "text", "text": "<system>Command executed.</system>"},
                {"type": "text", "text": output},
            ]
        return {"role": "tool", "content": content, "tool_call_id": call_id}

    def turns(self) -> Iterator[dict[str, Any]]:
        r = self.rng
        while True:
            yield self.user()
            while True:
                reply = self.assistant(with_tools=r.random() < 0.5)
                yield reply
                if "tool_calls" not in reply:
                    break
                for call in reply["tool_calls"]:
                    yield self.tool(call["id"])


def generate_messages(n: int, seed: int = SEED, shape: str = "default") -> list[dict[str, Any]]:
    """``n`` messages (tool results may straddle the end: the list is cut at ``n``)."""
    gen = (_DenseGen if shape == "dense" else _Gen)(seed + n)
    out: list[dict[str, Any]] = []
    for msg in gen.turns():
        out.append(msg)
        if len(out) >= n:
            return out
    return out  # pragma: no cover


def kimi_lines(messages: list[dict[str, Any]], seed: int = SEED) -> list[str]:
    """The lines of a kimi-cli ``context.jsonl`` holding ``messages``."""
    rng = random.Random(seed)
    lines = [
        dump_special({"role": "_system_prompt", "content": SYSTEM_PROMPT}),
        dump_special({"role": "_checkpoint", "id": 0}),
    ]
    tokens = 800
    checkpoint = 0
    for msg in messages:
        if msg["role"] == "user" and rng.random() < 0.5:
            checkpoint += 1
            lines.append(dump_special({"role": "_checkpoint", "id": checkpoint}))
        line = dump_message(msg)
        lines.append(line)
        tokens += len(line) // 4
        if msg["role"] == "assistant":
            lines.append(dump_special({"role": "_usage", "token_count": tokens}))
    return lines


def write_kimi(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\n".join(kimi_lines(messages)) + "\n").encode("utf-8"))
    return path


def write_openai_json(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    value = [{"role": "system", "content": SYSTEM_PROMPT}, *messages]
    path.write_bytes((json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return path


def write_openai_jsonl(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    value = [{"role": "system", "content": SYSTEM_PROMPT}, *messages]
    text = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in value)
    path.write_bytes(text.encode("utf-8"))
    return path


def paths_for(n: int, out: Path = OUT_DIR, shape: str = "default") -> dict[str, Path]:
    prefix = "" if shape == "default" else f"{shape}_"
    return {
        "kimi": out / f"{prefix}kimi_{n}" / "context.jsonl",
        "openai-json": out / f"{prefix}openai_{n}.json",
        "openai-jsonl": out / f"{prefix}openai_{n}.jsonl",
    }


def ensure(
    n: int, out: Path = OUT_DIR, *, force: bool = False, shape: str = "default"
) -> dict[str, Path]:
    """Write the three files for ``n`` messages of ``shape`` unless they already exist."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r} (expected one of {', '.join(SHAPES)})")
    paths = paths_for(n, out, shape)
    if force or not all(p.is_file() for p in paths.values()):
        messages = generate_messages(n, shape=shape)
        write_kimi(paths["kimi"], messages)
        write_openai_json(paths["openai-json"], messages)
        write_openai_jsonl(paths["openai-jsonl"], messages)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=list(SIZES))
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--shape", choices=SHAPES, default="default")
    args = parser.parse_args(argv)
    for n in args.sizes:
        for fmt, path in ensure(n, args.out, force=True, shape=args.shape).items():
            print(f"{n:>7} {fmt:<13} {path.stat().st_size / 1e6:8.1f} MB  {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

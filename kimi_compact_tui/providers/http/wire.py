"""The two wire formats: OpenAI-compatible ``/chat/completions`` over Server-Sent
Events, and Ollama's native ``/api/chat`` newline-delimited JSON.

A wire format builds the URL and payload from the request body and reads the
streamed response into a :class:`Collector`; the retry loop around it is shared.
No payload ever carries tool fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.providers._stream import Collector, Outcome, one_line
from kimi_compact_tui.providers.base import ProviderConfig

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import httpx
    from httpx_sse import ServerSentEvent

#: Request fields that would let the model call tools; a summary request never has them.
TOOL_FIELDS = ("tools", "tool_choice", "functions", "function_call", "parallel_tool_calls")


def strip_tools(body: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in TOOL_FIELDS}


def text_of(content: Any) -> str:
    """Join a message's content (a string or a list of text parts) into one string."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, Mapping) and part.get("type") == "text":
                out.append(str(part.get("text") or ""))
        return "".join(out)
    return ""


class Wire:
    """One wire format: its URL, headers, body and how its stream is read. A
    provider kind names the wire class that serves it (``registry.KINDS``)."""

    end_marker = "[DONE]"

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def headers(self, key: str) -> dict[str, str]:
        """The request's own headers; ``key`` (may be empty: none is sent) goes
        only here."""
        headers = {"Accept": "text/event-stream"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def url(self, config: ProviderConfig) -> str:
        raise NotImplementedError

    def payload(self, config: ProviderConfig, body: Mapping[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def read(self, response: httpx.Response, col: Collector) -> Outcome:
        raise NotImplementedError


def bad_json(data: str) -> Outcome:
    return Outcome("failed", f"invalid JSON in a stream event: {one_line(data, 80)!r}")


def content_type(response: httpx.Response) -> str:
    """The media type of ``response``, lower case, without its parameters."""
    return str(response.headers.get("content-type", "")).partition(";")[0].strip().lower()


def not_a_stream(ctype: str) -> Outcome | None:
    """The failure of a body that is not an event stream (``ctype`` is its
    media type), or None for one."""
    if "text/event-stream" in ctype:
        return None
    return Outcome(
        "failed",
        f"expected an event stream from the provider, got {ctype or 'no content type'!r}",
    )


def events(response: httpx.Response) -> AsyncIterator[ServerSentEvent]:
    """The server-sent events of ``response`` (``httpx_sse`` loads here, when a
    stream is read)."""
    from httpx_sse import EventSource

    return EventSource(response).aiter_sse()


def _inband_error(obj: Any) -> Outcome:
    if isinstance(obj, Mapping):
        err = obj.get("error", obj)
        if isinstance(err, Mapping):
            msg = err.get("message") or json.dumps(err)[:200]
        else:
            msg = str(err)
    else:
        msg = str(obj)
    return Outcome("failed", f"the provider sent an error mid-stream: {msg}")


class OpenAIChat(Wire):
    """``POST {base_url}/chat/completions`` with ``stream: true``; Server-Sent Events back."""

    def __init__(self, kind: str = "openai") -> None:
        super().__init__(kind)

    def url(self, config: ProviderConfig) -> str:
        base = config.effective_base_url or ""
        if base.endswith("/chat/completions"):
            return base
        return base + "/chat/completions"

    def payload(self, config: ProviderConfig, body: Mapping[str, Any]) -> dict[str, Any]:
        payload = strip_tools(body)
        payload.update(strip_tools(config.extra_body))
        # The engine already chose the model (compaction_model override, else the
        # provider's); the provider's own model only fills a body without one.
        if not payload.get("model") and config.model:
            payload["model"] = config.model
        payload["stream"] = True
        if self.kind == "openai":
            options = dict(payload.get("stream_options") or {})
            options["include_usage"] = True
            payload["stream_options"] = options
        return payload

    def handle_chunk(self, obj: Mapping[str, Any], col: Collector) -> None:
        if isinstance(obj.get("model"), str) and obj["model"]:
            col.model = obj["model"]
        col.set_usage(obj.get("usage"))
        choices = obj.get("choices") or []
        if not isinstance(choices, list):
            return
        for choice in choices:
            if not isinstance(choice, Mapping) or choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            if isinstance(delta, Mapping):
                col.think(delta.get("reasoning_content"))
                col.think(delta.get("reasoning"))
                col.text(delta.get("content"))
            col.set_usage(choice.get("usage"))  # Moonshot: usage inside the finishing choice
            if choice.get("finish_reason"):
                col.finish_reason = str(choice["finish_reason"])

    async def read(self, response: httpx.Response, col: Collector) -> Outcome:
        ctype = content_type(response)
        if ctype == "application/json":
            # A server that ignored "stream": a whole completion or an error in one body.
            raw = await response.aread()
            try:
                obj = json.loads(raw)
            except ValueError:
                return bad_json(raw.decode("utf-8", errors="replace"))
            if not isinstance(obj, Mapping):
                return bad_json(raw.decode("utf-8", errors="replace"))
            if obj.get("error"):
                return _inband_error(obj)
            self.handle_chunk(obj, col)
            return col.verdict(ended_normally=True, end_marker=self.end_marker)
        refused = not_a_stream(ctype)
        if refused is not None:
            return refused
        done = False
        async for sse in events(response):
            data = sse.data
            if sse.event == "error":
                try:
                    return _inband_error(json.loads(data))
                except ValueError:
                    return _inband_error(data)
            if not data.strip():
                continue
            if data.strip() == "[DONE]":
                done = True
                break
            try:
                obj = json.loads(data)
            except ValueError:
                return bad_json(data)
            if not isinstance(obj, Mapping):
                return bad_json(data)
            if obj.get("error"):
                return _inband_error(obj)
            self.handle_chunk(obj, col)
        return col.verdict(ended_normally=done, end_marker=self.end_marker)


def estimate_num_ctx(messages: list[dict[str, Any]]) -> int:
    """A context size big enough for the whole transcript plus room for the summary.

    Counts about one token per 3 characters (generous for English and code;
    CJK text is counted at one token per character), adds 4096 tokens for the
    answer, and rounds up to a multiple of 1024 (at least 8192).
    """
    tokens = 0
    for m in messages:
        text = str(m.get("content") or "")
        wide = (len(text.encode("utf-8", "surrogatepass")) - len(text)) // 2  # ~CJK chars
        tokens += (len(text) - wide) // 3 + wide + 8
    need = tokens + 4096
    return max(8192, -(-need // 1024) * 1024)


class OllamaChat(Wire):
    """Ollama's native ``POST /api/chat``: newline-delimited JSON ending in ``done: true``."""

    def __init__(self, kind: str = "ollama") -> None:
        super().__init__(kind)

    end_marker = "done: true"

    def headers(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"} if key else {}

    _OPTION_FIELDS = {
        "temperature": "temperature",
        "top_p": "top_p",
        "max_tokens": "num_predict",
        "max_completion_tokens": "num_predict",
        "seed": "seed",
        "stop": "stop",
    }

    def url(self, config: ProviderConfig) -> str:
        base = config.effective_base_url or ""
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        if base.endswith("/api/chat"):
            return base
        return base + "/api/chat"

    def payload(self, config: ProviderConfig, body: Mapping[str, Any]) -> dict[str, Any]:
        src = strip_tools(body)
        messages = [
            {"role": str(m.get("role", "user")), "content": text_of(m.get("content"))}
            for m in src.get("messages") or []
            if isinstance(m, Mapping)
        ]
        options: dict[str, Any] = {}
        for key, target in self._OPTION_FIELDS.items():
            if src.get(key) is not None:
                options[target] = src[key]
        options["num_ctx"] = config.num_ctx or estimate_num_ctx(messages)
        payload: dict[str, Any] = {
            "model": src.get("model") or config.model,
            "messages": messages,
            "stream": True,
            "truncate": False,
            "options": options,
        }
        extra = strip_tools(config.extra_body)
        if isinstance(extra.get("options"), Mapping):
            options.update(extra.pop("options"))
        payload.update(extra)
        payload["stream"] = True
        return payload

    async def read(self, response: httpx.Response, col: Collector) -> Outcome:
        done = False
        async for line in response.aiter_lines():
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                return bad_json(line)
            if not isinstance(obj, Mapping):
                return bad_json(line)
            if obj.get("error"):
                return _inband_error(obj)
            if isinstance(obj.get("model"), str) and obj["model"]:
                col.model = obj["model"]
            message = obj.get("message") or {}
            if isinstance(message, Mapping):
                col.think(message.get("thinking"))
                col.text(message.get("content"))
            if obj.get("done"):
                done = True
                col.finish_reason = str(obj.get("done_reason") or "stop")
                prompt = obj.get("prompt_eval_count")
                completion = obj.get("eval_count")
                if prompt is not None or completion is not None:
                    col.set_usage(
                        {
                            "prompt_tokens": prompt or 0,
                            "completion_tokens": completion or 0,
                            "total_tokens": (prompt or 0) + (completion or 0),
                        }
                    )
                break
        return col.verdict(ended_normally=done, end_marker=self.end_marker)

"""The plugin-shaped facade from the spec: ``get_ui_elements(config)`` and
``execute_action(...)``, actions ``compact_conversation`` and
``compact_up_to_here``, config element ``compaction_model``.

``execute_action`` does the whole compaction for one session through the
compaction job that the CLI and the TUI use: enablement check, range
resolution, preserved-tail scan, synthetic request, a call to ``summarize``
(the provider, injected: the engine never does I/O itself) and the draft's
compacted session. It returns plain data, never raises for a no-op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.request import CompactionRequest
from kimi_compact_tui.config import AppConfig, compaction_enablement
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.job import refusals
from kimi_compact_tui.job.job import CompactionJob
from kimi_compact_tui.job.refusals import RefusalKind
from kimi_compact_tui.providers.base import StreamResult

ACTION_COMPACT_CONVERSATION = "compact_conversation"
ACTION_COMPACT_UP_TO_HERE = "compact_up_to_here"
CONFIG_COMPACTION_MODEL = "compaction_model"

UI_ELEMENTS: tuple[dict[str, Any], ...] = (
    {
        "kind": "session_action",
        "id": ACTION_COMPACT_CONVERSATION,
        "label": "Compact conversation",
        "description": "Summarize the history, keeping the last user/assistant messages.",
    },
    {
        "kind": "message_action",
        "id": ACTION_COMPACT_UP_TO_HERE,
        "label": "Compact up to here",
        "description": "Summarize messages 1..N exactly (no preserved tail).",
    },
    {
        "kind": "config",
        "id": CONFIG_COMPACTION_MODEL,
        "label": "Compaction model",
        "description": "Per-session model override for the compaction request.",
        "type": "string",
        "default": None,
    },
)


class KimiCompactionFeature:
    """kimi-cli compaction as a feature plugin."""

    id = "kimi-compaction"

    def get_ui_elements(self, config: dict[str, Any] | None) -> list[dict[str, Any]]:
        """All elements when ``config`` is None (global enumeration); ``[]``
        when the config does not enable kimi compaction."""
        if config is None:
            return [dict(e) for e in UI_ELEMENTS]
        enabled, _ = compaction_enablement(config)
        return [dict(e) for e in UI_ELEMENTS] if enabled else []

    def execute_action(
        self,
        action_id: str,
        *,
        session: Session,
        config: dict[str, Any] | None,
        summarize: Callable[[CompactionRequest], str] | None = None,
        message_number: int | None = None,
        custom_instruction: str = "",
        prompt: PromptSource | None = None,
        base_model: str | None = None,
    ) -> dict[str, Any]:
        enabled, reason = compaction_enablement(config)
        if not enabled:  # the spec's order: the enablement check comes first
            refusal = refusals.disabled(reason)
            return {"ok": False, "error": {"type": refusal.kind.value, "message": reason}}
        if action_id == ACTION_COMPACT_CONVERSATION:
            up_to = None
        elif action_id == ACTION_COMPACT_UP_TO_HERE:
            if message_number is None:
                return {
                    "ok": False,
                    "error": {
                        "type": "invalid_request",
                        "message": "compact_up_to_here needs a message number",
                    },
                }
            up_to = message_number
        else:
            return {
                "ok": False,
                "error": {"type": "unknown_action", "message": f"unknown action {action_id!r}"},
            }
        job = CompactionJob(session, AppConfig(raw=dict(config or {})), base_model=base_model)
        try:
            prep = job.prepare(up_to=up_to, custom_instruction=custom_instruction, prompt=prompt)
        except UserError as exc:
            return {"ok": False, "error": {"type": "invalid_request", "message": str(exc)}}
        plan = prep.plan
        ready = job.readiness(prep)  # the job's refusals, as every front end gets them
        if RefusalKind.NOTHING_TO_COMPACT in ready.kinds():
            return {"ok": True, "noop": True, "reason": plan.noop, "plan": plan.to_json()}
        if ready.first is not None:
            refusal = ready.first
            return {"ok": False, "error": {"type": refusal.kind.value, "message": str(refusal)}}
        request = prep.request
        assert request is not None  # not a no-op
        if summarize is None:
            return {"ok": True, "noop": False, "plan": plan.to_json(), "request": request}
        summary = summarize(request)
        try:
            draft = job.draft(prep, StreamResult(status="complete", summary=summary))
        except UserError as exc:
            return {"ok": False, "error": {"type": "invalid_summary", "message": str(exc)}}
        compacted = draft.compacted
        return {
            "ok": True,
            "noop": False,
            "plan": plan.to_json(),
            "request": request,
            "native_messages": [m.data for m in compacted.messages],
            "session": compacted,
        }

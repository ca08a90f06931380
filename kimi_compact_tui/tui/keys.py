"""The key tables: one per screen, the single source of its keys.

Each :class:`Key` says which key runs which action, its footer label, its help
text and (main screen) its rule: a function of the review state that answers
:data:`AVAILABLE`, :data:`ABSENT` (not offered at all, e.g. compaction disabled)
or a short reason why it cannot run now. From these tables come the screens'
``BINDINGS``, the help screen (every key of every screen), the command
palette, the footer's availability and the "why not" notification.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.binding import Binding, BindingType

from kimi_compact_tui.wording import noop_line

if TYPE_CHECKING:
    from kimi_compact_tui.tui.state import ReviewState

AVAILABLE: str | None = None
ABSENT = "\x00absent"  # a sentinel reason: the key is not offered at all

Rule = Callable[["ReviewState"], str | None]
#: How a key is named for people when a row has no ``display`` for it.
KEY_NAMES = {"escape": "esc", "exclamation_mark": "!", "question_mark": "?", "slash": "/"}


def _always(state: ReviewState) -> str | None:
    return AVAILABLE


@dataclass(frozen=True)
class Key:
    """One key of one screen."""

    key: str  # Textual key name(s), comma-separated ("escape,q")
    action: str  # the action it runs ("" for a help-only row, e.g. the arrows)
    label: str  # the footer label ("" keeps it out of the footer)
    help: str  # what it does, for the help screen and the palette
    display: str | None = None  # how the key is shown ("esc", "/")
    rule: Rule = _always
    priority: bool = False

    @property
    def shown_key(self) -> str:
        return self.display or self.key.split(",")[0]

    @property
    def help_keys(self) -> str:
        """Every key of the row, as the help screen lists them (``esc q``, ``y enter``)."""
        names = [KEY_NAMES.get(k, k) for k in self.key.split(",")]
        if self.display:
            if len(self.display.split()) >= len(names):
                return self.display
            names[0] = self.display
        return " ".join(names)

    def binding(self) -> Binding:
        return Binding(
            self.key,
            self.action,
            self.label,
            show=bool(self.label),
            key_display=self.display,
            priority=self.priority,
            id=self.action,
        )


def cancel(what: str = "cancel", *, priority: bool = False) -> Key:
    """``escape`` cancels a dialog (``what`` it does, for the help screen)."""
    return Key("escape", "cancel", "Cancel", what, display="esc", priority=priority)


def decline(what: str) -> Key:
    """``n`` (or ``escape``) says no to a confirmation: ``what`` does not happen."""
    return Key("n,escape", "cancel", "Cancel", what, display="n")


#: ``escape`` or ``q`` on a screen opened from the main one.
BACK = Key("escape,q", "close", "Back", "back to the main screen", display="esc")


def bindings(table: Sequence[Key]) -> list[BindingType]:
    """A screen's ``BINDINGS`` from its table (help-only rows left out)."""
    return [k.binding() for k in table if k.action]


def by_action(table: Sequence[Key], action: str) -> Key | None:
    for k in table:
        if k.action == action:
            return k
    return None


def key_for(table: Sequence[Key], pressed: str) -> Key | None:
    """The table entry a pressed key runs, or None."""
    for k in table:
        if k.action and pressed in k.key.split(","):
            return k
    return None


def check(table: Sequence[Key], action: str, state: ReviewState) -> bool | None:
    """Textual's ``check_action`` answer: True (run and show), None (shown but
    disabled) or False (hidden)."""
    k = by_action(table, action)
    if k is None:
        return True
    why = k.rule(state)
    if why is AVAILABLE:
        return True
    return False if why == ABSENT else None


def why_not(table: Sequence[Key], action: str, state: ReviewState) -> str:
    """One short line: why ``action`` cannot run now."""
    k = by_action(table, action)
    why = k.rule(state) if k is not None else AVAILABLE
    if why is AVAILABLE:
        return "available"
    if why == ABSENT:
        return absent_reason(state, action)
    return why or "available"


def absent_reason(state: ReviewState, action: str) -> str:
    prep = state.preparation
    if prep is not None and not prep.enabled:
        return f"compaction is disabled: {prep.disabled_reason or 'see the config'}"
    if action == "candidates":
        return "no candidates yet: every finished run (c) becomes one"
    if action == "safe_boundary":
        return "the boundary splits no tool exchange"
    return "not available here"


# ----------------------------------------------------------------------------- rules
# Each answers AVAILABLE, ABSENT or a reason. They read the state only.


def _session(state: ReviewState) -> str | None:
    return AVAILABLE if state.session is not None else "no session is loaded"


def _compaction(state: ReviewState) -> str | None:
    """Keys that only make sense when compaction is enabled for a session."""
    if state.session is None:
        return "no session is loaded"
    prep = state.preparation
    if prep is None:
        return "the compaction could not be prepared (see the legend)"
    if not prep.enabled:
        return ABSENT
    return AVAILABLE


def _can_compact(state: ReviewState) -> str | None:
    why = _compaction(state)
    if why is not AVAILABLE:
        return why
    noop = state.noop
    return noop_line(noop) if noop else AVAILABLE


def no_summary(state: ReviewState, purpose: str = "") -> str | None:
    """Why there is no summary (``purpose``: what it is missing for, e.g. " to
    write"), or None when there is one."""
    if state.summary is not None:
        return None
    result = state.stream_result
    if result is not None and result.status != "complete":
        return f"the last run was {result.status}: there is no summary{purpose} (press c)"
    return "no summary yet: press c to compact first"


def _has_summary(state: ReviewState) -> str | None:
    why = _compaction(state)
    if why is not AVAILABLE:
        return why
    return no_summary(state) or AVAILABLE


def _write(state: ReviewState) -> str | None:
    why = _has_summary(state)
    if why == "no summary yet: press c to compact first":
        return "nothing to write yet: press c to compact first"
    if why is not AVAILABLE:
        return why
    return state.write_refusal()


def _explicit(state: ReviewState) -> str | None:
    why = _compaction(state)
    if why is not AVAILABLE:
        return why
    return AVAILABLE if state.up_to is not None else "already the default preserved tail"


def _split(state: ReviewState) -> str | None:
    why = _compaction(state)
    if why is not AVAILABLE:
        return why
    return AVAILABLE if state.known_splits else ABSENT


def _file(state: ReviewState) -> str | None:
    return AVAILABLE if state.session_path is not None else "no session file is open"


def _held(state: ReviewState) -> str | None:
    if state.held is None:
        return "no pending review: the gate holds no compaction of this session"
    return AVAILABLE


def _candidates(state: ReviewState) -> str | None:
    return AVAILABLE if len(state.runs) else ABSENT


#: The message list's own keys (the widget's bindings; listed on the help screen).
LIST_KEYS: tuple[Key, ...] = (
    Key("up,k", "cursor_up", "", "move the highlight up one message", display="↑ k"),
    Key("down,j", "cursor_down", "", "move the highlight down one message", display="↓ j"),
    Key("pageup", "page_up", "", "move the highlight up a page", display="PgUp"),
    Key("pagedown", "page_down", "", "move the highlight down a page", display="PgDn"),
    Key("home", "first", "", "move the highlight to the first message", display="Home"),
    Key("end", "last", "", "move the highlight to the last message", display="End"),
)

MAIN_KEYS: tuple[Key, ...] = (
    Key("enter", "detail", "", "show the highlighted message in the detail pane", rule=_session),
    Key("b", "boundary", "Up to here",
        "compact up to here (explicit boundary at the highlighted message)", rule=_compaction),
    Key("s", "safe_boundary", "Safe boundary",
        "move the boundary so no tool call is cut off from its results", rule=_split),
    Key("escape", "reset_boundary", "Tail", "back to the default preserved tail",
        display="esc", rule=_explicit),
    Key("p", "preview", "Preview", "preview the request (transcript, prompt, JSON body, tokens)",
        rule=_can_compact),
    Key("i", "instructions", "Instruct", "edit the custom compaction instructions",
        rule=_compaction),
    Key("m", "model", "Model", "choose the compaction model (per-session override)",
        rule=_compaction),
    Key("P", "prompt", "", "edit the prompt for this review (a copy; no prompt file changes)",
        rule=_compaction),
    Key("c", "compact", "Compact", "compact: stream the summary", rule=_can_compact),
    Key("d", "diff", "Diff", "diff the session before and after", rule=_has_summary),
    Key("e", "edit", "Edit", "edit the summary", rule=_has_summary),
    Key("C", "candidates", "Candidates",
        "candidates: every finished run, compare two, choose one to write", rule=_candidates),
    Key("w", "write", "Write", "write the compacted session (asks to confirm)", rule=_write),
    Key("u", "undo", "Undo", "undo this tool's last write (asks to confirm)", rule=_file),
    Key("r", "restore_points", "", "restore points: every earlier version, labelled by origin",
        rule=_file),
    Key("slash", "search", "Search", "search messages", display="/", rule=_session),
    Key("R", "reload", "Reload",
        "reload the session from disk (asks first when a summary or an edit is not written)",
        rule=_file),
    Key("n", "search_next", "", "next match of the last search", rule=_session),
    Key("N", "search_prev", "", "previous match of the last search", rule=_session),
    Key("o", "open", "", "open another session (the session picker)"),
    Key("H", "ledger", "",
        "ledger: this session's compactions, the agent's own and ours, what each summary "
        "lost, and repair of the agent's latest", rule=_file),
    Key("A", "allow_once", "",
        "a pending review: let the agent's next compaction of this session through once, "
        "unreviewed (as `hook allow`; asks first)", rule=_held),
    Key("question_mark", "help", "Help", "this help: every key of every screen", display="?"),
    Key("ctrl+p", "", "", "command palette: every action by name"),
    Key("q", "quit", "Quit", "quit (asks first when a summary or an edit is not written)"),
)  # fmt: skip

# ----------------------------------------------------------------------------- other screens

#: The retention pane's keys: its host screen's (the stream, the diff), so they act
#: on the pane's highlighted row wherever the pane is shown, focused or not.
PROBE_KEY = "Q"
RETENTION_KEYS: tuple[Key, ...] = (
    Key("space", "retention_pin", "Pin",
        "pin or unpin the retention pane's highlighted missing item: written back inside "
        "the summary (● marks it)"),
    Key("a", "retention_pin_all", "Pin all",
        "pin or unpin every missing item of the highlighted one's category"),
    Key(PROBE_KEY, "retention_probe", "Probe",
        "probe: ask the model about the compacted messages with only the summary as "
        "written (asks first, + / - for more or fewer questions; not offline)"),
    Key("i", "retention_instructions", "Missing → instructions",
        "add the pinned (else the highlighted) missing items to the instructions and run "
        "again (asks first)"),
    Key("e", "retention_editor", "Missing → editor",
        "open the summary editor with the pinned (else the highlighted) missing items "
        "appended"),
)  # fmt: skip

#: The pane's own rows on the help screen (its other keys: :data:`RETENTION_KEYS`).
RETENTION_PANE_KEYS: tuple[Key, ...] = (
    Key("enter", "", "",
        "show the message the highlighted missing item (or failed probe question) comes from"),
)  # fmt: skip

STREAM_KEYS: tuple[Key, ...] = (
    Key("escape", "cancel_or_close", "Cancel / close",
        "cancel a running stream (twice: stop waiting); back once it has ended"),
    Key("enter", "close", "", "back, once the stream has ended"),
    Key("w", "write", "Write", "write this summary (asks to confirm)"),
    Key("f", "feedback", "Feedback",
        "feedback on this summary: the model revises it (a new candidate linked to this one)"),
    Key("r", "rerun", "Run again",
        "run again (a revision: the same feedback again; asks before replacing a summary)"),
    Key("m", "toggle_markdown", "Raw / Markdown", "show the summary raw or rendered as Markdown"),
    *RETENTION_KEYS,
)  # fmt: skip

DIFF_KEYS: tuple[Key, ...] = (
    BACK,
    Key("w", "write", "Write", "write the compacted session (asks to confirm)"),
    Key("s", "toggle_summary", "Summary pane", "show or hide the summary pane"),
    Key("m", "toggle_markdown", "Raw / Markdown", "show the summary raw or rendered as Markdown"),
    *RETENTION_KEYS,
)

CANDIDATES_KEYS: tuple[Key, ...] = (
    Key("space", "toggle_mark", "Mark to compare", "mark a candidate; two marked are compared"),
    Key("enter", "", "", "choose the highlighted candidate as the summary to edit and write"),
    Key(
        "f",
        "feedback",
        "Feedback",
        "feedback on the highlighted candidate: the model revises it (a new candidate)",
    ),
    Key("escape", "close", "Close", "back to the main screen", display="esc"),
)

EDIT_KEYS: tuple[Key, ...] = (
    Key("ctrl+s", "save", "Save", "save: this text is what gets written", priority=True),
    cancel("cancel (asks first when there are unsaved changes)", priority=True),
)  # fmt: skip

FEEDBACK_KEYS: tuple[Key, ...] = (
    Key("ctrl+s", "send", "Send", "send the feedback: the revision streams as a new candidate",
        priority=True),
    cancel("cancel (nothing is sent)", priority=True),
)  # fmt: skip

INSTRUCTIONS_KEYS: tuple[Key, ...] = (
    Key("ctrl+s", "save", "Save", "use these instructions (the summary must be run again)",
        priority=True),
    cancel(priority=True),
)  # fmt: skip

PROMPT_KEYS: tuple[Key, ...] = (
    Key("ctrl+s", "save", "Use this prompt", "use this prompt for this review (a copy)",
        priority=True),
    Key("ctrl+r", "reset", "Configured prompt", "back to the configured prompt", priority=True),
    cancel("cancel (asks first when there are unsaved changes)", priority=True),
)  # fmt: skip

CONFIRM_WRITE_KEYS: tuple[Key, ...] = (
    Key("y,enter", "confirm", "Write", "write (refused when the boundary splits a tool exchange)"),
    Key("exclamation_mark", "confirm_split", "", "write the split history anyway", display="!"),
    decline("do not write"),
)

ASK_KEYS: tuple[Key, ...] = (
    Key("y", "answer(True)", "Yes", "yes"),
    Key("n,escape", "answer(False)", "No", "no", display="n"),
)

PROBE_ASK_KEYS: tuple[Key, ...] = (
    *ASK_KEYS,
    Key("plus", "step('more')", "More", "ask more questions", display="+"),
    Key("minus", "step('fewer')", "Fewer", "ask fewer questions", display="-"),
)

RESTORE_KEYS: tuple[Key, ...] = (
    Key("y,enter", "restore", "Restore", "restore (refused when the file changed since the write)"),
    Key("f", "force", "", "keep the current file as a restore point, then restore"),
    decline("do not restore"),
)

RESTORE_POINTS_KEYS: tuple[Key, ...] = (
    Key("enter", "", "", "restore the highlighted version (asks first)"),
    Key("escape,q", "cancel", "Cancel", "back", display="esc"),
)

LEDGER_KEYS: tuple[Key, ...] = (
    Key("p", "repair", "Repair latest",
        "repair the agent's latest own summary: put the block of what it lost into it, in "
        "place (shows the block, asks first; u undoes it)"),
    BACK,
)  # fmt: skip

PICKER_KEYS: tuple[Key, ...] = (
    Key("enter", "", "", "open the highlighted session (or the path typed below)"),
    cancel("close the picker"),
    Key("q", "cancel", "", "close the picker"),
    Key("A", "allow_once", "Allow once",
        "on a pending review: let the agent's next compaction of it through once, "
        "unreviewed (as `hook allow`; asks first)"),
)  # fmt: skip

MODEL_KEYS: tuple[Key, ...] = (
    Key("enter", "", "", "use the model typed or highlighted (an empty name clears the override)"),
    cancel(),
)

SEARCH_KEYS: tuple[Key, ...] = (
    Key("enter", "", "", "find the text typed (n / N on the main screen: next / previous)"),
    cancel(),
)

HELP_KEYS: tuple[Key, ...] = (
    Key("escape,q,question_mark,f1", "close", "Close", "close this help", display="esc q ? f1"),
)

ERROR_KEYS: tuple[Key, ...] = (
    Key("escape,enter,q", "close", "Close", "close the error", display="esc"),
    Key("R", "reload", "Reload",
        "reload the session (offered when the file changed on disk since it was loaded)"),
)  # fmt: skip

PREVIEW_KEYS: tuple[Key, ...] = (
    BACK,
    Key("b", "copy_body", "Copy body", "copy the JSON body to the clipboard"),
    Key("t", "copy_transcript", "Copy transcript", "copy the synthetic transcript"),
)

#: Every screen's keys, for the help screen (in the order a review meets them).
SCREEN_TABLES: tuple[tuple[str, tuple[Key, ...]], ...] = (
    ("Main screen", MAIN_KEYS),
    ("Message list (main screen)", LIST_KEYS),
    ("Session picker (o)", PICKER_KEYS),
    ("Ledger (H)", LEDGER_KEYS),
    ("Request preview (p)", PREVIEW_KEYS),
    ("Instructions (i)", INSTRUCTIONS_KEYS),
    ("Prompt (P)", PROMPT_KEYS),
    ("Stream (c)", STREAM_KEYS),
    ("Feedback (f on the stream)", FEEDBACK_KEYS),
    ("Diff (d)", DIFF_KEYS),
    ("Retention pane (stream and diff)", RETENTION_PANE_KEYS),
    ("Summary editor (e)", EDIT_KEYS),
    ("Candidates (C)", CANDIDATES_KEYS),
    ("Write dialog (w)", CONFIRM_WRITE_KEYS),
    ("Undo and restore dialogs (u, r)", RESTORE_KEYS),
    ("Restore points (r)", RESTORE_POINTS_KEYS),
    ("Questions", ASK_KEYS),
    ("Before a probe is sent", PROBE_ASK_KEYS),
    ("Model (m)", MODEL_KEYS),
    ("Search (/)", SEARCH_KEYS),
    ("Help (?)", HELP_KEYS),
    ("Error dialog", ERROR_KEYS),
)

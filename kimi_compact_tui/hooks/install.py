"""Adding our hook to an agent's configuration, and taking exactly it out.

- The file is read, our hook merged in (the user's hooks, and everything else
  in the file, are kept as they are), and written atomically with its mode.
- The file as it was is kept first, beside it, as
  ``<name>.kimi-compact-tui-<UTC time>.bak``.
- Installing twice changes nothing; installing with other options updates
  our own entry in place.
- Uninstalling takes out only our entry. When the file is exactly as our
  install left it, the bytes from before the install are put back (so the
  user's hooks are byte for byte what they were); otherwise our entry alone
  is taken out of what is there now.
- For an agent that runs a hook only once trusted (Codex), the trust entry
  for exactly our hook goes into its configuration, written by the scheme the
  agent's facts carry (:class:`~kimi_compact_tui.agenthook.HookTrust`; Codex's
  is ``formats/codex/trust.py``), or, with ``trust=False``, the user is told
  that the agent skips the hook until they trust it.

The agent's facts (:class:`~kimi_compact_tui.agenthook.AgentHook`) come from
the caller; this module names no agent.

Our hook is recognised by its command: ``… kimi-compact-tui hook run AGENT``.
What this module wrote is remembered in ``<state>/gate/installed.json`` (the
file, the sha256 it left, the backup).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import sys
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kimi_compact_tui.agenthook import TOML_HOOK_TABLES, AgentHook, HookTrust, toml_string
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.fsutil import atomic_write_bytes
from kimi_compact_tui.hooks.pending import GateState
from kimi_compact_tui.hooks.run import DEFAULT_LET_THROUGH_AFTER, PROG

BACKUP_TAG = ".kimi-compact-tui-"


@dataclass
class Change:
    """What one install or uninstall did to one file."""

    file: Path
    changed: bool
    backup: Path | None = None
    created: bool = False
    removed: bool = False


@dataclass
class Result:
    agent: AgentHook
    scope: str
    command: str | None
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(c.changed for c in self.changes)


# --- our command --------------------------------------------------------------------------


def our_executable() -> list[str]:
    """How the agent runs this tool: the absolute path of the script this run
    came from, else the one on PATH, else this Python with ``-m``."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == PROG and argv0.is_file():
        return [str(argv0.resolve())]
    found = shutil.which(PROG)
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "kimi_compact_tui"]


def our_command(agent: AgentHook, let_through_after: int = DEFAULT_LET_THROUGH_AFTER) -> str:
    words = [*our_executable(), "hook", "run", agent.name]
    if let_through_after != DEFAULT_LET_THROUGH_AFTER:
        words += ["--let-through-after", str(let_through_after)]
    return shlex.join(words)


_OURS = re.compile(r"(kimi-compact-tui|kimi_compact_tui)['\"]?\s+hook\s+run\s+(?P<agent>[\w-]+)")


def is_ours(command: Any, agent: AgentHook) -> bool:
    if not isinstance(command, str):
        return False
    found = _OURS.search(command)
    return found is not None and found.group("agent") == agent.name


# --- the files ----------------------------------------------------------------------------


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _backup(path: Path, data: bytes) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for n in range(1000):
        name = f"{path.name}{BACKUP_TAG}{stamp}{'' if n == 0 else f'-{n}'}.bak"
        backup = path.with_name(name)
        if not backup.exists():
            break
    mode = path.stat().st_mode & 0o7777
    atomic_write_bytes(backup, data, mode=mode)
    return backup


def _write(path: Path, old: bytes | None, new: bytes, state: GateState, agent: AgentHook) -> Change:
    if old == new:
        return Change(path, changed=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        backup = _backup(path, old) if old is not None else None
        atomic_write_bytes(path, new, mode=None if old is not None else 0o600)
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None
    manifest = _manifest(state)
    known: dict[str, Any] = manifest.get(str(path)) or {}
    ours_before = bool(known.get("ours"))
    # The bytes from before our first install stay the way back only while the file
    # held nothing but our own changes since (else uninstall takes ours out instead).
    untouched = ours_before and old is not None and known.get("sha256") == _sha(old)
    record = {
        "agent": agent.name,
        "sha256": _sha(new),
        "backup": known.get("backup") if untouched else None,
        "created": bool(untouched and known.get("created")),
        "ours": True,
    }
    if not ours_before:
        record["backup"] = str(backup) if backup else None
        record["created"] = old is None
    manifest[str(path)] = record
    _save_manifest(state, manifest)
    return Change(path, changed=True, backup=backup, created=old is None)


def _manifest(state: GateState) -> dict[str, Any]:
    try:
        data = json.loads((state.folder / "installed.json").read_bytes())
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_manifest(state: GateState, manifest: dict[str, Any]) -> None:
    path = state.folder / "installed.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(manifest, ensure_ascii=False, indent=2) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"), mode=0o600)


def _indent(text: str) -> int | str:
    for line in text.split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _dump(data: Any, like: str | None) -> bytes:
    indent = _indent(like) if like else 2
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    return (text + ("\n" if like is None or like.endswith("\n") else "")).encode("utf-8")


def _load_json(path: Path, raw: bytes | None) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object at the top")
    return data


def _groups(path: Path, data: dict[str, Any], event: str, create: bool) -> list[Any] | None:
    hooks = data.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise UserError(f'{path}: "hooks" is not an object; our hook cannot be merged in')
    groups = hooks.get(event)
    if groups is None:
        if not create:
            return None
        groups = hooks[event] = []
    if not isinstance(groups, list):
        raise UserError(f'{path}: "hooks".{event!r} is not a list; our hook cannot be merged in')
    return groups


def find_ours(groups: list[Any], agent: AgentHook) -> list[tuple[int, int]]:
    """(group index, handler index) of every handler of ours."""
    out = []
    for g, group in enumerate(groups):
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
            if isinstance(handler, dict) and is_ours(handler.get("command"), agent):
                out.append((g, h))
    return out


# --- install ------------------------------------------------------------------------------


def _config_of(
    agent: AgentHook,
    scope: str,
    env: Mapping[str, str] | None,
    cwd: Path | None,
    state: GateState | None,
) -> tuple[GateState, Mapping[str, str], Path]:
    """What install and uninstall start from: the gate's state, the environment
    (ours when none is given) and ``agent``'s configuration file in ``scope``."""
    env = os.environ if env is None else env
    return state or GateState(), env, agent.config_file(scope, env, cwd=cwd)


def install(
    agent: AgentHook,
    scope: str = "user",
    *,
    manual: bool = False,
    let_through_after: int = DEFAULT_LET_THROUGH_AFTER,
    trust: bool = True,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    state: GateState | None = None,
) -> Result:
    state, env, path = _config_of(agent, scope, env, cwd, state)
    command = our_command(agent, let_through_after)
    result = Result(agent, scope, command)
    if agent.shape == TOML_HOOK_TABLES:
        result.changes.append(_install_toml_tables(agent, path, command, manual, state))
        return result
    raw = _read(path)
    data = _load_json(path, raw)
    groups = _groups(path, data, agent.event, create=True)
    assert groups is not None
    matcher = agent.matcher(manual)
    ours = find_ours(groups, agent)
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if matcher is not None:
        group = {"matcher": matcher, **group}
    if ours:
        # keep our first place; drop any other copy of ours
        g0, _ = ours[0]
        for g, h in reversed(ours[1:]):
            _drop_handler(groups, g, h)
        groups[g0] = group
        index = g0
    else:
        groups.append(group)
        index = len(groups) - 1
    new = _dump(data, raw.decode("utf-8") if raw else None)
    result.changes.append(_write(path, raw, new, state, agent))
    scheme = agent.trust
    if scheme is not None:
        key = scheme.key(str(path.absolute()), agent.event, index, 0)
        value = scheme.value(agent.event, matcher, group["hooks"][0])
        config = agent.user_folder(env) / scheme.config_name
        if scope == "project":
            result.notes.append(
                f"{agent.label} loads a project's hooks only when it trusts the project "
                f"({scheme.project_trust((cwd or Path.cwd()).absolute())} in {config})"
            )
        if trust:
            result.changes.append(_trust(scheme, config, key, value, state, agent))
            result.notes.append(f"trusted in {config}: {scheme.shown(key)}")
        else:
            result.notes.append(
                f"{agent.label} skips this hook, silently, until you trust it: open {agent.label} "
                f"and review it under {scheme.review_place} (or run `{PROG} hook install "
                f"{agent.name}` without --no-trust)"
            )
    return result


def _drop_handler(groups: list[Any], g: int, h: int) -> None:
    handlers = groups[g]["hooks"]
    del handlers[h]
    if not handlers:
        del groups[g]


def _trust(
    scheme: HookTrust, config: Path, key: str, value: str, state: GateState, agent: AgentHook
) -> Change:
    raw = _read(config)
    text = _toml_text(config, raw)
    try:
        new = scheme.with_trust(text, key, value)
    except ValueError as exc:
        raise UserError(f"{config}: cannot add the trust entry ({exc})") from None
    return _write(config, raw, new.encode("utf-8"), state, agent)


def _toml_text(path: Path, raw: bytes | None) -> str:
    if raw is None:
        return ""
    try:
        text = raw.decode("utf-8")
        tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    return text


def _toml_block(agent: AgentHook, command: str, matcher: str | None) -> str:
    lines = ["[[hooks]]", f"event = {toml_string(agent.event)}"]
    lines.append(f"command = {toml_string(command)}")
    if matcher:
        lines.append(f"matcher = {toml_string(matcher)}")
    return "\n".join(lines) + "\n"


def _install_toml_tables(
    agent: AgentHook, path: Path, command: str, manual: bool, state: GateState
) -> Change:
    raw = _read(path)
    text = _toml_text(path, raw)
    block = _toml_block(agent, command, agent.matcher(manual))
    spans = _our_toml_tables(text, agent)
    if spans:
        start, end = spans[0]
        new = text[:start] + block + text[end:]
        for s, e in reversed(spans[1:]):
            new = new[:s] + new[e:]
    else:
        lead = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        new = text + lead + block
    try:
        tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: our [[hooks]] table cannot be added ({exc})") from None
    return _write(path, raw, new.encode("utf-8"), state, agent)


def _our_toml_tables(text: str, agent: AgentHook) -> list[tuple[int, int]]:
    """Where each ``[[hooks]]`` table of ours starts and ends in ``text``."""
    lines = text.split("\n")
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    spans = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "[[hooks]]":
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("["):
                j += 1
            end = offsets[j] if j < len(lines) else len(text)
            body = text[offsets[i] : end]
            try:
                table = tomllib.loads(body).get("hooks", [{}])[0]
            except (tomllib.TOMLDecodeError, IndexError, AttributeError):
                table = {}
            if is_ours(table.get("command"), agent):
                # the blank lines after it belong to what follows
                while end > offsets[i] and text[end - 2 : end] == "\n\n":
                    end -= 1
                spans.append((offsets[i], end))
            i = j
        else:
            i += 1
    return spans


# --- uninstall ----------------------------------------------------------------------------


def uninstall(
    agent: AgentHook,
    scope: str = "user",
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    state: GateState | None = None,
) -> Result:
    state, env, path = _config_of(agent, scope, env, cwd, state)
    result = Result(agent, scope, None)
    raw = _read(path)
    if raw is None:
        result.notes.append(f"{path}: no such file; nothing to take out")
        return result
    if agent.shape == TOML_HOOK_TABLES:
        text = _toml_text(path, raw)
        spans = _our_toml_tables(text, agent)
        new = text
        for s, e in reversed(spans):
            new = new[:s] + new[e:]
            if s == len(new) and new.endswith("\n\n"):
                new = new[:-1]
        result.changes.append(_put_back_or_write(path, raw, new.encode("utf-8"), state, agent))
        return result
    data = _load_json(path, raw)
    groups = _groups(path, data, agent.event, create=False) or []
    ours = find_ours(groups, agent)
    keys = []
    scheme = agent.trust
    for g, h in reversed(ours):
        if scheme is not None:
            keys.append(scheme.key(str(path.absolute()), agent.event, g, h))
        _drop_handler(groups, g, h)
    if ours and not groups:
        del data["hooks"][agent.event]
        if not data["hooks"]:
            del data["hooks"]
    new_bytes = _dump(data, raw.decode("utf-8")) if ours else raw
    result.changes.append(_put_back_or_write(path, raw, new_bytes, state, agent))
    if scheme is not None and ours:
        config = agent.user_folder(env) / scheme.config_name
        craw = _read(config)
        if craw is not None:
            text = _toml_text(config, craw)
            for key in keys:
                try:
                    text = scheme.without_trust(text, key)
                except ValueError as exc:
                    result.notes.append(f"{config}: the trust entry was left ({exc})")
            result.changes.append(
                _put_back_or_write(config, craw, text.encode("utf-8"), state, agent)
            )
        later = [g for g, _ in ours if g < len(groups)]
        if later:
            result.notes.append(
                f"{agent.label} numbers hooks by their place: the hooks after ours moved up, "
                "so it asks to trust them again"
            )
    if not ours:
        result.notes.append(f"{path}: no hook of ours; nothing taken out")
    return result


def _put_back_or_write(
    path: Path, raw: bytes, new: bytes, state: GateState, agent: AgentHook
) -> Change:
    """Our install undone: the bytes from before it when the file is as we left
    it, else ``new`` (what is there now, without ours)."""
    manifest = _manifest(state)
    known = manifest.get(str(path))
    if new == raw:
        return Change(path, changed=False)
    if known and known.get("ours") and known.get("sha256") == _sha(raw):
        backup = known.get("backup")
        if known.get("created") and not json_or_toml_has_content(new):
            _backup(path, raw)
            path.unlink()
            manifest.pop(str(path), None)
            _save_manifest(state, manifest)
            return Change(path, changed=True, removed=True)
        if backup and Path(backup).is_file():
            before = Path(backup).read_bytes()
            kept = _backup(path, raw)
            atomic_write_bytes(path, before)
            manifest.pop(str(path), None)
            _save_manifest(state, manifest)
            return Change(path, changed=True, backup=kept)
    change = _write(path, raw, new, state, agent)
    manifest = _manifest(state)
    manifest.pop(str(path), None)
    _save_manifest(state, manifest)
    return change


def json_or_toml_has_content(data: bytes) -> bool:
    text = data.decode("utf-8", "replace").strip()
    return text not in ("", "{}")


# --- status -------------------------------------------------------------------------------


def status(
    agent: AgentHook,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> list[dict[str, Any]]:
    """Where our hook is installed for ``agent``: one entry per scope."""
    env = os.environ if env is None else env
    out = []
    for scope in ("user", "project"):
        if scope == "project" and agent.project_file is None:
            continue
        path = agent.config_file(scope, env, cwd=cwd)
        entry: dict[str, Any] = {"agent": agent.name, "scope": scope, "file": str(path)}
        try:
            raw = _read(path)
            entry["exists"] = raw is not None
            entry["hooks"] = _ours_in(agent, path, raw, env)
        except UserError as exc:
            entry["exists"] = True
            entry["hooks"] = []
            entry["error"] = str(exc)
        out.append(entry)
    return out


def _ours_in(
    agent: AgentHook, path: Path, raw: bytes | None, env: Mapping[str, str]
) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if agent.shape == TOML_HOOK_TABLES:
        data = tomllib.loads(_toml_text(path, raw))
        found = data.get("hooks")
        tables: list[Any] = found if isinstance(found, list) else []
        return [
            {"matcher": t.get("matcher") or None, "command": t.get("command")}
            for t in tables
            if isinstance(t, dict)
            and t.get("event") == agent.event
            and is_ours(t.get("command"), agent)
        ]
    groups = _groups(path, _load_json(path, raw), agent.event, create=False) or []
    found = []
    trust_state: dict[str, Any] | None = None
    scheme = agent.trust
    for g, h in find_ours(groups, agent):
        group = groups[g]
        handler = group["hooks"][h]
        matcher = group.get("matcher") if isinstance(group.get("matcher"), str) else None
        item: dict[str, Any] = {"matcher": matcher, "command": handler.get("command")}
        if scheme is not None:
            if trust_state is None:
                config = agent.user_folder(env) / scheme.config_name
                try:
                    trust_state = scheme.state_of(_toml_text(config, _read(config)))
                except UserError:
                    trust_state = {}
            key = scheme.key(str(path.absolute()), agent.event, g, h)
            want = scheme.value(agent.event, matcher, handler)
            have = (trust_state.get(key) or {}).get("trusted_hash")
            item["trust"] = "trusted" if have == want else ("modified" if have else "untrusted")
        found.append(item)
    return found

"""The ledger (issue 33 item 3): `history SESSION` lists the session's compactions, the
agent's own (read from the sessions the real agents wrote and compacted themselves, in
../shared/reference/agents/) and ours (told apart by this tool's audit log), and what
each summary lost, with the retention report's items."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from kimi_compact_tui.formats.gate import hook_of
from kimi_compact_tui.hooks.pending import GateState
from kimi_compact_tui.hooks.run import run_hook
from tests import core_helpers

REFERENCE = Path(os.environ.get("KIMI_COMPACT_TUI_REFERENCE") or core_helpers.REFERENCE)
AGENTS = REFERENCE / "agents"


def need(name: str) -> Path:
    path = AGENTS / name
    if not path.exists():
        pytest.skip(f"reference data absent: {path}")
    return path


def copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copy(need(name), target)
    target.chmod(0o644)  # the reference files are read-only
    return target


def history(cli_main, session) -> dict:
    res = cli_main("history", session, "--json")
    assert res.code == 0, res.stderr
    return json.loads(res.stdout)


def test_claude_codes_own_compaction_and_what_its_summary_lost(cli_main, tmp_path):
    path = copy(tmp_path, "claude-session-after-compact.jsonl")
    boundary = [json.loads(x) for x in path.read_bytes().split(b"\n")
                if b'"compact_boundary"' in x][0]  # fmt: skip
    data = history(cli_main, path)
    (entry,) = data["compactions"]
    assert entry["by"] == "Claude Code" and entry["trigger"] == "manual"
    assert entry["tokens_before"] == boundary["compactMetadata"]["preTokens"]
    assert entry["tokens_after"] == boundary["compactMetadata"]["postTokens"]
    assert entry["messages_kept"] == len(boundary["compactMetadata"]["preservedMessages"]["uuids"])
    assert entry["messages_replaced"] > 0 and entry["latest_agent_compaction"] is True
    lost = {m["item"] for m in entry["retention"]["missing"]}
    # its summary (the fake's one line) names none of the user's later turns
    assert {"second turn", "third turn"} <= lost
    text = cli_main("history", path).stdout
    assert "Claude Code (manual)" in text and "lost: [user_requests] third turn" in text


def test_codex_own_compaction_and_the_messages_it_carried_over(cli_main, tmp_path):
    path = copy(tmp_path, "codex-session-after-compact.jsonl")
    records = [json.loads(x) for x in path.read_bytes().split(b"\n") if x.strip()]
    (compacted,) = [r for r in records if r["type"] == "compacted"]
    data = history(cli_main, path)
    (entry,) = data["compactions"]
    assert entry["by"] == "Codex" and entry["time"] == compacted["timestamp"][:19] + "Z"
    assert entry["summary_chars"] == len(compacted["payload"]["message"])
    assert entry["messages_kept"] >= 1  # user messages carried over verbatim
    assert entry["retention"]["total"] >= entry["retention"]["kept"]


def test_opencodes_own_compaction(cli_main, tmp_path):
    db = tmp_path / "opencode.db"
    src = sqlite3.connect(need("opencode-after-compact.db"))
    out = sqlite3.connect(db)
    src.backup(out)
    out.close()
    (sid,) = src.execute("select id from session").fetchone()
    src.close()
    data = history(cli_main, f"{db}#{sid}")
    (entry,) = data["compactions"]
    assert entry["by"] == "opencode" and entry["trigger"] == "manual"  # "auto": false
    assert entry["messages_replaced"] > 0 and entry["retention"] is not None


def test_ours_is_told_from_the_agents_own_by_the_audit_log(cli_main, tmp_path):
    path = copy(tmp_path, "claude-session-after-compact.jsonl")
    res = cli_main("compact", path, "--in-place", "--yes", "--provider", "offline", "--up-to", "4")
    assert res.code == 0, res.stderr
    data = history(cli_main, path)
    first, second = data["compactions"]
    assert first["by"] == "Claude Code" and first["latest_agent_compaction"] is True
    assert second["by"] == "kimi-compact-tui" and second["trigger"] == "review"
    assert second["latest_agent_compaction"] is False and second["in_file"] is True
    # undone: ours is no longer in the file, and the ledger says so
    assert cli_main("restore", path, "--yes").code == 0
    first, second = history(cli_main, path)["compactions"]
    assert second["in_file"] is False and "undone" in second["notes"][-1]


def test_the_gate_events_of_the_session_are_listed(cli_main, tmp_path):
    path = copy(tmp_path, "claude-session-after-compact.jsonl")
    stdin = json.dumps({"session_id": "s", "transcript_path": str(path), "trigger": "auto"})
    assert run_hook("claude-code", hook_of, stdin.encode(), state=GateState()).held
    data = history(cli_main, path)
    assert [e["event"] for e in data["gate"]] == ["held"]
    assert "held" in cli_main("history", path).stdout


def test_a_session_with_no_compaction(cli_main, tmp_path):
    path = copy(tmp_path, "claude-session-before-compact.jsonl")
    assert history(cli_main, path)["compactions"] == []
    assert "no compaction recorded" in cli_main("history", path).stdout


# --- repair (issue 33 item 4) ------------------------------------------------------------------


def test_repair_adds_the_block_in_place_and_restore_gives_the_bytes_back(cli_main, tmp_path):
    path = copy(tmp_path, "claude-session-after-compact.jsonl")
    before = path.read_bytes()
    res = cli_main("compact", path, "--repair", "--yes")
    assert res.code == 0, res.stderr
    assert "<!-- retention:" in res.stdout and "third turn" in res.stdout
    old, new = before.split(b"\n"), path.read_bytes().split(b"\n")
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert len(changed) == 1
    record = json.loads(new[changed[0]])
    assert record["isCompactSummary"] is True and "third turn" in json.dumps(record)
    (entry,) = history(cli_main, path)["compactions"]
    assert "repaired by kimi-compact-tui" in entry["notes"][-1]
    again = cli_main("compact", path, "--repair", "--yes")  # nothing lost any more
    assert again.code == 0 and "nothing to repair" in again.stdout
    assert cli_main("restore", path, "--yes").code == 0
    assert path.read_bytes() == before


def test_repair_is_refused_in_one_line_where_it_cannot_be_done(cli_main, tmp_path):
    own = copy(tmp_path, "claude-session-before-compact.jsonl")  # never compacted
    res = cli_main("compact", own, "--repair", "--yes")
    assert res.code == 2 and "has not compacted this session itself" in res.stderr
    db = tmp_path / "opencode.db"
    src = sqlite3.connect(need("opencode-after-compact.db"))
    out = sqlite3.connect(db)
    src.backup(out)
    out.close()
    (sid,) = src.execute("select id from session").fetchone()
    src.close()
    res = cli_main("compact", f"{db}#{sid}", "--repair", "--yes")
    assert res.code == 2 and "not offered for opencode database sessions" in res.stderr
    res = cli_main("compact", own, "--repair", "--yes", "--up-to", "2")
    assert res.code == 2 and "drop --up-to" in res.stderr
    for r in (res,):
        assert len(r.error_lines) == 1


def test_kimi_clis_rotation_is_its_compaction(cli_main, tmp_path):
    golden = REFERENCE / "kimi-cli" / "golden"
    if not golden.is_dir():
        pytest.skip(f"reference data absent: {golden}")
    folder = tmp_path / "sessions" / "md5" / "uuid-1"
    folder.mkdir(parents=True)
    shutil.copy(golden / "context_before_compaction.jsonl", folder / "context_1.jsonl")
    shutil.copy(golden / "context_after_compaction.jsonl", folder / "context.jsonl")
    for p in folder.iterdir():
        p.chmod(0o644)
    (entry,) = history(cli_main, folder / "context.jsonl")["compactions"]
    assert entry["by"] == "kimi-cli" and entry["trigger"] is None
    before = [json.loads(x) for x in (folder / "context_1.jsonl").read_text().split("\n") if x]
    usage = [r["token_count"] for r in before if r.get("role") == "_usage"]
    assert (entry["tokens_before"], entry["tokens_after"]) == (usage[-1], 337)  # per the README
    assert entry["messages_replaced"] > 0 and entry["retention"]["missing"]
    # ours rotates too: told apart by the audit log's backup
    res = cli_main("compact", folder / "context.jsonl", "--in-place", "--yes", "--provider",
                   "offline", "--up-to", "3")  # fmt: skip
    assert res.code == 0, res.stderr
    first, second = history(cli_main, folder / "context.jsonl")["compactions"]
    assert (first["by"], second["by"]) == ("kimi-cli", "kimi-compact-tui")


def test_gemini_clis_own_compression_and_ours(cli_main, tmp_path):
    path = copy(tmp_path, "gemini-session-after-compress.jsonl")
    (entry,) = history(cli_main, path)["compactions"]
    assert entry["by"] == "Gemini CLI" and entry["trigger"] is None
    assert entry["messages_replaced"] > 0
    assert "second turn" in {m["item"] for m in entry["retention"]["missing"]}
    res = cli_main("compact", path, "--in-place", "--yes", "--provider", "offline", "--up-to", "3")
    assert res.code == 0, res.stderr
    first, second = history(cli_main, path)["compactions"]
    assert (first["by"], second["by"]) == ("Gemini CLI", "kimi-compact-tui")
    # a file whose only rewrites are resumes has none
    before = copy(tmp_path, "gemini-session-before-compress.jsonl")
    assert history(cli_main, before)["compactions"] == []


def opencode_copy(tmp_path: Path, name: str) -> tuple[Path, str]:
    """A copy of a reference opencode database (never opened in place), and its session."""
    db = tmp_path / name
    src = sqlite3.connect(need(name))
    out = sqlite3.connect(db)
    src.backup(out)
    out.close()
    (sid,) = src.execute("select id from session").fetchone()
    src.close()
    return db, sid


def test_opencodes_own_compaction_names_what_its_summary_lost(cli_main, tmp_path):
    db, sid = opencode_copy(tmp_path, "opencode-after-compact.db")
    con = sqlite3.connect(db)
    rows = [(mid, json.loads(data)) for mid, data in con.execute(
        "select id, data from message order by time_created, id")]  # fmt: skip
    parts = {mid: [json.loads(d) for (d,) in con.execute(
        "select data from part where message_id = ? order by id", (mid,))] for mid, _ in rows}  # fmt: skip
    con.close()
    (pair,) = [k for k, (mid, _) in enumerate(rows) if parts[mid][0]["type"] == "compaction"]
    tail = parts[rows[pair][0]][0]["tail_start_id"]
    start = [mid for mid, _ in rows].index(tail)
    replaced_requests = [p["text"] for mid, d in rows[:start] if d["role"] == "user"
                         for p in parts[mid] if p["type"] == "text"]  # fmt: skip
    kept_requests = [p["text"] for mid, d in rows[start:pair] if d["role"] == "user"
                     for p in parts[mid] if p["type"] == "text"]  # fmt: skip
    assert replaced_requests and kept_requests
    (entry,) = history(cli_main, f"{db}#{sid}")["compactions"]
    assert entry["by"] == "opencode" and entry["latest_agent_compaction"] is True
    last_reply = [d for _, d in rows[:pair] if d["role"] == "assistant"][-1]
    assert entry["tokens_before"] == last_reply["tokens"]["total"]
    lost = {m["item"]: m["critical"] for m in entry["retention"]["missing"]}
    # the requests before its kept tail are not in its summary: lost, and critical
    assert all(lost.get(r) is True for r in replaced_requests), lost
    assert not any(r in lost for r in kept_requests)  # the tail it kept verbatim
    text = cli_main("history", f"{db}#{sid}").stdout
    for request in replaced_requests:
        assert f"lost: ! [user_requests] {request}" in text
    assert "CRITICAL:" in text
    # the database before its compaction records none
    before, bsid = opencode_copy(tmp_path, "opencode-before-compact.db")
    assert history(cli_main, f"{before}#{bsid}")["compactions"] == []


def test_kimi_code_our_compaction_is_listed_as_ours_with_what_it_replaced(cli_main, tmp_path):
    from tests.factories import kimi_code as kc

    folder = kc.write_home(tmp_path / "kimi-code-home", kc.conversation().bytes())
    wire = folder / "agents" / "main" / "wire.jsonl"
    assert history(cli_main, wire)["compactions"] == []
    res = cli_main("compact", wire, "--in-place", "--yes", "--provider", "offline", "--up-to", "4")
    assert res.code == 0, res.stderr
    apply = [json.loads(x) for x in wire.read_bytes().split(b"\n")
             if b'"context.apply_compaction"' in x][-1]  # fmt: skip
    (entry,) = history(cli_main, wire)["compactions"]
    assert entry["by"] == "kimi-compact-tui" and entry["trigger"] == "review"
    assert entry["messages_replaced"] == apply["compactedCount"] == 4
    assert (entry["tokens_before"], entry["tokens_after"]) == (
        apply["tokensBefore"], apply["tokensAfter"])  # fmt: skip
    assert entry["in_file"] is True and entry["latest_agent_compaction"] is False
    assert cli_main("restore", wire, "--yes").code == 0
    (entry,) = history(cli_main, wire)["compactions"]
    assert entry["in_file"] is False and "undone" in entry["notes"][-1]


def test_opencode_tokens_after_its_compaction_are_the_first_replys(cli_main, tmp_path):
    from tests.factories import opencode as oc

    db = oc.OpencodeDb(tmp_path / "opencode.db")
    sid = db.session("compacted")
    first = db.user(sid, "Run the tests in tests/unit.")
    db.assistant(sid, first, [oc.step_start(), oc.text("They pass."), oc.step_finish()],
                 tokens={"total": 9_000})  # fmt: skip
    tail = db.user(sid, "Now the linter.")
    db.assistant(sid, tail, [oc.step_start(), oc.text("Clean."), oc.step_finish()],
                 tokens={"total": 9_500})  # fmt: skip
    db.compaction(sid, "The user asked: Run the tests in tests/unit. They pass.", tail)
    again = db.user(sid, "Anything else?")
    db.assistant(sid, again, [oc.step_start(), oc.text("No."), oc.step_finish()],
                 tokens={"total": 1_200})  # fmt: skip
    db.close()
    (entry,) = history(cli_main, f"{tmp_path / 'opencode.db'}#{sid}")["compactions"]
    assert (entry["tokens_before"], entry["tokens_after"]) == (9_500, 1_200)
    assert entry["messages_replaced"] == 2 and entry["messages_kept"] == 2
    lost = {m["item"] for m in entry["retention"]["missing"]}
    assert "Run the tests in tests/unit." not in lost  # its summary names the tests

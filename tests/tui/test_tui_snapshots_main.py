"""Snapshots of the main screen (fixed 120x40, no clock, no random values)."""

from __future__ import annotations

from kimi_compact_tui.tui.app import create_app
from tests.factories import hostile_messages, regions_messages, write_kimi, write_openai_json
from tests.tui_support import settle

SIZE = (120, 40)


loaded = settle  # the app at rest before the keys and the screenshot


def test_snapshot_all_regions(snap_compare, tmp_path):
    path = write_openai_json(tmp_path / "regions.json", regions_messages())
    app = create_app(path)
    assert snap_compare(app, press=["j", "j", "j"], terminal_size=SIZE, run_before=loaded)


def test_snapshot_explicit_boundary(snap_compare, tmp_path):
    path = write_openai_json(tmp_path / "regions.json", regions_messages())
    app = create_app(path)
    assert snap_compare(app, press=["j", "j", "j", "j", "b"], terminal_size=SIZE, run_before=loaded)


def test_snapshot_noop_session(snap_compare, tmp_path):
    path = write_openai_json(
        tmp_path / "short.json",
        [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Hello?"},
            {"role": "assistant", "content": "Hello."},
        ],
    )
    app = create_app(path)
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded)


def test_snapshot_markup_and_escapes(snap_compare, tmp_path):
    path = write_kimi(
        tmp_path / "hostile",
        hostile_messages(),
        system_prompt="You are Kimi [bold]x[/bold] \x1b[2J",
        usage=1234,
    )
    app = create_app(path)
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded)


def test_snapshot_disabled_compaction(snap_compare, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("compaction:\n  enabled: false\n  type: kimi\n", encoding="utf-8")
    path = write_openai_json(tmp_path / "regions.json", regions_messages())
    app = create_app(path, config_path=config)
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded)

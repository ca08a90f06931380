"""Commands start fast: each loads only what it uses.

The real command runs in a child process (``tests/procs.py``) through a tiny
wrapper that, at exit, prints which heavy libraries were imported. ``--help``
must import none of them; ``plan`` of a plain session with no config file
needs no config parser, no provider transport and no TUI.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests import procs

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pydantic", "yaml", "httpx", "asyncio", "textual", "msgspec")
#: The tool's own heavier layers and what they bring (the job, retention, the
#: extractor, fuzzy matching): a help reaches none of them.
LAYERS = ("kimi_compact_tui.job", "kimi_compact_tui.retention", "kimi_compact_tui.specifics.extractor",
          "rapidfuzz")  # fmt: skip

# Runs the command line like the installed script does, and reports at exit
# (after the command has done everything it does) the heavy modules loaded.
WRAPPER = """
import atexit, json, sys
HEAVY = {heavy!r}
def report():
    loaded = sorted(h for h in HEAVY if h in sys.modules)
    sys.stderr.write("\\nLOADED " + json.dumps(loaded) + "\\n")
atexit.register(report)
sys.argv = ["kimi-compact-tui", *sys.argv[1:]]
from kimi_compact_tui.cli import main
raise SystemExit(main())
"""


def loaded_by(
    tmp_path: Path, *args: str, watched: tuple[str, ...] = HEAVY
) -> tuple[int, str, list[str]]:
    """Run the command line with ``args``: its exit status, its stdout and the
    heavy modules it loaded."""
    env = dict(os.environ)
    env.pop("KIMI_COMPACT_TUI_CONFIG", None)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "no-config")  # no user config file is read
    env["HOME"] = str(tmp_path)
    code = WRAPPER.format(heavy=watched)
    result = procs.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        env=env,
        timeout=60,
    )
    line = next(x for x in result.stderr.split("\n") if x.startswith("LOADED "))
    return result.returncode, result.stdout, json.loads(line[len("LOADED ") :])


def small_session(tmp_path: Path) -> Path:
    path = tmp_path / "small.jsonl"
    lines = [{"role": "system", "content": "You are terse."}]
    for i in range(5):
        lines.append({"role": "user", "content": f"question {i}"})
        lines.append({"role": "assistant", "content": f"answer {i}"})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("-h",)])
def test_top_level_help_loads_no_heavy_library(tmp_path, args):
    code, out, loaded = loaded_by(tmp_path, *args)
    assert code == 0
    assert "kimi-compact-tui" in out
    assert loaded == []


@pytest.mark.parametrize("args", [("--help",), ("history", "--help"), ("compact", "--help")])
def test_a_help_loads_none_of_the_tools_heavier_layers(tmp_path, args):
    """``--help`` listed every command by importing ``history`` and ``compact``,
    which brought the job, retention and the extractor (about 75 ms of the
    0.10 s a help may take)."""
    code, out, loaded = loaded_by(tmp_path, *args, watched=LAYERS)
    assert code == 0 and "kimi-compact-tui" in out
    assert loaded == []


def test_the_help_lists_every_command_with_its_own_help(tmp_path):
    from kimi_compact_tui.cli import COMMAND_MODULES

    _, out, _ = loaded_by(tmp_path, "--help")
    flat = " ".join(out.split())
    for name, module in COMMAND_MODULES.items():
        assert f"{name} {' '.join(module.HELP.split())}" in flat


def test_the_light_help_is_the_full_parsers_help():
    """Listing the commands without their options prints the same help as
    registering them all."""
    from kimi_compact_tui.cli import build_parser

    assert build_parser(only=()).format_help() == build_parser().format_help()


def test_plan_of_a_small_session_without_config_loads_only_the_decoder(tmp_path):
    code, out, loaded = loaded_by(tmp_path, "plan", str(small_session(tmp_path)))
    assert code == 0, out
    assert "question 4" in out
    assert set(loaded) <= {"msgspec"}  # the session decoder; no config, provider or TUI


def test_plan_loads_neither_retention_nor_the_extractor(tmp_path):
    """A plan shows the regions and the request's size: the job's preparation
    imported retention (for the work folder) and with it rapidfuzz and the
    extractor, about 30 ms of a plan's 0.12 s."""
    watched = tuple(m for m in LAYERS if m != "kimi_compact_tui.job")
    code, out, loaded = loaded_by(tmp_path, "plan", str(small_session(tmp_path)), watched=watched)
    assert code == 0, out
    assert loaded == []


def test_a_command_help_loads_no_config_or_provider_library(tmp_path):
    code, out, loaded = loaded_by(tmp_path, "compact", "--help")
    assert code == 0 and "--provider" in out
    assert not {"pydantic", "yaml", "httpx", "asyncio", "textual"} & set(loaded)


def test_a_config_file_is_still_checked(tmp_path):
    """The lazy path still reads and validates a config file when one is given."""
    config = tmp_path / "config.yaml"
    config.write_text("compaction:\n  enabled: true\n  type: kimi\n  max_preserved: 3\n")
    code, _, loaded = loaded_by(
        tmp_path, "plan", str(small_session(tmp_path)), "--config", str(config)
    )
    assert code == 2
    assert {"yaml", "pydantic"} <= set(loaded)


def test_the_extractors_names_load_lazily_and_are_its_own(tmp_path):
    """The package's lazy names are the extractor's functions and types, whatever
    was imported first (a submodule named like a function would shadow it)."""
    code = (
        "import kimi_compact_tui.specifics.extractor as m, kimi_compact_tui.specifics as s;"
        "from kimi_compact_tui.specifics import extract, Specifics;"
        "assert extract is m.extract and callable(extract) and Specifics is m.Specifics;"
        "print('ok')"
    )
    result = procs.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "ok", result.stderr

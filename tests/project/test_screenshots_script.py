"""The README's screenshots come from ``scripts/screenshots.py``: it runs the real app
on a copy of a bundled sample, writes the four SVG pictures, leaves the sample as it
was, and puts no clock or path of this machine in them (two runs give the same
bytes)."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

from tests import procs

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "screenshots.py"
SAMPLE = REPO / "sample_sessions" / "kimi-debugging-session"
SIGNATURES = {
    "main.svg": ["compactable → summary", "24 messages"],
    "stream.svg": ["summary as it will be written", "Retention of messages"],
    "diff.svg": ["after the write"],
    "candidates.svg": ["#1", "#2", "+instructions"],
}


def shown_text(svg: str) -> str:
    """The characters an SVG export shows (its text elements, unescaped)."""
    parts = re.findall(r"<text[^>]*>(.*?)</text>", svg)
    return html.unescape("".join(re.sub(r"<[^>]+>", "", p) for p in parts)).replace("\xa0", " ")


def run_script(out: Path) -> None:
    done = procs.run(
        [sys.executable, str(SCRIPT), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_script_makes_the_four_pictures_from_a_copy_of_the_sample(tmp_path):
    before = tree(SAMPLE)
    run_script(tmp_path / "a")
    run_script(tmp_path / "b")
    assert tree(SAMPLE) == before  # the sample itself is never written
    for name, wanted in SIGNATURES.items():
        svg = (tmp_path / "a" / name).read_text(encoding="utf-8")
        text = shown_text(svg)
        for piece in wanted:
            assert piece in text, (name, piece)
        assert "(copy of the sample)" in text or name != "main.svg"
        assert str(tmp_path) not in svg and "kct-screenshots-" not in svg
        assert not re.search(r"\d+\.\d+ s\b|tokens/s", text), name  # no clock
        assert (tmp_path / "b" / name).read_bytes() == svg.encode("utf-8"), f"{name} varies"

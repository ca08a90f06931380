#!/usr/bin/env python3
"""The tests a pytest run failed, from its log (and its JUnit XML when there is one).

    python3 scripts/failed_tests.py LOG [JUNIT_XML]

Prints one test id per line (``FAILED``, ``ERROR``, and tests a crashed
pytest-xdist worker was running), then, when pytest stopped without naming any
(an internal error, a collection error, a killed run), the end of its log.
Exit status: 0 when it found no failure and the log ends with pytest's tally of a
passing run, 1 otherwise. Standard library only: ``.ci/run`` and ``scripts/ci-soak``
run it with any Python 3.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

_SUMMARY = re.compile(r"^(FAILED|ERROR) (\S+)")
_CRASHED = re.compile(r"worker '?(gw\d+)'? crashed while running '?([^'\s]+)'?")
_TALLY = re.compile(
    r"^=*\s*(?:\d+ \w+(?: \w+)?, )*\d+ (?:passed|skipped|deselected)\b.* in [\d.]+s"
)
_BAD_TALLY = re.compile(r"\b\d+ (failed|errors?)\b")


def _from_junit(path: Path) -> list[str]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return []
    found = []
    for case in root.iter("testcase"):
        if case.find("failure") is None and case.find("error") is None:
            continue
        classname, name = case.get("classname", ""), case.get("name", "")
        parts = classname.split(".")
        # tests.agents.test_x.TestClass -> tests/agents/test_x.py::TestClass
        for cut in range(len(parts), 0, -1):
            if parts[cut - 1].startswith("test"):
                module = "/".join(parts[:cut]) + ".py"
                found.append("::".join([module, *parts[cut:], name]))
                break
        else:
            found.append(f"{classname}::{name}")
    return found


def failed_tests(log_text: str, junit: Path | None = None) -> list[str]:
    """Every failing test named in the log or the XML, each once, in order."""
    found: list[str] = []
    for line in log_text.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line)
        if m := _SUMMARY.match(line):
            found.append(m.group(2))
        elif m := _CRASHED.search(line):
            found.append(m.group(2))
    if junit is not None:
        found += _from_junit(junit)
    return list(dict.fromkeys(found))


def run_passed(log_text: str) -> bool:
    """Whether the log ends with the tally of a run with no failure and no error."""
    tail = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in log_text.splitlines()[-5:]]
    tallies = [line for line in tail if _TALLY.search(line)]
    return bool(tallies) and not _BAD_TALLY.search(tallies[-1])


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    log = Path(argv[0])
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    junit = Path(argv[1]) if len(argv) > 1 else None
    failed = failed_tests(text, junit)
    for test in failed:
        print(test)
    if failed:
        return 1
    if run_passed(text):
        return 0
    print(f"(no failing test named; the last lines of {log}:)")
    for line in text.splitlines()[-30:]:
        print(f"    {line}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

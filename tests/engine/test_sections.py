"""The six-section contract checker (kimi_compact_tui.compaction.contract)."""

from __future__ import annotations

import ast
from pathlib import Path

from kimi_compact_tui.compaction import contract as sections
from kimi_compact_tui.compaction.contract import SECTIONS, check_sections


def full_summary(**bodies: str) -> str:
    out = []
    for name in SECTIONS:
        out.append(f"<{name}>\n{bodies.get(name, f'- something about {name}')}\n</{name}>")
    return "\n\n".join(out)


def test_the_six_sections_in_order() -> None:
    assert SECTIONS == (
        "current_focus",
        "environment",
        "completed_tasks",
        "active_issues",
        "code_state",
        "important_context",
    )


def test_complete_summary_is_ok() -> None:
    check = check_sections(full_summary())
    assert check.ok
    assert check.present == SECTIONS
    assert check.missing == () and check.empty == () and check.unclosed == ()
    assert not check.out_of_order
    assert check.warnings() == []
    assert check.describe() == "all 6 sections present"
    assert check.bodies["environment"].strip() == "- something about environment"


def test_missing_sections_are_named() -> None:
    text = "<current_focus>\nFixing the parser\n</current_focus>\n"
    check = check_sections(text)
    assert not check.ok
    assert check.present == ("current_focus",)
    assert check.missing == SECTIONS[1:]
    assert check.warnings()[0].startswith("missing sections: environment, completed_tasks")


def test_one_missing_section_singular() -> None:
    text = full_summary().replace("<code_state>", "").replace("</code_state>", "")
    check = check_sections(text)
    assert check.missing == ("code_state",)
    assert check.warnings() == ["missing section: code_state"]


def test_empty_and_placeholder_bodies_count_as_empty() -> None:
    text = full_summary(
        environment="   \n  ",
        active_issues="- [Problem]: [Where it stands / what to try next]\n- ...",
    )
    check = check_sections(text)
    assert check.empty == ("environment", "active_issues")
    assert check.missing == ()
    assert "empty sections: environment, active_issues" in check.describe()


def test_unclosed_section() -> None:
    text = full_summary().replace("</important_context>", "")
    check = check_sections(text)
    assert check.unclosed == ("important_context",)
    assert not check.ok
    assert "never closed: important_context" in check.describe()


def test_out_of_order_is_reported_but_ok() -> None:
    parts = full_summary().split("\n\n")
    parts[0], parts[1] = parts[1], parts[0]
    check = check_sections("\n\n".join(parts))
    assert check.ok
    assert check.out_of_order
    assert check.warnings() == ["sections are not in the contract's order"]


def test_tags_are_case_and_space_tolerant() -> None:
    text = full_summary().replace("<current_focus>", "< CURRENT_FOCUS >")
    assert check_sections(text).ok


def test_markdown_headings_count() -> None:
    text = "\n".join(
        f"## {name.replace('_', ' ').title()}\n- point about {name}\n" for name in SECTIONS
    )
    check = check_sections(text)
    assert check.ok, check.describe()
    bold = "**Current focus:**\nthe parser\n" + "\n".join(f"## {n}\nx\n" for n in SECTIONS[1:])
    assert check_sections(bold).ok


def test_empty_markdown_heading() -> None:
    text = "\n".join(
        f"## {name}\n" + ("" if name == "code_state" else "text\n") for name in SECTIONS
    )
    assert check_sections(text).empty == ("code_state",)


def test_none_and_empty_summary() -> None:
    for value in (None, "", "   "):
        check = check_sections(value)
        assert check.missing == SECTIONS
        assert not check.ok


def test_golden_kimi_cli_summary_shape() -> None:
    # kimi-cli's golden test wrote only <current_focus>: five sections missing.
    check = check_sections("<current_focus>\nSUMMARY\n</current_focus>")
    assert check.present == ("current_focus",)
    assert len(check.missing) == 5


def test_to_json() -> None:
    data = check_sections("<environment>\nx\n</environment>").to_json()
    assert data["present"] == ["environment"]
    assert data["ok"] is False
    assert "current_focus" in data["missing"]


def test_no_textual_import() -> None:
    tree = ast.parse(Path(sections.__file__).read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    assert not any(n.split(".")[0] in ("textual", "rich") for n in names)

"""docs/support.md shows the support table of ``graphcore.commands.support`` exactly (regenerate it
with ``python scripts/support_table.py``), and the table itself is consistent."""

from __future__ import annotations

from pathlib import Path

from graphcore.commands.support import COMMANDS, FAMILIES, REFUSALS, refusal, support_markdown

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "support.md"
BEGIN, END = "<!-- support-table:begin -->", "<!-- support-table:end -->"


def test_the_docs_show_the_support_table():
    text = PAGE.read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert shown.strip("\n") == support_markdown().strip("\n"), \
        "docs/support.md is out of date: run python scripts/support_table.py"


def test_every_refusal_names_a_known_cell_and_a_documented_exit_code():
    families, commands = {f.name for f in FAMILIES}, {c.name for c in COMMANDS}
    assert len(families) == len(FAMILIES) and len(commands) == len(COMMANDS)
    for (family, command), refused in REFUSALS.items():
        assert family in families and command in commands
        assert refused.code in (1, 2, 65, 69) and refused.message and refused.reason
    assert refusal("static_mlp", "run") is None
    assert refusal("plugin", "export").code == 1


def test_every_family_has_an_example_spec_in_the_repository():
    for family in FAMILIES:
        assert (ROOT / family.example).is_file(), family.example

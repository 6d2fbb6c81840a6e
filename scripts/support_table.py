"""Write the support table of graphcore.commands.support into docs/support.md (between its
support-table markers). Run from anywhere: python scripts/support_table.py"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphcore.commands.support import support_markdown  # noqa: E402

PAGE = ROOT / "docs" / "support.md"
BEGIN, END = "<!-- support-table:begin -->", "<!-- support-table:end -->"


def main() -> None:
    text = PAGE.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    PAGE.write_text(f"{head}{BEGIN}\n{support_markdown()}{END}{tail}")
    print(f"wrote {PAGE}")


if __name__ == "__main__":
    main()

"""Regenerate the README's pictures: docs/pictures/diff.png (`graphtool viz --diff` on the
seed's dynamic spec), docs/pictures/report.png (the top of `graphtool report`'s page, as
headless Chromium shows it) and docs/pictures/confusion.png (what `graphtool train
specs/iris.yaml` draws). Run from the repository root: python scripts/readme_pictures.py
(needs graphviz-pure or Graphviz, and the Debian package chromium)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PICTURES = ROOT / "docs" / "pictures"
sys.path.insert(0, str(ROOT / "tests" / "cli"))

from chromium_page import open_page  # noqa: E402


def graphtool(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT, check=True)


def main() -> None:
    PICTURES.mkdir(parents=True, exist_ok=True)
    spec = "specs/seed_dynamic.yaml"
    graphtool("viz", spec, "--diff", "params.apply_relu=false", "--rankdir", "LR", "-q",
              "-o", str(PICTURES / "diff.png"))
    with tempfile.TemporaryDirectory() as scratch:
        graphtool("report", spec, "--bench", "--train", "--out-dir", scratch, "-q")
        page = Path(scratch) / "seed_dynamic" / "report.html"
        visit = open_page(page.as_uri(), width=1200, height=1300, scale=0.6)
    if visit.problems():
        raise SystemExit(f"the report page had problems: {visit.problems()}")
    (PICTURES / "report.png").write_bytes(visit.screenshot)
    with tempfile.TemporaryDirectory() as scratch:
        graphtool("train", "specs/iris.yaml", "--out-dir", scratch, "-q")
        drawn = Path(scratch) / "iris" / "runs" / "1" / "confusion.png"
        (PICTURES / "confusion.png").write_bytes(drawn.read_bytes())
    for name in ("diff.png", "report.png", "confusion.png"):
        print(f"wrote {PICTURES / name} ({(PICTURES / name).stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()

"""What the commands print, as a user reads it: text reaches the reader as written (no Rich
markup read into op docs, paths or names), saved tables do not depend on the terminal."""

import re
import shutil
from pathlib import Path

from cli_helpers import invoke

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"


# --- text is text ---------------------------------------------------------------------------
def test_ops_table_keeps_bracketed_text_of_the_docs():
    result = invoke("ops")
    assert result.exit_code == 0
    assert "Limit values to [x_min, x_max] (a bound of None" in result.stdout
    assert "x[index] with basic and advanced numpy indexing." in result.stdout


def test_paths_that_look_like_markup_are_printed_as_they_are(tmp_path):
    folder = tmp_path / "[red]d[x]"
    folder.mkdir()
    shutil.copy(SPECS / "seed_dynamic.yaml", folder)
    result = invoke("run", folder / "seed_dynamic.yaml", "--out-dir", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    paths = [line for line in result.stdout.splitlines() if line.startswith("path")]
    assert paths and all("[red]d[x]/seed_dynamic.yaml:" in line for line in paths)


# --- saved tables ---------------------------------------------------------------------------
def test_bench_txt_does_not_depend_on_the_terminal_width(tmp_path):
    texts = []
    for columns in ("40", "500"):
        out = tmp_path / columns
        result = invoke("bench", SPECS / "seed_static.yaml", "--modes", "dynamic", "--profile",
                        "--repeat", "2", "--warmup", "0", "--out-dir", out,
                        env={"COLUMNS": columns})
        assert result.exit_code == 0, result.stderr
        texts.append((out / "seed_static" / "bench.txt").read_text())
    for text in texts:
        titles = [line for line in text.splitlines() if line.startswith("ops of ")]
        assert titles and all(re.search(r"\(\d+\.\d{3} ms in ops\)$", t) for t in titles), text

    def shape(text):  # the lines and their words, numbers blanked (op rows sort by time)
        return sorted(re.sub(r"\d+(\.\d+)?", "0", line).split() for line in text.splitlines())

    assert shape(texts[0]) == shape(texts[1])

"""Every command line of README.md's ```sh blocks runs, as written, from a scratch folder.

The scratch folder holds a copy of the repository's ``specs/`` and ``examples/`` (what the
README's commands name) and an empty ``outputs/``, nothing else, so a command that needs another
file fails here first. Each line must exit 0 without a traceback and write only under
``outputs/`` (artifacts never land in the repository root).

The "Set up" block is different: its lines create the virtual environment, install the project
and run the whole test suite, which a test cannot do to itself. ``.ci/run`` runs those lines
verbatim (checked below), so CI executes them on every submission; the cheap ones (the seed
example) also run here.

The ```python blocks are executed by ``tests/test_readme.py``.
"""

from __future__ import annotations

import csv
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CI_SCRIPT = ROOT / ".ci" / "run"

# Lines of the set-up block that only CI can run: they build the environment the tests run in,
# or they are the test run itself.
CI_ONLY = re.compile(r"(^|\s)(python3 -m venv|pytest)(\s|$)")


def sh_blocks() -> list[tuple[str, list[str]]]:
    """(heading, command lines) of every ```sh block, in order."""
    text = README.read_text()
    found = []
    for match in re.finditer(r"```sh\n(.*?)```", text, flags=re.S):
        heading = re.findall(r"^#+ (.+)$", text[:match.start()], flags=re.M)[-1]
        lines = [line for line in match.group(1).splitlines() if line.strip()]
        found.append((heading, lines))
    return found


def setup_lines() -> list[str]:
    return [line for heading, lines in sh_blocks() if heading == "Set up" for line in lines]


# Blocks under these headings are walk-throughs: their lines run in order in one folder,
# each using what the lines before it wrote.
IN_ORDER = ("Train, evaluate, predict", "A classifier from a CSV as it comes")


def command_lines() -> list[str]:
    return [line for heading, block in sh_blocks() if heading not in ("Set up", *IN_ORDER)
            for line in block]


# Lines that take seconds (a cluster, timing runs of every spec, training, a report with its
# benchmarks, ONNX export and Runtime, drawings rendered by Graphviz): `pytest -m "not slow"`
# leaves them out (test_cli_viz*, test_cli_bench, test_cli_train... cover those commands
# in-process), CI runs them.
SLOW = re.compile(r"graphtool (sweep|bench|report|train|export|viz)\b")


def marked(line: str):
    return pytest.param(line, marks=pytest.mark.slow) if SLOW.search(line) else line


def walk_throughs() -> list[tuple[str, list[str]]]:
    return [(heading, block) for heading, block in sh_blocks() if heading in IN_ORDER]


def cheap_setup_lines() -> list[str]:
    return [line for line in setup_lines() if not CI_ONLY.search(line.split("#")[0])]


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("NO_COLOR", None)
    return subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def files_under(folder: Path) -> set[Path]:
    return {path.relative_to(folder) for path in folder.rglob("*") if path.is_file()}


@pytest.fixture
def scratch(tmp_path):
    for name in ("specs", "examples"):
        shutil.copytree(ROOT / name, tmp_path / name)
    (tmp_path / "outputs").mkdir()  # as in a clone (outputs/.gitkeep)
    return tmp_path


def test_the_readme_has_commands_and_a_setup_block():
    assert len(command_lines()) >= 10
    assert any("pip install -e '.[test]'" in line for line in setup_lines())
    assert any(line.split("#")[0].strip() == "pytest" for line in setup_lines())


def test_ci_runs_the_setup_lines_verbatim():
    ci_lines = {line.strip() for line in CI_SCRIPT.read_text().splitlines()}
    for line in setup_lines():
        command = line.split("  #")[0].strip()
        assert command in ci_lines, f"README set-up line not run by .ci/run: {command}"


# What .ci/run may do besides the set-up lines: its own shell preamble, and the installation of
# the system package the README names (an `if` block around apt-get).
CI_FRAME = re.compile(r"^(set -euo pipefail|cd .*|if .*|fi|apt-get update && .*)$")


def test_ci_runs_nothing_but_the_setup_lines_the_lint_and_the_named_packages():
    """A newcomer following the README gets what CI tested: .ci/run adds only the lint commands
    and the system package that the README's set-up section names."""
    readme = README.read_text()
    setup_prose = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    lints = set(re.findall(r"`((?:ruff check|lint-imports)[^`]*)`",
                           setup_prose.replace("\n", " ")))
    assert any(lint.startswith("ruff check") for lint in lints), \
        "the README's set-up section names the lint command"
    assert "lint-imports" in lints, "the README's set-up section names the import rules' check"
    assert "`chromium`" in setup_prose, "the README's set-up section names the system package"
    allowed = {line.split("  #")[0].strip() for line in setup_lines()} | lints
    for line in CI_SCRIPT.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or CI_FRAME.match(line):
            continue
        assert line in allowed, f".ci/run runs something the README does not say: {line}"


def run_line(line: str, cwd: Path) -> None:
    done = shell(line, cwd)
    # `| head` may leave output unread: graphtool then ends with 141 (tests/cli/
    # test_cli_process.py), which pipefail passes on
    assert done.returncode in ((0, 141) if "| head" in line else (0,)), f"{line}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("line", [marked(line) for line in command_lines()])
def test_readme_command_runs_and_writes_only_under_outputs(line, scratch):
    before = files_under(scratch)
    run_line(line, scratch)
    stray = sorted(str(path) for path in files_under(scratch) - before
                   if path.parts[0] != "outputs")
    assert not stray, f"{line} wrote outside outputs/: {stray}"


@pytest.mark.slow  # two training runs, evaluate, predict: each a process
@pytest.mark.parametrize("heading, lines", walk_throughs())
def test_readme_walk_through_runs_in_order_and_writes_only_under_outputs(heading, lines,
                                                                          scratch):
    before = files_under(scratch)
    for line in lines:
        run_line(line, scratch)
    stray = sorted(str(path) for path in files_under(scratch) - before
                   if path.parts[0] != "outputs")
    assert not stray, f"{heading} wrote outside outputs/: {stray}"


@pytest.mark.parametrize("line", cheap_setup_lines())
def test_readme_setup_line_runs(line, scratch):
    run_line(line, scratch)  # the seed's examples write their DOT here, as the seed does


@pytest.mark.slow  # a training run and its commands, each a process
def test_readme_classifier_walk_through_shows_classes_a_schedule_and_the_confusion_matrix(
        scratch):
    """What the CSV walk-through says it shows: predictions named by class with their
    probabilities (the id column passed through), the learning rate per epoch following the
    spec's cosine, and the confusion matrix picture the README embeds."""
    heading = "A classifier from a CSV as it comes"
    lines, = [block for title, block in walk_throughs() if title == heading]
    outputs = [shell(line, scratch) for line in lines]
    for line, done in zip(lines, outputs, strict=True):
        assert done.returncode == 0, f"{line}\n{done.stderr}"
    predicted = next(done.stdout for line, done in zip(lines, outputs, strict=True)
                     if line.startswith("graphtool predict"))
    header, *rows = [row.split(",") for row in predicted.splitlines()]
    names = ("setosa", "versicolor", "virginica")
    assert header == ["id", "species_predictions", "species_probability",
                      *(f"species_probabilities_{name}" for name in names)]
    assert [row[:2] for row in rows] == [["f1", "setosa"], ["f2", "versicolor"]]
    for row in rows:
        probabilities = [float(v) for v in row[3:]]
        assert abs(sum(probabilities) - 1) < 1e-5
        assert float(row[2]) == max(probabilities) and names[
            probabilities.index(max(probabilities))] == row[1]
    run = scratch / "outputs" / "iris" / "runs" / "1"
    with (run / "train.csv").open() as f:
        log = list(csv.DictReader(f))
    lr = [float(row["lr"]) for row in log]
    epochs = len(lr)
    assert lr == pytest.approx([0.001 + (0.02 - 0.001) * (1 + math.cos(math.pi * k / epochs))
                                / 2 for k in range(epochs)])
    assert (run / "confusion.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "confusion matrix" in outputs[1].stdout and "virginica" in outputs[1].stdout

"""The seed's two examples run unchanged on graphcore and write the DOT files they promise.

``examples/seed_dynamic.py`` and ``examples/seed_static.py`` are the seed document's code with
``chainer`` replaced by ``graphcore``; the IPython lines (``!dot ...``, ``Image(...)``) became a
``dot -Tpng`` call that runs only when Graphviz is on PATH.  The tests run them in a temporary
directory (in process, and once each as a real ``python`` subprocess), check the DOT they
write, and check the files still are the seed's code.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DYNAMIC = EXAMPLES / "seed_dynamic.py"
STATIC = EXAMPLES / "seed_static.py"

VARIABLE = 'shape="octagon",fillcolor="#E0E0E0",style="filled"'
FUNCTION = 'shape="record",fillcolor="#6495ED",style="filled"'
STATIC_DOT = (
    "digraph graphname{rankdir=TB;"
    f'0 [label="(3, 2), float32",{VARIABLE}];'
    f'1 [label="LinearFunction",{FUNCTION}];'
    f'2 [label="(3, 5), float32",{VARIABLE}];'
    f'3 [label="W: (2, 5), float32",{VARIABLE}];'
    f'4 [label="b: (2), float32",{VARIABLE}];'
    f'5 [label="ReLU",{FUNCTION}];'
    f'6 [label="(3, 5), float32",{VARIABLE}];'
    f'7 [label="LinearFunction",{FUNCTION}];'
    f'8 [label="(3, 4), float32",{VARIABLE}];'
    f'9 [label="W: (5, 4), float32",{VARIABLE}];'
    f'10 [label="b: (5), float32",{VARIABLE}];'
    "1 -> 0;2 -> 1;3 -> 1;4 -> 1;5 -> 2;6 -> 5;7 -> 6;8 -> 7;9 -> 7;10 -> 7;}")


def dynamic_dot(reduction: str) -> str:
    return ("digraph graphname{rankdir=TB;"
            f'0 [label="float32",{VARIABLE}];'
            f'1 [label="{reduction}",{FUNCTION}];'
            f'2 [label="(5), float32",{VARIABLE}];'
            f'3 [label="ReLU",{FUNCTION}];'
            f'4 [label="(5), float32",{VARIABLE}];'
            "1 -> 0;2 -> 1;3 -> 2;4 -> 3;}")


@pytest.fixture
def no_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty directory with no Graphviz on PATH."""
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_dynamic_example_draws_the_branch_it_took(no_dot: Path, seed: int,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    np.random.seed(seed)
    scope = runpy.run_path(str(DYNAMIC), run_name="__main__")
    reduction = "Sum" if scope["x"].array.mean() > 0 else "Prod"
    assert (no_dot / "dynamic_graph_relu.dot").read_text() == dynamic_dot(reduction)
    assert capsys.readouterr().out == "Graph with ReLU has been saved as dynamic_graph_relu.dot\n"
    assert sorted(p.name for p in no_dot.iterdir()) == ["dynamic_graph_relu.dot"]


def test_seeds_cover_both_branches() -> None:
    means = []
    for seed in (0, 1, 2, 3):
        np.random.seed(seed)
        means.append(np.random.randn(5).astype(np.float32).mean())
    assert any(m > 0 for m in means) and any(m <= 0 for m in means)


def test_static_example_writes_the_static_graph(no_dot: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(STATIC), run_name="__main__")
    assert (no_dot / "static_graph.dot").read_text() == STATIC_DOT
    assert capsys.readouterr().out == "Static graph has been saved as static_graph.dot\n"
    assert sorted(p.name for p in no_dot.iterdir()) == ["static_graph.dot"]


@pytest.mark.skipif(os.name == "nt", reason="the stand-in dot is a POSIX shell script")
@pytest.mark.parametrize(("example", "stem"), [(DYNAMIC, "dynamic_graph_relu"),
                                               (STATIC, "static_graph")])
def test_png_is_rendered_when_dot_is_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             example: Path, stem: str) -> None:
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    fake_dot = fake_bin / "dot"
    fake_dot.write_text('#!/bin/sh\necho "$@" > dot_args.txt\n'
                        'while [ $# -gt 0 ]; do\n'
                        '  if [ "$1" = "-o" ]; then printf PNG > "$2"; fi\n'
                        '  shift\n'
                        'done\n')
    fake_dot.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake_bin))
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(example), run_name="__main__")
    assert (tmp_path / "dot_args.txt").read_text() == f"-Tpng {stem}.dot -o {stem}.png\n"
    assert (tmp_path / f"{stem}.png").read_text() == "PNG"


@pytest.mark.parametrize(("example", "dot_file", "message"), [
    (STATIC, "static_graph.dot", "Static graph has been saved as static_graph.dot"),
    (DYNAMIC, "dynamic_graph_relu.dot", "Graph with ReLU has been saved as dynamic_graph_relu.dot"),
])
def test_examples_run_as_scripts(tmp_path: Path, example: Path, dot_file: str,
                                 message: str) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # no Graphviz: the PNG step is skipped
    done = subprocess.run([sys.executable, str(example)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == message + "\n"
    text = (tmp_path / dot_file).read_text()
    if example == STATIC:
        assert text == STATIC_DOT
    else:
        assert text in (dynamic_dot("Sum"), dynamic_dot("Prod"))


# --- the files are still the seed's code ----------------------------------------------------
def seed_document() -> Path:
    """The seed tutorial, copied from ../shared/seed/ (see tests/data/README.md)."""
    data = Path(__file__).resolve().parents[1] / "data"
    return data / "seed" / "chainer_dynamic_vs_static_zh.txt"


def seed_code_blocks(text: str) -> list[list[str]]:
    """Each example in the seed: from its ``import chainer`` line to its ``Image(...)`` line."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line == "import chainer":
            current = []
        if current is not None:
            current.append(line)
            if line.startswith("Image("):
                blocks.append(current)
                current = None
    return blocks


def as_seed_would_read(example: Path) -> list[str]:
    """The example's code minus the header and the PNG step that replaced the IPython lines."""
    lines = example.read_text().splitlines()
    start = lines.index("import graphcore")
    code = lines[start:lines.index("if shutil.which('dot'):")]
    return [line for line in code if line not in ("import shutil", "import subprocess")]


@pytest.mark.parametrize(("index", "example"), [(0, DYNAMIC), (1, STATIC)])
def test_examples_are_the_seed_with_chainer_replaced(index: int, example: Path) -> None:
    block = seed_code_blocks(seed_document().read_text(encoding="utf-8"))[index]
    ipython = ("from IPython.display import Image", "!dot ", "Image(")
    expected = [line.replace("chainer", "graphcore").rstrip() for line in block
                if not line.startswith(ipython)]
    assert as_seed_would_read(example) == expected

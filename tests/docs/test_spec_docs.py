"""Every example in docs/spec.md works as the page says.

The page's fenced blocks are classified by an HTML comment on the line(s) before them:

- a ```yaml block starting with ``graphtool: 1`` and no marker is a whole spec: it loads (with
  ``file="docs/spec.md"``, ``folder="specs"``, so ``file:`` paths resolve as for a spec in
  ``specs/``) and runs forward and backward;
- ``<!-- error: TEXT -->``: loading the yaml block raises ``SpecErrors`` whose text contains TEXT;
- ``<!-- runtime-error: TEXT -->``: it loads, and running it raises ``SpecRuntimeError``
  containing TEXT;
- ``<!-- fragment -->``: not a whole spec; it must parse as YAML;
- ``<!-- output -->`` before a ```text block: the block is exactly ``render()`` of the error the
  nearest yaml block above it raises, when that block is loaded as ``model.yaml``.

Every ```python block runs (each in a fresh namespace) with the repository root as the working
directory. The op and layer tables are checked against the registry and ``LAYERS``.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

import graphcore
from graphcore import spec as gspec
from graphcore.errors import SpecErrors, SpecRuntimeError
from graphcore.spec import LAYERS

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "spec.md"
TEXT = DOC.read_text(encoding="utf-8")

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
_MARKER = re.compile(r"<!--\s*([\w-]+)(?::\s*(.*?))?\s*-->\s*$", re.S)


@dataclass
class Block:
    lang: str
    body: str
    line: int  # 1-based line of the opening fence
    marker: str | None
    argument: str | None

    @property
    def id(self) -> str:
        return f"{self.lang}@{self.line}"


def _blocks() -> list[Block]:
    blocks = []
    for match in _FENCE.finditer(TEXT):
        before = TEXT[:match.start()].rstrip()
        marker = _MARKER.search(before.rsplit("\n", 1)[-1])
        blocks.append(Block(match.group(1), match.group(2),
                            TEXT.count("\n", 0, match.start()) + 1,
                            marker.group(1) if marker else None,
                            marker.group(2) if marker else None))
    return blocks


BLOCKS = _blocks()
YAML = [b for b in BLOCKS if b.lang == "yaml"]
PYTHON = [b for b in BLOCKS if b.lang == "python"]
OUTPUTS = [b for b in BLOCKS if b.marker == "output"]
MARKERS = {"error", "runtime-error", "fragment", "output"}


def _ids(blocks: list[Block]) -> list[str]:
    return [b.id for b in blocks]


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _load(block: Block, file: str = "docs/spec.md"):
    return gspec.load_spec_text(block.body, file=file, folder="specs")


def _run(loaded):
    # A runtime-error example may make NaN on purpose; numpy's warnings are not the point.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return gspec.run(loaded)


def test_the_page_has_examples_of_every_kind():
    kinds = {b.marker for b in YAML}
    assert {None, "error", "runtime-error", "fragment"} <= kinds
    assert len(PYTHON) >= 4 and OUTPUTS
    assert all(b.marker in MARKERS for b in BLOCKS if b.marker), "unknown marker"
    assert all(b.lang in ("yaml", "python", "text") for b in BLOCKS), "unlabelled block"


@pytest.mark.parametrize("block", YAML, ids=_ids(YAML))
def test_yaml_example(block: Block):
    if block.marker == "fragment":
        yaml.safe_load(block.body)
        return
    if block.marker == "error":
        with pytest.raises(SpecErrors) as caught:
            _load(block)
        assert block.argument and block.argument in str(caught.value)
        return
    assert block.body.startswith("graphtool: 1"), (
        f"docs/spec.md:{block.line}: a yaml block that is not a whole spec needs "
        "<!-- fragment --> or <!-- error: ... -->")
    loaded = _load(block)
    if block.marker == "runtime-error":
        with pytest.raises(SpecRuntimeError) as caught:
            _run(loaded)
        assert block.argument and block.argument in str(caught.value)
        return
    assert block.marker is None, f"docs/spec.md:{block.line}: unexpected {block.marker}"
    result, model = gspec.run(loaded)
    assert set(result.outputs) == set(loaded.outputs)
    if loaded.loss is not None:
        assert np.isfinite(result.loss)
        for name, param in model.namedparams():
            assert param.grad is not None, f"{name} got no gradient"


@pytest.mark.parametrize("block", OUTPUTS, ids=_ids(OUTPUTS))
def test_rendered_output_matches(block: Block):
    assert block.lang == "text"
    source = [b for b in YAML if b.line < block.line][-1]
    assert source.marker in ("error", "runtime-error")
    with pytest.raises((SpecErrors, SpecRuntimeError)) as caught:
        _run(_load(source, "model.yaml"))
    assert caught.value.render() == block.body.rstrip("\n")


@pytest.mark.parametrize("block", PYTHON, ids=_ids(PYTHON))
def test_python_example(block: Block):
    code = compile("\n" * block.line + block.body, str(DOC), "exec")
    exec(code, {"__name__": "docs_spec_example"})  # noqa: S102 - our own documentation


# ---------------------------------------------------------------- the op and layer tables

def _table(heading: str) -> dict[str, tuple[str, str]]:
    """``{name: (inputs, attributes cell)}`` of the table whose header starts with heading."""
    start = TEXT.index(f"| {heading} | inputs | attributes |")
    rows = {}
    for line in TEXT[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows[cells[0].strip("`")] = (cells[1], cells[2])
    return rows


def _check_row(name: str, arity: int | None, attributes: dict, row: tuple[str, str]) -> None:
    inputs, cell = row
    assert inputs == ("any" if arity is None else str(arity)), name
    documented = {}
    for item in [] if cell == "—" else cell.split("<br>"):
        match = re.match(r"`(\w+)`: (.*?) — ", item)
        assert match, f"{name}: cannot read {item!r}"
        documented[match.group(1)] = match.group(2)
    assert list(documented) == list(attributes), name
    for key, attr in attributes.items():
        text = documented[key]
        assert text.endswith("required") == attr.required, (name, key)
        assert attr.doc in cell, (name, key)


def test_op_table_matches_the_registry():
    builtin = {name: op for name, op in graphcore.all_ops().items()
               if op.__module__.startswith("graphcore.") and name not in LAYERS}
    rows = _table("op")
    assert sorted(rows) == sorted(builtin), "run python scripts/op_table.py (docs/spec.md)"
    for name, op in builtin.items():
        _check_row(name, op.arity, op.attributes, rows[name])  # scripts/op_table.py fixes it


def test_layer_table_matches_the_layers():
    rows = _table("layer")
    assert list(rows) == list(LAYERS)
    for name, layer in LAYERS.items():
        _check_row(name, layer.arity, layer.attributes, rows[name])

"""A spec's parameters: ``SpecModel`` (one link per layer scope), ``build_model``,
``check_model`` (the API's argument check) and ``seeded`` (numpy's global generator seeded for
a block)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.errors import ArgumentTypeError
from graphcore.interpreter.arguments import check_seed, check_spec
from graphcore.interpreter.preprocessing import PREPROCESSING, Preprocessing, preprocessed
from graphcore.language.layers import LAYERS
from graphcore.language.syntax import IfStep, OpStep, RepeatStep, Spec, Step
from graphcore.links.link import Chain, Link


class SpecModel(Chain):
    """The parameters of a spec: one child link per layer scope, in file order."""

    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self.spec = spec
        with self.init_scope():
            made = set()  # a layer shared by several steps is made once
            for scope, step in _layer_scopes(spec):
                if scope not in made:
                    made.add(scope)
                    setattr(self, scope, _make_layer(step))
            if preprocessed(spec):  # a reserved name: no layer scope starts with _
                setattr(self, PREPROCESSING, Preprocessing(spec))

    def layer(self, scope: str) -> Link:
        return getattr(self, scope)

    @property
    def preprocessing(self) -> Preprocessing | None:
        """The state fitted on the training rows (``interpreter.preprocessing``), or None
        for a spec that encodes and normalizes nothing."""
        return self.__dict__.get(PREPROCESSING)

    def initialized(self) -> bool:
        """True once every parameter has its array (lazily sized ones get theirs, drawn from
        numpy's global generator, on the first run); remembered once true."""
        if not self.__dict__.get("_all_initialized", False):
            self.__dict__["_all_initialized"] = all(
                p.array is not None for p in self.params())
        return self.__dict__["_all_initialized"]


def check_model(api: str, model: Any) -> None:
    if not isinstance(model, SpecModel):
        raise ArgumentTypeError(f"{api}: model must be a SpecModel (from build_model), got "
                                f"{type(model).__name__}")


def _make_layer(step: OpStep) -> Link:
    """The link of a layer step; options its constructor refuses (a ``ksize`` with the wrong
    number of axes) are reported at the step."""
    try:
        return LAYERS[step.op].make(step.attrs)
    except (ValueError, TypeError, errors.ShapeError) as e:
        loc = step.loc
        line = loc.source.line(loc.line) if loc.source is not None else None
        raise errors.SpecRuntimeError(f"{step.op}: {e}", loc.file, loc.line, loc.col, line,
                                      loc.length) from e


def build_model(spec: Spec, seed: int | None = None) -> SpecModel:
    """Create the spec's parameters (eagerly where sizes are known), seeded by the spec."""
    check_spec("build_model", spec)
    check_seed("build_model", seed)
    with seeded(spec.seed if seed is None else seed):
        return SpecModel(spec)


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Seed numpy's global generator (initializers, dropout) for a block, then restore it."""
    state = np.random.get_state()
    np.random.seed(seed % 2**32)
    try:
        yield
    finally:
        np.random.set_state(state)


def _layer_scopes(spec: Spec) -> Iterator[tuple[str, OpStep]]:
    """Every layer scope name the spec can use, with its step (unrolled repeats expanded)."""

    def walk(steps: list[Step], suffix: str):
        for step in steps:
            if isinstance(step, OpStep):
                if step.layer:
                    yield step.name + suffix, step
            elif isinstance(step, IfStep):
                yield from walk(step.then, suffix)
                yield from walk(step.otherwise, suffix)
            elif isinstance(step, RepeatStep) and step.unroll:
                for i in range(step.count):
                    yield from walk(step.body, f"{suffix}_{i}")
            else:
                yield from walk(step.body, suffix)

    yield from walk(spec.graph + ([spec.loss] if spec.loss else []), "")

"""``DumpGraph``: the computational graph behind an observed variable (``main/loss``), as
DOT text in ``out/filename``, written once at the first iteration."""

from __future__ import annotations

import os
from typing import Any

from graphcore import computational_graph
from graphcore.config import config
from graphcore.training.extension import Extension
from graphcore.training.extensions.writer import Writer, write_atomic
from graphcore.variable import Variable


class DumpGraph(Extension):
    trigger = 1, "iteration"
    priority = -100

    def __init__(self, root_name: str, filename: str = "cg.dot",
                 writer: Writer | None = None) -> None:
        self._root_name = root_name
        self._filename = filename
        self._writer = writer or write_atomic
        self._original_flag: Any = None
        self._done = False

    def initialize(self, trainer: Any) -> None:
        if not self._done:
            self._original_flag = config.keep_graph_on_report
            config.keep_graph_on_report = True

    def __call__(self, trainer: Any) -> None:
        if self._done:
            return
        self._done = True
        config.keep_graph_on_report = self._original_flag
        var = trainer.observation.get(self._root_name)
        if not isinstance(var, Variable):
            raise RuntimeError(f"DumpGraph: {self._root_name!r} is not a reported Variable")
        dot = computational_graph.build_computational_graph([var]).dump()
        self._writer(os.path.join(trainer.out, self._filename), dot.encode("utf-8"))

    def serialize(self, serializer: Any) -> None:
        self._done = bool(serializer("_done", self._done))


dump_graph = DumpGraph

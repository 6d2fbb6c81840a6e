"""Op name -> ONNX: the one table the exporter reads.

Each entry of ``CONVERTERS`` is declared once per registered op: the lowest opset it needs and
a function that emits ONNX nodes for one IR node through an ``Emitter`` (``graphcore.onnx.
emit``): one output name, or one per output for a multi-output op. The registries and the
``converts`` decorator are in ``base.py``; the converters, by family, in ``core.py``
(elementwise, shapes, reductions, linear algebra), ``arrays.py`` (indexing, multi-output
array ops), ``layers.py`` (windowed layers, the LSTM cell) and ``losses.py``: each registers
its converters as it is imported, below, and none imports this package. ``NOT_EXPORTABLE``
names each registered op that has no mapping, with the reason. An op in neither (a plugin op,
say) fails export naming the op and where it ran.
"""

from __future__ import annotations

# each family registers its converters into CONVERTERS as it is imported
from graphcore.onnx.mapping import arrays, core, layers, losses  # noqa: F401
from graphcore.onnx.mapping.base import CONVERTERS, NOT_EXPORTABLE, Converter, converts

__all__ = ["CONVERTERS", "NOT_EXPORTABLE", "Converter", "converts"]

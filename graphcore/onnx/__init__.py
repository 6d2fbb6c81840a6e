"""ONNX export: ``export(model, args, path)`` for Python models (onnx-chainer's call shape),
``export_spec`` for specs. Needs the optional ``onnx`` package (``pip install -e '.[onnx]'``).
The op -> ONNX table is ``graphcore.onnx.mapping``."""

from graphcore.onnx.emit import DEFAULT_OPSET
from graphcore.onnx.errors import ExportError, OnnxUnavailable
from graphcore.onnx.export import export
from graphcore.onnx.mapping import CONVERTERS, NOT_EXPORTABLE
from graphcore.onnx.spec_export import export_spec

__all__ = ["CONVERTERS", "DEFAULT_OPSET", "NOT_EXPORTABLE", "ExportError", "OnnxUnavailable",
           "export", "export_spec"]

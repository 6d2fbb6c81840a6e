"""The exporter's one error type: a one-line message naming the op and where it ran."""

from graphcore.errors import GraphcoreError


class ExportError(GraphcoreError, RuntimeError):
    """The model cannot be exported as asked (an op without a mapping, an opset too old,
    control flow the exporter does not map)."""


class OnnxUnavailable(GraphcoreError, RuntimeError):
    """The ``onnx`` package is not installed (``pip install -e '.[onnx]'``)."""

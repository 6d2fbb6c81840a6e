"""The exporter's errors: ``ExportError`` (defined with the other typed errors in
``graphcore.errors``, so that reporting it needs no exporter import) and ``OnnxUnavailable``."""

from graphcore.errors import ExportError, GraphcoreError

__all__ = ["ExportError", "OnnxUnavailable"]


class OnnxUnavailable(GraphcoreError, RuntimeError):
    """The ``onnx`` package is not installed (``pip install -e '.[onnx]'``)."""

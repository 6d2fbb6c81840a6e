"""Typed errors raised by graphcore. The library never prints or exits; callers catch these.

Every error derives from ``GraphcoreError`` so a caller can catch the whole family at once, and
from the matching builtin (``ValueError``, ``TypeError``, ...) so code written for Chainer or
numpy that catches those keeps working.
"""


class GraphcoreError(Exception):
    """Base class of every error graphcore raises on purpose."""


class ShapeError(GraphcoreError, ValueError):
    """An op got inputs whose shapes it cannot combine; the message names the op and shapes."""


class DTypeError(GraphcoreError, TypeError):
    """An op got inputs of the wrong or mismatched dtypes."""


class GraphError(GraphcoreError, RuntimeError):
    """The graph cannot be used as asked (freed saved values, no gradient to start from, ...)."""


class BackwardError(GraphcoreError, RuntimeError):
    """An exception raised inside an op's backward, re-raised naming the forward op."""


class NonFiniteError(GraphcoreError, FloatingPointError):
    """Debug mode found NaN or Inf; the message names the first op that produced it."""


class GradientCheckError(GraphcoreError, AssertionError):
    """A numerical gradient check found analytic and numerical gradients that disagree."""


class SerializationError(GraphcoreError, ValueError):
    """A parameter file does not match the model it is loaded into."""


class RegistryError(GraphcoreError, ValueError):
    """An op declaration is invalid or its name is already taken."""

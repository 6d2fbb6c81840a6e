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


class _Located(GraphcoreError):
    """An error at a position in a spec: ``file:line:col: error: message``.

    ``line`` and ``col`` are 1-based; ``source_line`` (the offending line's text) and ``length``
    (how many characters the caret underlines) let ``render`` draw a caret; ``hint`` is an
    optional extra sentence (did-you-mean, YAML 1.1 traps).
    """

    def __init__(self, message: str, file: str = "<spec>", line: int = 0, col: int = 0,
                 source_line: str | None = None, length: int = 1,
                 hint: str | None = None) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.source_line = source_line
        self.length = max(length, 1)
        self.hint = hint
        super().__init__(self.headline())

    def headline(self) -> str:
        text = f"{self.file}:{self.line}:{self.col}: error: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text

    def render(self) -> str:
        """The headline, then the source line and a caret under the position (when known)."""
        lines = [self.headline()]
        if self.source_line is not None and self.col > 0:
            lines.append("    " + self.source_line.rstrip("\n"))
            lines.append("    " + " " * (self.col - 1) + "^" + "~" * (self.length - 1))
        return "\n".join(lines)


class SpecError(_Located, ValueError):
    """One problem in a spec file (it stops the spec from loading; the CLI exits 65)."""


class SpecErrors(GraphcoreError, ValueError):
    """Every problem found in one spec, in file order; raised instead of the first one."""

    def __init__(self, errors: list[SpecError]) -> None:
        self.errors = sorted(errors, key=lambda e: (e.file, e.line, e.col))
        super().__init__("\n".join(e.headline() for e in self.errors))

    def render(self) -> str:
        return "\n".join(e.render() for e in self.errors)


class SpecRuntimeError(_Located, RuntimeError):
    """Running a valid spec failed at a step (a shape mismatch, a carry that changed shape,
    NaN/Inf in the loss); located like ``SpecError`` (the CLI exits 1)."""


class RendererUnavailable(GraphcoreError, RuntimeError):
    """No program that turns DOT into an image was found (neither Graphviz ``dot`` nor the
    ``graphviz-pure`` package)."""


class RenderError(GraphcoreError, RuntimeError):
    """The DOT renderer ran but failed; the message carries its own error output."""


class TraceError(GraphcoreError, RuntimeError):
    """Static mode could not trace, verify or replay a program (bad IR, a path that diverged
    from the one traced, an op static mode cannot handle)."""


class ArgumentTypeError(GraphcoreError, TypeError):
    """A public function, constructor or op attribute got a value of the wrong type; the
    message names the API, the argument and what it expected."""


class ArgumentValueError(GraphcoreError, ValueError):
    """A value of the right type that the API cannot take (out of range, not one of the
    choices, a shape that does not fit); the message names the API and the argument."""

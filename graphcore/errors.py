"""Typed errors raised by graphcore. The library never prints or exits; callers catch these.

Every error derives from ``GraphcoreError`` so a caller can catch the whole family at once, and
from the matching builtin (``ValueError``, ``TypeError``, ...) so code written for Chainer or
numpy that catches those keeps working. ``InvalidType`` (Chainer's input-check error, a plain
``Exception`` there) is the base of ``ShapeError`` and ``DTypeError``.
"""

import re
import threading

CLIP_WIDTH = 80  # the most characters of one name, value or source line a message echoes
MAX_MESSAGE = 1000  # the most characters of one message (lists of names can be long)
MAX_SHOWN_ERRORS = 20  # SpecErrors.render lists this many, then counts the rest (as clang)


def clip(text: str, width: int = CLIP_WIDTH) -> str:
    """``text`` when it is at most ``width`` characters, else its start and end around
    ``...``: user text (a 750 KB op name, a 1 GB line) is echoed only as a short window."""
    if len(text) <= width:
        return text
    head = (width - 3) * 3 // 4
    return text[:head] + "..." + text[len(text) - (width - 3 - head):]


def clip_message(text: str, width: int = CLIP_WIDTH, total: int = MAX_MESSAGE) -> str:
    """``text`` with every run of non-blank characters longer than ``width`` clipped, and the
    whole cut to ``total`` characters."""
    text = re.sub(rf"\S{{{width + 1},}}", lambda m: clip(m.group(), width), text)
    return text if len(text) <= total else text[:total - 3] + "..."


class GraphcoreError(Exception):
    """Base class of every error graphcore raises on purpose."""


# The function whose inputs are being checked, for ``InvalidType``'s message (Chainer's
# "Invalid operation is performed in: <label> (Forward)"); set by
# ``graphcore.utils.type_check.get_function_check_context``.
function_check = threading.local()


class InvalidType(GraphcoreError):
    """Inputs an op does not take (their count, shapes or dtypes): Chainer's
    ``chainer.utils.type_check.InvalidType``. ``expect`` is the condition, ``actual`` what
    held instead; ``msg`` replaces the message built from them. ``ShapeError`` and
    ``DTypeError`` are kinds of it, so code that catches Chainer's error catches graphcore's
    input checks too."""

    def __init__(self, expect: object, actual: object, msg: str | None = None) -> None:
        if msg is None:
            msg = f"Expect: {expect}\nActual: {actual}"
            function = getattr(function_check, "current", None)
            if function is not None:
                msg = f"\nInvalid operation is performed in: {function.label} (Forward)\n\n{msg}"
        super().__init__(msg)
        self.expect = expect
        self.actual = actual

    def __reduce__(self) -> tuple:
        return type(self), (self.expect, self.actual, self.args[0])


class _InputError(InvalidType):
    """An ``InvalidType`` that carries a message only."""

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)
        self.expect = self.actual = None

    def __reduce__(self) -> tuple:
        return type(self), self.args


class ShapeError(_InputError, ValueError):
    """An op got inputs whose shapes it cannot combine; the message names the op and shapes."""


class DTypeError(_InputError, TypeError):
    """An op got inputs of the wrong or mismatched dtypes."""


class DeviceError(GraphcoreError, ValueError):
    """A device other than the host was asked for (graphcore computes with numpy only)."""


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
        self.message = clip_message(message)
        self.file = file
        self.line = line
        self.col = col
        self.source_line = source_line
        self.length = max(length, 1)
        self.hint = None if hint is None else clip_message(hint)
        super().__init__(self.headline())

    def headline(self) -> str:
        text = f"{clip(self.file)}:{self.line}:{self.col}: error: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text

    def render(self) -> str:
        """The headline, then the source line and a caret under the position (when known);
        of a long line only a window around the position."""
        lines = [self.headline()]
        if self.source_line is not None and self.col > 0:
            text, col, length = _window(self.source_line.rstrip("\n"), self.col, self.length)
            lines.append("    " + text)
            lines.append("    " + " " * (col - 1) + "^" + "~" * (length - 1))
        return "\n".join(lines)


def _window(line: str, col: int, length: int, width: int = CLIP_WIDTH) -> tuple[str, int, int]:
    """At most ``width`` characters of ``line`` around column ``col`` (1-based), with ``...``
    where it was cut; the column and underline length within that window."""
    if len(line) <= width:
        return line, col, max(1, min(length, len(line) - col + 1))
    start = max(0, min(col - 1 - width // 4, len(line) - width))
    end = start + width
    text = ("..." if start else "") + line[start:end] + ("..." if end < len(line) else "")
    offset = col - 1 - start  # the position within the window, 0-based
    return text, offset + 1 + (3 if start else 0), max(1, min(length, width - offset))


class SpecError(_Located, ValueError):
    """One problem in a spec file (it stops the spec from loading; the CLI exits 65)."""


class SpecErrors(GraphcoreError, ValueError):
    """Every problem found in one spec, in file order; raised instead of the first one."""

    def __init__(self, errors: list[SpecError]) -> None:
        self.errors = sorted(errors, key=lambda e: (e.file, e.line, e.col))
        super().__init__("\n".join(e.headline() for e in self.errors))

    def render(self) -> str:
        shown = [e.render() for e in self.errors[:MAX_SHOWN_ERRORS]]
        more = len(self.errors) - len(shown)
        if more:
            shown.append(f"... and {more} more error{'s' * (more > 1)} (fix these first)")
        return "\n".join(shown)


class MissingFileError(_Located, FileNotFoundError):
    """A file the spec names (``data: file:``, ``validation: file:``) does not exist: located
    at the name in the spec, and a ``FileNotFoundError`` (the CLI exits 66, missing input)."""

    def __init__(self, message: str, file: str = "<spec>", line: int = 0, col: int = 0,
                 source_line: str | None = None, length: int = 1, hint: str | None = None,
                 filename: str | None = None) -> None:
        super().__init__(message, file, line, col, source_line, length, hint)
        self.filename = filename


class UnreadableFileError(_Located, OSError):
    """A file a spec or a command names exists but is not a readable file: a folder, a FIFO,
    a device, a socket, or one without read permission. It is refused at once (a FIFO is
    never waited on); the CLI exits 66, as for a missing file. Located at the name in the spec
    (or ``--input``) when known; ``line`` 0: no place, the message alone."""

    def __init__(self, message: str, file: str = "<spec>", line: int = 0, col: int = 0,
                 source_line: str | None = None, length: int = 1, hint: str | None = None,
                 filename: str | None = None) -> None:
        super().__init__(message, file, line, col, source_line, length, hint)
        self.filename = filename

    def headline(self) -> str:
        if self.line > 0:
            return super().headline()
        return f"error: {self.message}" + (f" ({self.hint})" if self.hint else "")

    def __str__(self) -> str:  # not OSError's "[Errno None] None: filename"
        return self.headline()


class SpecRuntimeError(_Located, RuntimeError):
    """Running a valid spec failed at a step (a shape mismatch, a carry that changed shape,
    NaN/Inf in the loss); located like ``SpecError`` (the CLI exits 1)."""


class ExportError(GraphcoreError, RuntimeError):
    """The model cannot be exported as asked (an op without a mapping, an opset too old,
    control flow the exporter does not map). ``loc``: the spec position of the step it is
    about, when known; the error then reads ``file:line:col: error: message``, as the
    located errors of ``graphcore.errors`` do."""

    def __init__(self, message: str, loc: object | None = None) -> None:
        self.message = clip_message(message)
        self.loc = loc
        super().__init__(self.message if loc is None else f"{loc}: error: {self.message}")


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


class MissingArgumentError(GraphcoreError, RuntimeError):
    """A constructor was given none of the arguments it needs one of (Chainer raises a
    ``RuntimeError`` there: ``BatchNormalization()`` without ``size`` or ``axis``)."""

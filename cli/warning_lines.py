"""Python warnings (numpy's ``RuntimeWarning``: "Mean of empty slice", "overflow encountered")
as one line each on stderr, naming the op or layer that raised them, never numpy's two-line
form with a source line from inside numpy. Each distinct line is said once per command."""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from graphcore.function_node import FunctionNode
from graphcore.links.link import Link


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    said: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        where = _op_on_stack(sys._getframe(1)) or f"{Path(filename).name}:{lineno}"
        text = f"warning: {where}: {str(message).strip()}"
        if text not in said:
            said.add(text)
            print(text, file=sys.stderr, flush=True)

    with warnings.catch_warnings():
        # numpy's, whatever the filters say (`show` says each distinct line once); other
        # categories keep their filters and only take this form
        warnings.simplefilter("always", RuntimeWarning)
        warnings.showwarning = show
        yield


def _op_on_stack(frame: FrameType | None) -> str | None:
    """``Exp forward`` / ``Exp backward`` / ``BatchNormalization``: the innermost op or layer
    method running where the warning was raised."""
    while frame is not None:
        owner = frame.f_locals.get("self")
        if isinstance(owner, FunctionNode):
            name = frame.f_code.co_name
            phase = f" {name}" if name in ("forward", "backward") else ""
            return f"{owner.label}{phase}"
        if isinstance(owner, Link):
            return type(owner).__name__
        frame = frame.f_back
    return None

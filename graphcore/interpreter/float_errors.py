"""Silencing numpy's floating-point warnings for one spec run, cheaply.

``np.errstate(all="ignore")`` costs a few microseconds per use, a sizeable share of a small
spec's whole run. numpy 2 keeps the error state in a context variable, so setting that
variable to a state made once and resetting it afterwards does the same for a fraction of the
cost. Where numpy's internals differ (another numpy version) ``np.errstate`` is used.
"""

from __future__ import annotations

import numpy as np

try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    _IGNORE = _make_extobj(all="ignore")
except (ImportError, TypeError, AttributeError):  # pragma: no cover - other numpy versions
    _extobj_contextvar = None


def ignore_float_errors() -> object:
    """Ignore numpy's floating errors until ``restore_float_errors(token)`` (call it in a
    ``finally``): ``ignoring_float_errors``' work without a context object, for the hottest
    caller (``interpreter.calls.run_one``)."""
    if _extobj_contextvar is not None:
        return _extobj_contextvar.set(_IGNORE)
    state = np.errstate(all="ignore")
    state.__enter__()
    return state


def restore_float_errors(token: object) -> None:
    if _extobj_contextvar is not None:
        _extobj_contextvar.reset(token)
    else:
        token.__exit__(None, None, None)


class _Ignoring:
    """A reusable context manager: floating errors ignored inside (as ``np.errstate``)."""

    __slots__ = ("tokens",)

    def __init__(self) -> None:
        self.tokens: list = []

    def __enter__(self) -> None:
        self.tokens.append(ignore_float_errors())

    def __exit__(self, *exc) -> None:
        restore_float_errors(self.tokens.pop())


def ignoring_float_errors() -> _Ignoring:
    """A context manager under which numpy's floating errors are ignored."""
    return _Ignoring()

"""Keyword-argument checks for functions that take ``**kwargs`` (Chainer's
``chainer.utils.argument``): pull the known names out, refuse the rest by name."""

from __future__ import annotations

import inspect
from typing import Any


def check_unexpected_kwargs(kwargs: dict[str, Any], **unexpected: str) -> None:
    """Raise ``ValueError(message)`` for the first name of ``unexpected`` in ``kwargs``: an
    argument an earlier version took, and what to do instead."""
    for name, message in unexpected.items():
        if name in kwargs:
            raise ValueError(message)


def parse_kwargs(kwargs: dict[str, Any], *names_and_defaults: tuple[str, Any],
                 **unexpected: str) -> tuple[Any, ...]:
    """The values of ``names_and_defaults`` popped from ``kwargs`` (each default where it is
    absent); anything left in ``kwargs`` is a ``ValueError`` (``unexpected``) or a
    ``TypeError`` naming the caller and the arguments it does not take."""
    values = tuple(kwargs.pop(name, default) for name, default in names_and_defaults)
    if kwargs:
        check_unexpected_kwargs(kwargs, **unexpected)
        caller = inspect.stack()[1].function
        names = ", ".join(repr(name) for name in sorted(kwargs))
        raise TypeError(f"{caller}() got unexpected keyword argument(s) {names}")
    return values


def assert_kwargs_empty(kwargs: dict[str, Any]) -> None:
    """A ``TypeError`` when ``kwargs`` holds anything."""
    parse_kwargs(kwargs)

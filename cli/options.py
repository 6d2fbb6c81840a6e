"""Option types shared by several commands."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import typer

from cli.errors import USAGE, CliError
from graphcore.static.passes import PASS_NAMES, select


class Mode(StrEnum):
    """Execution mode: define-by-run, or static (trace once, optimize, replay a plan)."""

    dynamic = "dynamic"
    static = "static"


PASSES_HELP = (f"Static-mode passes: -NAME switches one off (-fuse,-cse), plain names run "
               f"exactly those (dce,cse); passes: {', '.join(PASS_NAMES)}.")


def passes_option() -> Any:
    """The ``--passes`` option (a fresh ``typer.Option`` for each command)."""
    return typer.Option(None, "--passes", help=PASSES_HELP)


def parse_passes(text: str | None) -> list[str] | None:
    """``--passes`` as the list ``select`` reads (None: the default pipeline). An unknown pass
    name is a usage error (exit 2) with ``select``'s message."""
    if text is None:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    try:
        select(items)
    except ValueError as e:
        raise CliError(f"--passes: {e}", USAGE) from None
    return items


class Batching(StrEnum):
    """How per-example runs (sequence inputs) are batched: auto (grouped by path, padded
    where the cost model says so), pad (padded into one bucket where the spec allows), off."""

    auto = "auto"
    pad = "pad"
    off = "off"


def batching_option() -> Any:
    """The ``--batching`` option (a fresh ``typer.Option`` for each command)."""
    return typer.Option(Batching.auto, "--batching", help="Per-example runs (lengths/examples "
                        "inputs): auto groups examples by path and pads where it pays, pad "
                        "pads every sequence into one batch, off runs one example at a time.")


def plugin_option() -> Any:
    """The repeatable ``--plugin FILE`` option: Python files that register ops for specs."""
    return typer.Option([], "--plugin", help="Load a Python file that registers ops "
                        "(graphcore.register_op) before reading the spec; repeatable.")

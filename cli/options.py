"""Option types shared by several commands."""

from enum import StrEnum


class Mode(StrEnum):
    """Execution mode. Static mode (trace, optimize, replay) arrives with its own issue."""

    dynamic = "dynamic"

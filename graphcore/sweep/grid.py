"""``--grid KEY=V1,V2,...`` items: which keys a command takes, their values, and the points.

Keys: ``params.NAME`` (what ``--set params.NAME=V`` sets) and ``seed`` for every command;
``train.steps``, ``train.lr``, ``train.optimizer``, ``train.batch_size`` and ``mode`` for
train; ``mode`` for run and check; ``bench.batch`` and ``mode`` for bench. A value list is
comma-separated; ``LO:HI`` is a range, which only ``--random K`` samples (uniformly; integers
when both ends are integers).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass

from graphcore.errors import GraphcoreError

COMMANDS = ("train", "bench", "run", "check")

# key -> the type its values must parse as (None: any text); per command.
_COMMON: dict[str, type | None] = {"seed": int}
KEYS: dict[str, dict[str, type | None]] = {
    "train": {**_COMMON, "train.steps": int, "train.lr": float, "train.optimizer": str,
              "train.batch_size": int, "mode": str},
    "bench": {**_COMMON, "bench.batch": int, "mode": str},
    "run": {**_COMMON, "mode": str},
    "check": {**_COMMON, "mode": str},
}
MODES = ("dynamic", "static")


class SweepOptionError(GraphcoreError, ValueError):
    """A ``--grid``/``--random``/``--sort`` option that cannot be used (a usage error)."""


@dataclass(frozen=True)
class GridAxis:
    key: str
    values: tuple[str, ...] = ()  # the listed values, as typed
    low: str | None = None  # a range LO:HI (only --random samples it)
    high: str | None = None

    @property
    def is_range(self) -> bool:
        return self.low is not None


def parse_grid(items: Sequence[str], command: str) -> list[GridAxis]:
    """The ``--grid`` items as axes, each key and value checked for ``command``."""
    if command not in COMMANDS:
        raise SweepOptionError(f"unknown command {command!r}; choose one of {', '.join(COMMANDS)}")
    axes: list[GridAxis] = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key or not text.strip():
            raise SweepOptionError(f"--grid expects KEY=V1,V2,... or KEY=LO:HI, got {item!r}")
        kind = _key_type(key, command)
        if any(a.key == key for a in axes):
            raise SweepOptionError(f"--grid names {key} twice; list all its values in one item")
        if ":" in text and "," not in text:
            low, _, high = (part.strip() for part in text.partition(":"))
            if kind not in (int, float):
                raise SweepOptionError(f"--grid {key}: a range LO:HI needs numbers, got {text!r}")
            for end in (low, high):
                _check_value(key, end, kind)
            if float(low) > float(high):
                raise SweepOptionError(f"--grid {key}: the range {text} is empty (LO > HI)")
            axes.append(GridAxis(key, low=low, high=high))
            continue
        values = tuple(v.strip() for v in text.split(","))
        for value in values:
            _check_value(key, value, kind)
        if len(set(values)) != len(values):
            raise SweepOptionError(f"--grid {key} lists a value twice: {text}")
        axes.append(GridAxis(key, values))
    return axes


def expand_grid(axes: Sequence[GridAxis]) -> list[dict[str, str]]:
    """Every combination of the axes' values, the first axis slowest."""
    for axis in axes:
        if axis.is_range:
            raise SweepOptionError(f"--grid {axis.key}={axis.low}:{axis.high} is a range; "
                                   "sample it with --random K, or list the values")
    return [dict(zip((a.key for a in axes), combo, strict=True))
            for combo in itertools.product(*(a.values for a in axes))]


def sample_grid(axes: Sequence[GridAxis], count: int, seed: int = 0) -> list[dict[str, str]]:
    """``count`` points drawn with a generator keyed by ``seed``: a listed value uniformly
    from its list, a range uniformly between its ends. Duplicates are dropped."""
    if count < 1:
        raise SweepOptionError(f"--random needs a positive count, got {count}")
    rng = random.Random(seed)
    points: list[dict[str, str]] = []
    for _ in range(count):
        point = {}
        for axis in axes:
            if not axis.is_range:
                point[axis.key] = rng.choice(axis.values)
            elif _is_int(axis.low) and _is_int(axis.high):
                point[axis.key] = str(rng.randint(int(axis.low), int(axis.high)))
            else:
                point[axis.key] = f"{rng.uniform(float(axis.low), float(axis.high)):.6g}"
        if point not in points:
            points.append(point)
    return points


def _key_type(key: str, command: str) -> type | None:
    if key.startswith("params.") and len(key) > len("params."):
        return None
    known = KEYS[command]
    if key not in known:
        raise SweepOptionError(f"--grid key {key!r} does not apply to {command}; keys: "
                               f"params.NAME, {', '.join(known)}")
    return known[key]


def _check_value(key: str, value: str, kind: type | None) -> None:
    if not value:
        raise SweepOptionError(f"--grid {key} has an empty value")
    if key == "mode" and value not in MODES:
        raise SweepOptionError(f"--grid mode: unknown mode {value!r}; choose "
                               f"{' or '.join(MODES)}")
    if kind is int and not _is_int(value):
        raise SweepOptionError(f"--grid {key} takes integers, got {value!r}")
    if kind is float:
        try:
            float(value)
        except ValueError:
            raise SweepOptionError(f"--grid {key} takes numbers, got {value!r}") from None


def _is_int(text: str | None) -> bool:
    return text is not None and text.lstrip("+-").isdigit()

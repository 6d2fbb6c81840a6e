"""``--grid KEY=V1,V2,...`` items: which keys a command takes, their values, and the points.

Keys: ``params.NAME`` (what ``--set params.NAME=V`` sets) and ``seed`` for every command;
``train.steps``, ``train.lr``, ``train.optimizer``, ``train.batch_size``, ``train.schedule``
(``--schedule``'s form, its settings apart by ``:``: ``step:every=2:factor=0.5``),
``train.warmup``, ``train.warmup_start``, ``train.weight_decay``, ``train.gradient_clipping``
and ``mode`` for train; ``mode`` for run and check; ``bench.batch`` and ``mode`` for bench.
A value list is comma-separated; ``LO:HI`` is a range of numbers, which only ``--random K``
samples (uniformly; integers when both ends are integers).

A sweep runs at most ``MAX_POINTS`` points: the size of a grid is the product of its axes'
value counts, known before anything is expanded, so a grid of 10^12 points is refused at once,
and ``--random K`` draws K distinct points in O(K) (a set of the points drawn so far).
"""

from __future__ import annotations

import itertools
import math
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from graphcore.errors import GraphcoreError
from graphcore.training import learning_rate

# Each point is a Dask task (about a millisecond of scheduler time and a few KB of its memory),
# a row of sweep.json and a line of the table; 10,000 is a morning of one-minute points on
# a 64-core cluster, and a few MB of sweep.json.
MAX_POINTS = 10_000

COMMANDS = ("train", "bench", "run", "check")

# key -> the type its values must parse as (None: any text); per command.
_COMMON: dict[str, type | None] = {"seed": int}
KEYS: dict[str, dict[str, type | None]] = {
    "train": {**_COMMON, "train.steps": int, "train.lr": float, "train.optimizer": str,
              "train.batch_size": int, "train.schedule": str, "train.warmup": int,
              "train.warmup_start": float, "train.weight_decay": float,
              "train.gradient_clipping": float, "mode": str},
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
        if ":" in text and "," not in text and key != "train.schedule":
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


def grid_size(axes: Sequence[GridAxis]) -> int | None:
    """How many distinct points the axes hold: the product of their value counts (an integer
    range LO:HI holds HI - LO + 1 values); None when a range of real numbers makes it
    unbounded. Computed from the axes alone, nothing expanded."""
    size = 1
    for axis in axes:
        count = _value_count(axis)
        if count is None:
            return None
        size *= count
    return size


def expand_grid(axes: Sequence[GridAxis]) -> list[dict[str, str]]:
    """Every combination of the axes' values, the first axis slowest; a grid of more than
    ``MAX_POINTS`` points is refused before any point is made."""
    for axis in axes:
        if axis.is_range:
            raise SweepOptionError(f"--grid {axis.key}={axis.low}:{axis.high} is a range; "
                                   "sample it with --random K, or list the values")
    size = math.prod(len(a.values) for a in axes)
    if size > MAX_POINTS:
        counts = " x ".join(f"{len(a.values)} ({a.key})" for a in axes)
        raise SweepOptionError(f"--grid makes {_count(size)} points ({counts}), over the limit "
                               f"of {MAX_POINTS:,} a sweep runs; list fewer values, or sample "
                               "the grid with --random K")
    return [dict(zip((a.key for a in axes), combo, strict=True))
            for combo in itertools.product(*(a.values for a in axes))]


def sample_grid(axes: Sequence[GridAxis], count: int, seed: int = 0) -> list[dict[str, str]]:
    """``count`` distinct points drawn with a generator keyed by ``seed``, in O(count): a
    listed value uniformly from its list, an integer range uniformly between its ends, a range
    of real numbers uniformly between its ends (written with 6 significant digits). When the
    axes hold ``count`` points or fewer, every one of them, in grid order (``grid_size`` tells
    the caller so). Without a range of real numbers the points are distinct places of the
    grid drawn without replacement; with one, a point drawn again is drawn anew, and a range
    so narrow that its 6-digit values repeat ends the drawing after ``10 * count`` draws with
    the distinct points found."""
    if count < 1:
        raise SweepOptionError(f"--random needs a positive count, got {count}")
    if count > MAX_POINTS:
        raise SweepOptionError(f"--random {count:,} is over the limit of {MAX_POINTS:,} points "
                               "a sweep runs")
    size = grid_size(axes)
    if size is not None and size <= count:
        return _every_point(axes)
    rng = random.Random(seed)
    keys = [a.key for a in axes]
    if size is not None:
        return [dict(zip(keys, _place(axes, i), strict=True))
                for i in _distinct_below(size, count, rng)]
    seen: set[tuple[str, ...]] = set()
    points: list[dict[str, str]] = []
    for _ in range(10 * count):
        values = tuple(_draw(axis, rng) for axis in axes)
        if values not in seen:
            seen.add(values)
            points.append(dict(zip(keys, values, strict=True)))
            if len(points) == count:
                break
    return points


def _distinct_below(size: int, count: int, rng: random.Random) -> list[int]:
    """``count`` distinct integers of ``range(size)`` (``count < size``), uniformly."""
    if size <= sys.maxsize:
        return rng.sample(range(size), count)
    drawn: dict[int, None] = {}  # a grid this large: a repeat is all but impossible
    while len(drawn) < count:
        drawn.setdefault(rng.randrange(size))
    return list(drawn)


def _place(axes: Sequence[GridAxis], index: int) -> tuple[str, ...]:
    """The point at ``index`` of the grid, the first axis slowest (``expand_grid``'s order)."""
    values: list[str] = []
    for axis in reversed(axes):
        index, offset = divmod(index, _value_count(axis) or 1)
        if not axis.is_range:
            values.append(axis.values[offset])
        elif _is_int(axis.low) and _is_int(axis.high):
            values.append(str(int(axis.low) + offset))
        else:
            values.append(f"{float(axis.low):.6g}")  # LO == HI: one value
    return tuple(reversed(values))


def _value_count(axis: GridAxis) -> int | None:
    if not axis.is_range:
        return len(axis.values)
    if _is_int(axis.low) and _is_int(axis.high):
        return int(axis.high) - int(axis.low) + 1
    return 1 if float(axis.low) == float(axis.high) else None


def _every_point(axes: Sequence[GridAxis]) -> list[dict[str, str]]:
    """Every point of axes holding at most ``MAX_POINTS`` (ranges as their values)."""
    listed = [GridAxis(a.key, _range_values(a)) if a.is_range else a for a in axes]
    return expand_grid(listed)


def _range_values(axis: GridAxis) -> tuple[str, ...]:
    if _is_int(axis.low) and _is_int(axis.high):
        return tuple(str(v) for v in range(int(axis.low), int(axis.high) + 1))
    return (f"{float(axis.low):.6g}",)  # LO == HI


def _draw(axis: GridAxis, rng: random.Random) -> str:
    if not axis.is_range:
        return rng.choice(axis.values)
    if _is_int(axis.low) and _is_int(axis.high):
        return str(rng.randint(int(axis.low), int(axis.high)))
    return f"{rng.uniform(float(axis.low), float(axis.high)):.6g}"


def _count(size: int) -> str:
    return f"{size:,}" if size < 10**15 else f"about 10^{len(str(size)) - 1}"


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
    if key == "train.schedule":
        try:
            learning_rate.parse_schedule(value)
        except ValueError as e:
            raise SweepOptionError(f"--grid {key}: {e}") from None
    if kind is int and not _is_int(value):
        raise SweepOptionError(f"--grid {key} takes integers, got {value!r}")
    if kind is float:
        try:
            float(value)
        except ValueError:
            raise SweepOptionError(f"--grid {key} takes numbers, got {value!r}") from None


def _is_int(text: str | None) -> bool:
    return text is not None and text.lstrip("+-").isdigit()

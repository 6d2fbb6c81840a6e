"""``PlotReport``: the observed ``y_keys`` against ``x_key`` (``epoch`` or ``iteration``),
averaged every ``trigger`` and drawn as a PNG with matplotlib's Agg backend (a figure object,
never pyplot's global state)."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from graphcore.reporter import DictSummary
from graphcore.serialization import Saver
from graphcore.training.extension import Extension
from graphcore.training.extensions.writer import Writer, write_atomic
from graphcore.training.triggers import get_trigger


def render_png(series: dict[str, list[tuple[float, float]]], x_label: str,
               marker: str | None = "x", grid: bool = True,
               size: tuple[float, float] = (6.4, 4.8), dpi: int = 100) -> bytes:
    """A line chart of ``{label: [(x, y), ...]}`` as PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, dpi=dpi)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    for label, points in series.items():
        if points:
            xs, ys = zip(*points, strict=True)
            axes.plot(xs, ys, marker=marker, label=label)
    axes.set_xlabel(x_label)
    if grid:
        axes.grid()
    if any(series.values()):
        axes.legend(loc="best")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def render_panels(panels: dict[str, dict[str, list[tuple[float, float]]]], x_label: str,
                  dpi: int = 100) -> bytes:
    """One chart per panel (``{title: {label: [(x, y), ...]}}``) side by side, as PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4.8 * max(len(panels), 1), 3.6), dpi=dpi)
    FigureCanvasAgg(figure)
    for index, (title, series) in enumerate(panels.items(), 1):
        axes = figure.add_subplot(1, max(len(panels), 1), index)
        for label, points in series.items():
            if points:
                xs, ys = zip(*points, strict=True)
                axes.plot(xs, ys, marker="o", markersize=3, label=label)
        axes.set_title(title)
        axes.set_xlabel(x_label)
        axes.grid(True, alpha=0.3)
        if any(series.values()):
            axes.legend(loc="best")
    figure.subplots_adjust(left=0.08, right=0.97, bottom=0.15, top=0.9, wspace=0.25)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def render_matrix(matrix: Any, names: Sequence[str], title: str, dpi: int = 100) -> bytes:
    """A confusion matrix (rows the true classes, columns the predicted ones, ``names`` for
    both) as a PNG: a heat map with each cell's count written in it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    count = len(matrix)
    side = min(max(3.2, 0.55 * count + 2.0), 16.0)
    figure = Figure(figsize=(side + 1.0, side), dpi=dpi)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    image = axes.imshow(matrix, cmap="Blues", interpolation="nearest",
                        vmin=0, vmax=max(1, max((max(row) for row in matrix), default=1)))
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
    ticks = list(range(count))
    slanted = count > 6 and max((len(n) for n in names), default=0) > 2  # long names
    axes.set_xticks(ticks, labels=list(names), rotation=45 if slanted else 0,
                    ha="right" if slanted else "center")
    axes.set_yticks(ticks, labels=list(names))
    axes.set_xlabel("predicted class")
    axes.set_ylabel("true class")
    axes.set_title(title, fontsize=9)
    if count <= 30:  # numbers in smaller cells cannot be read
        peak = max((max(row) for row in matrix), default=0)
        for i in range(count):
            for j in range(count):
                value = int(matrix[i][j])
                axes.text(j, i, str(value), ha="center", va="center", fontsize=8,
                          color="white" if peak and value > peak / 2 else "black")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


class PlotReport(Extension):
    def __init__(self, y_keys: str | Sequence[str], x_key: str = "iteration",
                 trigger: Any = (1, "epoch"),
                 postprocess: Callable[..., None] | None = None,
                 filename: str | None = None, marker: str | None = "x", grid: bool = True,
                 writer: Writer | None = None, **kwargs: Any) -> None:
        if "file_name" in kwargs:  # Chainer's older name of the argument
            filename = kwargs.pop("file_name")
        if kwargs:
            raise TypeError(f"PlotReport: unexpected arguments {sorted(kwargs)}")
        if x_key not in ("epoch", "iteration"):
            raise ValueError(f"PlotReport: x_key must be 'epoch' or 'iteration', got {x_key!r}")
        self._x_key = x_key
        self._y_keys = [y_keys] if isinstance(y_keys, str) else list(y_keys)
        self._trigger = get_trigger(trigger)
        self._file_name = filename or "plot.png"
        self._marker = marker
        self._grid = grid
        self._postprocess = postprocess
        self._writer = writer or write_atomic
        self._data: dict[str, list[tuple[float, float]]] = {k: [] for k in self._y_keys}
        self._summary = DictSummary()

    @staticmethod
    def available() -> bool:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return False
        return True

    def __call__(self, trainer: Any) -> None:
        keys = self._y_keys
        observation = trainer.observation
        self._summary.add({k: observation[k] for k in keys if k in observation})
        if not self._trigger(trainer):
            return
        stats = self._summary.compute_mean()
        x = getattr(trainer.updater, self._x_key)
        for key in keys:
            if key in stats:
                self._data[key].append((x, float(stats[key])))
        self._summary = DictSummary()
        png = render_png(self._data, self._x_key, self._marker, self._grid)
        self._writer(os.path.join(trainer.out, self._file_name), png)

    def serialize(self, serializer: Any) -> None:
        if hasattr(self._trigger, "serialize"):
            self._trigger.serialize(serializer["_trigger"])
        if isinstance(serializer, Saver):
            serializer("_plot_data", json.dumps(self._data))
        else:
            data = json.loads(serializer("_plot_data", ""))
            self._data = {k: [tuple(p) for p in data.get(k, [])] for k in self._y_keys}

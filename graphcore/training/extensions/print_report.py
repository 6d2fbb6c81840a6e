"""``PrintReport``: each new LogReport entry as a row of a fixed-width table on ``out``
(default ``sys.stdout``, looked up at each call: the only place graphcore writes to a stream,
because a training script asks for it)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO, Any

from graphcore.training.extension import Extension


class PrintReport(Extension):
    def __init__(self, entries: Sequence[str], log_report: Any = "LogReport",
                 out: IO[str] | None = None) -> None:
        self._entries = list(entries)
        self._log_report = log_report
        self._out = out
        self._log_len = 0
        widths = [max(10, len(entry)) for entry in self._entries]
        self._header = "  ".join(e.ljust(w) for e, w in zip(self._entries, widths,
                                                             strict=True)) + "\n"
        self._widths = widths

    def _stream(self) -> IO[str]:
        return sys.stdout if self._out is None else self._out

    def __call__(self, trainer: Any) -> None:
        out = self._stream()
        if self._header:
            out.write(self._header)
            self._header = ""
        log_report = self._log_report
        if isinstance(log_report, str):
            log_report = trainer.get_extension(log_report)
        log = log_report.log
        while len(log) > self._log_len:
            self._print(out, log[self._log_len])
            self._log_len += 1
        if hasattr(out, "flush"):
            out.flush()

    def _print(self, out: IO[str], observation: dict[str, Any]) -> None:
        cells = []
        for entry, width in zip(self._entries, self._widths, strict=True):
            value = observation.get(entry)
            cells.append(("" if value is None else f"{value:<{width}g}"
                          if isinstance(value, float) else str(value)).ljust(width))
        out.write("  ".join(cells) + "\n")

    def serialize(self, serializer: Any) -> None:
        self._log_len = serializer("_log_len", self._log_len)

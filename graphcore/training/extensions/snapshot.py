"""``snapshot``: save the whole trainer (``serializers.save_npz(trainer)``) to
``out/filename`` every epoch; ``snapshot_object`` saves one object (a model). The file is
written whole or not at all, so a crash during a write leaves the previous snapshot readable.
``n_retains`` keeps the newest N files; ``autoload`` resumes from the newest one at start."""

from __future__ import annotations

import glob
import io
import os
from typing import Any

from graphcore import serializers
from graphcore.training.extension import PRIORITY_SNAPSHOT, Extension
from graphcore.training.extensions.writer import Writer, write_atomic


def _format(filename: str, trainer: Any) -> str:
    return filename.format(trainer)


class _Snapshot(Extension):
    trigger = 1, "epoch"
    priority = PRIORITY_SNAPSHOT

    def __init__(self, target: Any = None, condition: Any = None, writer: Writer | None = None,
                 filename: str = "snapshot_iter_{.updater.iteration}",
                 snapshot_on_error: bool = False, n_retains: int = -1,
                 autoload: bool = False) -> None:
        self._target = target
        self.filename = filename
        self.condition = condition or (lambda: True)
        self.writer = writer or write_atomic
        self._snapshot_on_error = snapshot_on_error
        self.n_retains = n_retains
        self.autoload = autoload

    def initialize(self, trainer: Any) -> str | None:
        if not self.autoload:
            return None
        target = trainer if self._target is None else self._target
        newest = self._find_newest(trainer.out)
        if newest is not None:
            serializers.load_npz(newest, target)
        return newest

    def _pattern(self) -> str:
        return self.filename.replace("{.updater.iteration}", "*").replace(
            "{.updater.epoch}", "*")

    def _find_newest(self, out: str) -> str | None:
        found = [p for p in glob.glob(os.path.join(out, self._pattern())) if os.path.isfile(p)]
        return max(found, key=os.path.getmtime) if found else None

    def on_error(self, trainer: Any, exc: BaseException, tb: Any) -> None:
        if self._snapshot_on_error:
            self._make_snapshot(trainer)

    def __call__(self, trainer: Any) -> None:
        if self.condition():
            self._make_snapshot(trainer)

    def _make_snapshot(self, trainer: Any) -> None:
        target = trainer if self._target is None else self._target
        buffer = io.BytesIO()
        serializers.save_npz(buffer, target)
        path = os.path.join(trainer.out, _format(self.filename, trainer))
        self.writer(path, buffer.getvalue())
        if self.n_retains > 0:
            found = sorted((p for p in glob.glob(os.path.join(trainer.out, self._pattern()))
                            if os.path.isfile(p)), key=os.path.getmtime)
            for old in found[:-self.n_retains]:
                os.remove(old)


def snapshot(savefun: Any = None, filename: str = "snapshot_iter_{.updater.iteration}",
             *, target: Any = None, condition: Any = None, writer: Writer | None = None,
             snapshot_on_error: bool = False, n_retains: int = -1,
             autoload: bool = False) -> _Snapshot:
    if savefun is not None and savefun is not serializers.save_npz:
        raise NotImplementedError("snapshot: only serializers.save_npz is supported as savefun")
    return _Snapshot(target, condition, writer, filename, snapshot_on_error, n_retains,
                     autoload)


def snapshot_object(target: Any, filename: str, savefun: Any = None, **kwargs: Any
                    ) -> _Snapshot:
    return snapshot(savefun, filename, target=target, **kwargs)

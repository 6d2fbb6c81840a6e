"""What train (with data), evaluate and predict share: ``--data``, parameters from a file
(a ``--save``/``best.npz`` file or a training checkpoint), and Ctrl-C during training."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cli import specs
from cli.errors import USAGE, CliError, Terminated
from graphcore.interpreter.params_file import load_params as load_checked
from graphcore.language.validate_workflow import use_data_file
from graphcore.spec import Spec


def load_spec(spec: str, sets: Sequence[str], inputs: Sequence[str], plugins: Sequence[Any],
              data: Path | None) -> tuple[Spec, dict[str, str]]:
    loaded, overrides = specs.load_with_inputs(spec, sets, inputs, plugins)
    if data is not None:
        if loaded.data is None:
            raise CliError(f"--data: spec '{loaded.name}' has no `data:` section naming the "
                           "inputs a data file feeds", USAGE)
        if not data.exists():
            raise FileNotFoundError(2, "data file not found", str(data))
        use_data_file(loaded, str(data))
    return loaded, overrides


def load_params(path: Path, model: Any) -> None:
    """Parameters saved by ``train --save`` / ``best.npz``, or those of a checkpoint, checked
    against the spec's model as ``run --params`` checks them (every key, every declared
    shape: a file must never silently change the model); a path that is not a readable
    file is exit 66 at once."""
    specs.require_readable(path, "--params ")
    load_checked(path, model)


@contextlib.contextmanager
def stop_on_signals(session: Any) -> Iterator[None]:
    """The first Ctrl-C asks the session to stop after the current step (it then writes a
    checkpoint); a second one, or SIGTERM, interrupts at once, but never inside a file the
    session is writing (``session.interrupt``): the files it leaves are whole."""
    def on_sigint(signum: int, frame: Any) -> None:
        if session.stop.requested:
            session.interrupt(KeyboardInterrupt())
        session.request_stop()

    def on_sigterm(signum: int, frame: Any) -> None:
        session.interrupt(Terminated())

    try:
        previous = signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # not the main thread (an embedding application): no handler
        yield
        return
    previous_term = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.signal(signal.SIGTERM, previous_term)

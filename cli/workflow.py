"""What train (with data), evaluate, predict and report share: ``--data``, parameters from a
file (a ``--save``/``best.npz`` file or a training checkpoint), a spec's run folders
(``OUT_DIR/NAME/runs/N/``: a new one per ``train``, the latest or ``--run N`` read back), and
Ctrl-C during training."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cli import files, specs
from cli.errors import DATA_ERROR, NO_INPUT, USAGE, CliError, Terminated
from graphcore.commands.train import run_folders
from graphcore.commands.train.checkpoint import recorded_command
from graphcore.commands.train.run_folders import Run
from graphcore.commands.train.settings import BEST, CHECKPOINT
from graphcore.errors import SerializationError
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


def new_run(out_dir: str | os.PathLike[str], name: str) -> Run:
    """A new run folder of spec ``name``, marked the latest (73/74 when it cannot be made)."""
    artifacts = files.artifact_dir(out_dir, name)
    try:
        return run_folders.new_run(artifacts)
    except OSError as e:
        raise files.output_error(e.filename or run_folders.runs_folder(artifacts), e) from None


@contextlib.contextmanager
def kept_if_used(run: Run | None) -> Iterator[None]:
    """A new run whose command fails before it writes a file (an option that does not fit
    the data) is removed again, so the latest run is never an empty one."""
    try:
        yield
    except BaseException:
        if run is not None:
            with contextlib.suppress(OSError):
                run_folders.discard_unused(run)
        raise


def find_run(out_dir: str | os.PathLike[str], name: str, number: int | None,
             spec_arg: str) -> Run:
    """Run ``number`` (None: the latest) of spec ``name``; none yet is exit 66, naming the
    command that makes one."""
    try:
        return run_folders.find_run(Path(out_dir) / name, number)
    except run_folders.NoRunError as e:
        out = "" if os.fspath(out_dir) == "outputs" else f" --out-dir {shlex.quote(str(out_dir))}"
        raise CliError(f"{e}: spec '{name}' has not been trained", NO_INPUT,
                       hint=f"`graphtool train {shlex.quote(spec_arg)}{out}` makes a run") \
            from None
    except run_folders.RunNotFound as e:
        raise CliError(str(e), NO_INPUT) from None
    except run_folders.LatestDamaged as e:
        raise CliError(str(e), DATA_ERROR) from None


def run_params(out_dir: str | os.PathLike[str], name: str, number: int | None,
               spec_arg: str) -> tuple[Path, Run]:
    """The parameters a run ends with, its ``best.npz`` (no such file: exit 66, naming the
    checkpoint where there is one; a checkpoint is a state mid-run, never taken unasked)."""
    run = find_run(out_dir, name, number, spec_arg)
    best = run.folder / BEST
    if os.path.lexists(best):
        return best, run
    checkpoint = run.folder / CHECKPOINT
    hint = (f"give --params {checkpoint} for the parameters of its checkpoint"
            if checkpoint.exists() else "train with data (`data:`) for a best.npz, or give "
            "--params FILE (e.g. one `train --save FILE` wrote)")
    raise CliError(f"run {run.number} of '{name}' has no {BEST} ({run.folder}): it has not "
                   "finished an epoch", NO_INPUT, hint=hint)


def run_seed(run: Run) -> int | None:
    """The seed run ``run`` trained with, as its checkpoint records it (None: not recorded, or
    no readable checkpoint), so its validation rows are the ones it was evaluated on."""
    try:
        seed = recorded_command(run.folder / CHECKPOINT).get("options", {}).get("seed")
    except (OSError, SerializationError, AttributeError):
        return None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0 else None


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

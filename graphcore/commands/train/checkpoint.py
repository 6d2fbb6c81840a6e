"""``checkpoint.npz``: what a training session saves every ``checkpoint_every`` epochs and
on Ctrl-C, and what ``--resume`` reads back, as an untrusted file.

It holds whose run it is (the spec's and data's ``RunIdentity``, the settings' fingerprint,
the options of the command that made it), the trainer (parameters, optimizer state, iterator
position and order, random state, triggers), how far ``train.csv`` belongs to it (its length
and SHA-256; the log itself is that file's, read back from beside the checkpoint) and a
measured batching. Reading it is refused, as a ``SerializationError`` naming the file and the
key, when it is another spec's or data's, was made with other settings, or is damaged: a
folder or a FIFO is never opened; every member's header and size in the zip directory are
checked before its data is decompressed (each parameter the shape the spec declares, each
optimizer state its parameter's, each other value the shape and kind the reader expects);
values that cannot be a state (an order that is no permutation, a negative step) are refused;
keys the run does not read are refused. Nothing is unpickled.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graphcore import errors, serializers
from graphcore.commands.train.run_identity import RunIdentity
from graphcore.commands.train.settings import CSV_LOG
from graphcore.interpreter.params_file import declared_shapes
from graphcore.serialization import Loader, Saver, load_json, member_header

if TYPE_CHECKING:
    from graphcore.commands.train.session import TrainingSession
    from graphcore.interpreter.parameters import SpecModel

def contents(session: TrainingSession) -> bytes:
    """The checkpoint of ``session`` as it stands, as the bytes of an ``.npz`` file."""
    buffer = io.BytesIO()
    serializers.save_npz(buffer, _CheckpointState(session))
    return buffer.getvalue()


def load(session: TrainingSession, path: str | os.PathLike[str]) -> None:
    """Restore ``session`` from the checkpoint at ``path`` (see the module docstring)."""
    name = os.fspath(path)
    with _opened(path, session.spec.max_elements) as npz:
        try:
            _CheckpointState(session, name).serialize(Loader(npz))
        except errors.SerializationError as e:
            raise errors.SerializationError(f"{name}: {e}") from None


def recorded_command(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The options of the command that made the checkpoint at ``path``, as the caller gave
    them to ``TrainingSession(command=...)`` (``{}``: none stored); nothing else is read."""
    with _opened(path) as npz:
        try:
            return _stored_command(Loader(npz))
        except errors.SerializationError as e:
            raise errors.SerializationError(f"{os.fspath(path)}: {e}") from None


@contextlib.contextmanager
def _opened(path: str | os.PathLike[str], max_elements: int | None = None) -> Iterator[Any]:
    """The checkpoint at ``path`` as an open, bounded ``NpzArchive`` (its zip directory read,
    no member yet): a folder, a FIFO or an unreadable path is refused at once
    (``UnreadableFileError``), a file that is not an .npz archive is a
    ``SerializationError``."""
    with contextlib.ExitStack() as stack:
        try:
            npz = stack.enter_context(serializers.open_npz(path, max_elements))
        except errors.SerializationError:
            raise errors.SerializationError(f"{os.fspath(path)}: not a checkpoint (an .npz "
                                            "archive of arrays)") from None
        yield npz


class _CheckpointState:
    """What ``checkpoint.npz`` holds: whose run it is (the spec's and data's identity, the
    settings, the options of the command that made it), the trainer (parameters, optimizer
    state, iterator position and order, random state, triggers), how far ``train.csv``
    belongs to it, and a measured batching."""

    def __init__(self, session: TrainingSession, path: str = "") -> None:
        self.session = session
        self.path = path

    def serialize(self, serializer: Any) -> None:
        s = self.session
        if isinstance(serializer, Saver):
            serializer("graphtool/spec", s.spec.name)
            serializer("graphtool/identity", s.identity.to_json())
            serializer("graphtool/settings", s.settings.fingerprint())
            if s.command is not None:
                serializer("graphtool/command", json.dumps(s.command, sort_keys=True))
            serializer("graphtool/log", json.dumps(s.log_file.state()))
            s.trainer.serialize(serializer["trainer"])
            s.serialize_batching(serializer)
            return
        serializer("graphtool/spec", "")
        if "graphtool/identity" not in serializer.npz.files:
            raise errors.SerializationError(
                "graphtool/identity: the file has no such key, so it does not say whose run "
                "it is (a checkpoint of an earlier graphtool, or not a checkpoint of train); "
                "train without --resume")
        command = _stored_command(serializer)
        saved = RunIdentity.from_json(serializer("graphtool/identity", ""), "graphtool/identity")
        made_by = "" if not command.get("command_line") else \
            f"; it was made by: {command['command_line']}"
        differences = s.identity.spec_differences(saved)
        if differences:
            raise errors.SerializationError(
                f"a checkpoint of another spec, '{saved.spec}' ({saved.file}): "
                f"{'; '.join(differences)}{made_by}; resume with that spec, or train this "
                "one without --resume")
        settings = serializer("graphtool/settings", "")
        if settings != s.settings.fingerprint():
            raise errors.SerializationError(
                "the checkpoint was made with other training settings "
                f"({_settings_diff(settings, s.settings.fingerprint())}){made_by}; resume "
                "with the same spec and options")
        differences = s.identity.data_differences(saved)
        if differences:
            raise errors.SerializationError(
                f"a checkpoint of spec '{saved.spec}' over other data ({'; '.join(differences)})"
                f"{made_by}; resume with the data it was trained on, or train without "
                "--resume")
        log = load_json(serializer, "graphtool/log", _is_log_state,
                        "the length and SHA-256 of train.csv")
        _check_arrays(serializer.npz, s.model)
        s.trainer.serialize(serializer["trainer"])
        s.serialize_batching(serializer)
        unread = serializer.unread()
        if unread:
            raise errors.SerializationError(
                f"the checkpoint holds {len(unread)} key(s) this run does not have: "
                f"{', '.join(unread[:8])}{' ...' if len(unread) > 8 else ''}")
        s.restore_log(log, Path(self.path).parent / CSV_LOG)


def _is_log_state(value: Any) -> bool:
    return (isinstance(value, dict) and set(value) == {"bytes", "sha256"}
            and isinstance(value["bytes"], int) and not isinstance(value["bytes"], bool)
            and value["bytes"] >= 0 and isinstance(value["sha256"], str))


def _stored_command(serializer: Loader) -> dict[str, Any]:
    """The options of the command that made the checkpoint (``{}``: none stored)."""
    if "graphtool/command" not in serializer.npz.files:
        return {}
    return load_json(serializer, "graphtool/command", lambda v: isinstance(v, dict),
                     "an object of the command's options")


def _check_arrays(npz: Any, model: SpecModel) -> None:
    """The checkpoint's parameters and optimizer state against the spec's model, from their
    headers before any is decompressed: each parameter the shape the spec declares, each
    optimizer state the shape of its parameter in the file, every size within the spec's
    element limit."""
    headers = {key: member_header(npz, key) for key in npz.files
               if key.startswith((_MODEL, _OPTIMIZER))}
    declared = declared_shapes(model)
    limit = model.spec.max_elements
    problems = []
    stored = {}
    for key, (shape, dtype) in headers.items():
        if not key.startswith(_MODEL):
            continue
        name = key[len(_MODEL):]
        want, want_dtype = declared.get(name, (None, None))
        size = int(np.prod(shape, dtype=np.float64))
        if name not in declared:
            problems.append(f"{key}: the spec's model has no parameter {name}")
        elif size > limit:
            problems.append(f"{key}: {size:,} elements, over the limit of {limit:,}")
        elif want is not None and (len(shape) != len(want) or any(
                w is not None and w != n for w, n in zip(want, shape, strict=True))):
            problems.append(f"{key}: shape {shape}, but the spec declares "
                            f"{tuple('any' if w is None else w for w in want)}")
        elif want_dtype is not None and dtype != want_dtype:
            problems.append(f"{key}: dtype {dtype}, but the model holds {want_dtype}")
        else:
            stored[name] = (shape, dtype)
    for key, (shape, dtype) in headers.items():
        if not key.startswith(_OPTIMIZER) or problems:
            continue
        name = key[len(_OPTIMIZER):]
        owner, _, state = name.rpartition("/")
        if name in ("t", "epoch") or state == "t":
            if shape != () or dtype.kind not in "iu":
                problems.append(f"{key}: expected an integer scalar, the file holds shape "
                                f"{shape}, dtype {dtype}")
        elif owner not in stored:
            problems.append(f"{key}: state of {owner or name}, which the checkpoint's model "
                            "does not hold")
        elif (shape, dtype) != stored[owner]:
            problems.append(f"{key}: shape {shape}, dtype {dtype}, but its parameter has "
                            f"shape {stored[owner][0]}, dtype {stored[owner][1]}")
    if problems:
        raise errors.SerializationError("; ".join(problems[:8]) + (
            f" and {len(problems) - 8} more" if len(problems) > 8 else ""))


_MODEL = "trainer/updater/model:main/"
_OPTIMIZER = "trainer/updater/optimizer:main/"


def _settings_diff(saved: str, current: str) -> str:
    try:
        a, b = json.loads(saved), json.loads(current)
    except ValueError:
        return "unreadable settings"
    return ", ".join(f"{k}: {a.get(k)!r} then, {b.get(k)!r} now"
                     for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))

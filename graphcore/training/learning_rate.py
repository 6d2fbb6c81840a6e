"""Learning-rate schedules by name (a spec's ``train: {schedule:, warmup:}``, ``train
--schedule``/``--warmup``): what each kind takes (``KINDS``), the checks of its values
(``check_schedule``), the compact command-line form (``parse_schedule``: ``cosine``,
``step:every=10,factor=0.5``), and ``LearningRateSchedule``, the one trainer extension that
runs a warm-up and then the schedule on the ``schedule_shifts``/``shifts``/
``reduce_on_plateau`` extensions.

Each kind sets the learning rate of epoch ``e`` (``per: iteration``: of step ``e``) from the
optimizer's ``lr``, counting ``k = e - warmup`` from the schedule's first epoch (``k = 1``):

- ``constant``: ``lr``;
- ``step``: ``lr * factor ** floor((k - 1) / every)`` (``StepShift``);
- ``exponential``: ``lr * factor ** (k - 1)``, not below ``min_lr`` (``ExponentialShift``);
- ``cosine``: ``min_lr + (lr - min_lr) * (1 + cos(pi * min(k - 1, over) / over)) / 2``,
  ``over`` by default the run's length less the warm-up (``CosineShift``);
- ``plateau``: ``lr``, times ``factor`` (not below ``min_lr``) each time ``metric`` has not
  improved for ``patience`` epochs (``ReduceLROnPlateau``; epochs only).

A warm-up of ``W`` epochs comes first: epoch ``e <= W`` runs at ``start + (lr - start) *
(e - 1) / W`` (``WarmupShift``), ``start`` by default ``lr / (W + 1)``, so the warm-up's
epochs run at ``lr * e / (W + 1)`` and epoch ``W + 1`` at ``lr``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphcore.training.extension import Extension
from graphcore.training.extensions.reduce_on_plateau import ReduceLROnPlateau
from graphcore.training.extensions.schedule_shifts import CosineShift, StepShift, WarmupShift
from graphcore.training.extensions.shifts import ExponentialShift

PER = ("epoch", "iteration")
MODES = ("auto", "min", "max")


@dataclass(frozen=True)
class Setting:
    """One value a schedule kind takes: ``kind`` of number or word, its default (``REQUIRED``:
    none), and what it means (for messages and docs)."""

    kind: str  # count (>= 1), natural (>= 0), positive, non_negative, fraction (0, 1), word
    default: Any
    meaning: str


REQUIRED = object()
_PER = Setting("word", "epoch", "epoch or iteration: what the schedule counts")
KINDS: Mapping[str, Mapping[str, Setting]] = {
    "constant": {},
    "step": {"every": Setting("count", REQUIRED, "epochs between two changes"),
             "factor": Setting("positive", 0.1, "what each change multiplies lr by")},
    "exponential": {"factor": Setting("positive", REQUIRED, "what each epoch multiplies lr by"),
                    "min_lr": Setting("non_negative", 0.0, "the lowest lr")},
    "cosine": {"min_lr": Setting("non_negative", 0.0, "the lr at the end"),
               "over": Setting("count", None, "epochs to fall to min_lr (default: the "
                               "run's, less the warm-up)")},
    "plateau": {"metric": Setting("word", None, "the reported value watched (default: "
                                  "validation_loss, or loss without validation)"),
                "factor": Setting("fraction", 0.1, "what a reduction multiplies lr by"),
                "patience": Setting("count", 10, "epochs without improvement before a "
                                    "reduction"),
                "min_lr": Setting("non_negative", 0.0, "the lowest lr"),
                "min_delta": Setting("non_negative", 0.0, "the least change that counts as "
                                     "an improvement"),
                "cooldown": Setting("natural", 0, "epochs after a reduction in which none "
                                    "is counted"),
                "mode": Setting("word", "auto", "min, max, or auto (max for accuracy, f1, "
                                "precision, recall, auc, r2)")},
}
_WORDS = {"per": PER, "mode": MODES}


def settings_of(kind: str) -> dict[str, Setting]:
    """What schedule ``kind`` takes, ``per`` included."""
    return {**KINDS[kind], "per": _PER}


def check_schedule(given: Mapping[str, Any]) -> tuple[dict[str, Any] | None,
                                                      list[tuple[str | None, str]]]:
    """``given`` (``{kind: step, every: 2}``) as a whole schedule, defaults filled in, and the
    problems found, each ``(key, message)`` (key None: the schedule as a whole); the schedule
    is None when there is any."""
    problems: list[tuple[str | None, str]] = []
    kind = given.get("kind")
    if kind is None:
        return None, [(None, f"a schedule needs a kind: one of {', '.join(KINDS)}")]
    if kind not in KINDS:
        return None, [("kind", f"unknown schedule kind {kind!r}; choose one of "
                               f"{', '.join(KINDS)}")]
    allowed = settings_of(kind)
    schedule: dict[str, Any] = {"kind": kind}
    for key, value in given.items():
        if key == "kind":
            continue
        if key not in allowed:
            takes = ", ".join(allowed)
            problems.append((key, f"schedule {kind} has no setting '{key}' (it takes {takes})"))
            continue
        problem = _value_problem(key, allowed[key].kind, value)
        if problem is not None:
            problems.append((key, f"schedule {kind}: {problem}"))
    for key, setting in allowed.items():
        if key in given:
            if not any(key == bad for bad, _ in problems):
                schedule[key] = _typed(setting.kind, given[key])
        elif setting.default is REQUIRED:
            problems.append((None, f"schedule {kind} needs '{key}' ({setting.meaning})"))
        else:
            schedule[key] = setting.default
    if kind == "plateau" and schedule.get("per") == "iteration":
        problems.append(("per", "schedule plateau checks its metric once an epoch; it takes "
                                "no per: iteration"))
    return (None if problems else schedule), problems


def _value_problem(key: str, kind: str, value: Any) -> str | None:
    number = isinstance(value, int | float) and not isinstance(value, bool) and \
        math.isfinite(value)
    if kind == "word":
        if not isinstance(value, str) or not value:
            return f"{key} must be a name, got {value!r}"
        if key in _WORDS and value not in _WORDS[key]:
            return f"{key} must be one of {', '.join(_WORDS[key])}, got {value!r}"
        return None
    if kind in ("count", "natural"):
        low = 1 if kind == "count" else 0
        if not number or not float(value).is_integer() or value < low:
            return f"{key} must be an integer >= {low}, got {value!r}"
        return None
    if not number:
        return f"{key} must be a number, got {value!r}"
    if kind == "positive" and not value > 0:
        return f"{key} must be > 0, got {value!r}"
    if kind == "non_negative" and not value >= 0:
        return f"{key} must be >= 0, got {value!r}"
    if kind == "fraction" and not 0 < value < 1:
        return f"{key} must be in (0, 1), got {value!r}"
    return None


def _typed(kind: str, value: Any) -> Any:
    """A checked value as its kind reads it (``every: 2`` and ``every=2.0`` are one value)."""
    if kind == "word" or value is None:
        return value
    return int(value) if kind in ("count", "natural") else float(value)


def parse_schedule(text: str) -> dict[str, Any]:
    """The command line's form ``KIND[:KEY=VALUE,...]`` (``,`` or ``:`` between the
    settings, so a sweep's comma-separated values can hold one: ``step:every=2:factor=0.5``)
    as a schedule; ``ValueError`` saying every problem."""
    kind, _, rest = text.strip().partition(":")
    given: dict[str, Any] = {"kind": kind.strip()}
    problems = []
    for item in filter(None, (part.strip() for part in re.split(r"[,:]", rest))):
        key, sep, value = (p.strip() for p in item.partition("="))
        if not sep or not key or not value:
            problems.append(f"expected KEY=VALUE, got {item!r}")
        elif key in given:
            problems.append(f"{key} is given twice")
        else:
            given[key] = _parsed(value)
    schedule, found = check_schedule(given)
    problems += [message for _, message in found]
    if problems:
        raise ValueError(f"--schedule {text!r}: {'; '.join(problems)} (the form is "
                         "KIND[:KEY=VALUE,...], e.g. cosine or step:every=10,factor=0.5)")
    return schedule


def _parsed(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def describe(schedule: Mapping[str, Any]) -> str:
    """The command line's form of ``schedule`` (settings at their defaults left out)."""
    kind = schedule["kind"]
    defaults = settings_of(kind)
    parts = [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
             for k, v in schedule.items()
             if k != "kind" and v is not None and v != defaults[k].default]
    return kind + (":" + ",".join(parts) if parts else "")


class LearningRateSchedule(Extension):
    """A warm-up of ``warmup`` epochs (or iterations, as ``schedule['per']`` says) from
    ``warmup_start`` to ``lr``, then ``schedule`` (see the module docstring), on the
    optimizer's hyperparameter ``attr``. Called every iteration: the shifts move at the end
    of each epoch (or after each iteration), plateau sees every iteration's observation.
    ``length``: the run's length in the schedule's unit (cosine's default ``over``);
    ``monitor``: plateau's observed key (``validation/main/loss``), ``mode`` min or max."""

    trigger = 1, "iteration"

    def __init__(self, attr: str, lr: float, schedule: Mapping[str, Any] | None,
                 warmup: int = 0, warmup_start: float | None = None, length: int = 0,
                 monitor: str | None = None, mode: str = "min") -> None:
        schedule = dict(schedule or {"kind": "constant", "per": "epoch"})
        self.per = schedule.get("per", "epoch")
        self.warmup = None
        if warmup:
            start = lr / (warmup + 1) if warmup_start is None else warmup_start
            self.warmup = WarmupShift(attr, start, warmup, lr)
        self.shift = _shift(attr, lr, schedule, length - (warmup or 0), monitor, mode)

    def initialize(self, trainer: Any) -> None:
        if self.shift is not None:
            self.shift.initialize(trainer)
        if self.warmup is not None and not self.warmup.finished:
            self.warmup.initialize(trainer)

    def __call__(self, trainer: Any) -> None:
        boundary = self.per == "iteration" or trainer.updater.is_new_epoch
        if self.warmup is not None and not self.warmup.finished:
            if isinstance(self.shift, ReduceLROnPlateau):
                self.shift.skip(trainer)
            if boundary:
                self.warmup(trainer)
        elif isinstance(self.shift, ReduceLROnPlateau):
            self.shift(trainer)
        elif self.shift is not None and boundary:
            self.shift(trainer)

    def serialize(self, serializer: Any) -> None:
        if self.warmup is not None:
            self.warmup.serialize(serializer["warmup"])
        if self.shift is not None:
            self.shift.serialize(serializer["schedule"])


def _shift(attr: str, lr: float, schedule: Mapping[str, Any], length: int,
           monitor: str | None, mode: str) -> Extension | None:
    kind = schedule["kind"]
    if kind == "step":
        return StepShift(attr, schedule["factor"], int(schedule["every"]), init=lr)
    if kind == "exponential":
        floor = schedule["min_lr"] or None
        return ExponentialShift(attr, schedule["factor"], init=lr, target=floor)
    if kind == "cosine":
        over = schedule["over"] if schedule["over"] is not None else length
        if over < 1:
            raise ValueError("schedule cosine: the warm-up takes the whole run, so the cosine "
                             "has no epochs left; shorten the warm-up or give over")
        return CosineShift(attr, int(over), schedule["min_lr"], init=lr)
    if kind == "plateau":
        return ReduceLROnPlateau(attr, monitor or "validation/main/loss", schedule["factor"],
                                 int(schedule["patience"]), mode, schedule["min_delta"],
                                 int(schedule["cooldown"]), schedule["min_lr"])
    return None

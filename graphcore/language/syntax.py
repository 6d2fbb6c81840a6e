"""The validated form of a spec: plain dataclasses the interpreter and static mode walk.

Every step keeps the ``Loc`` of its YAML mapping so runtime errors and the recorded path can
point back into the file. Nothing here touches YAML or arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from graphcore.language.predicate import Predicate
from graphcore.language.yaml_source import Loc, SourceText

PREVIOUS = "_"  # the name of "the value the previous step produced"
DEFAULT_MAX_ELEMENTS = 50_000_000  # per tensor; refused before anything is allocated


@dataclass
class InputSpec:
    """Where one input's data comes from.

    ``source`` is ``random`` (``distribution`` normal | uniform | randint, with ``low``/``high``
    or ``mean``/``std``), ``zeros``, ``ones``, ``file`` (``path``: .npy | .npz with ``key`` |
    .csv with ``delimiter``/``skip_header``) or ``stdin`` (``format`` npy | csv).
    ``lengths`` makes it a list of variable-length examples (``shape[0]`` is ``None``).
    """

    name: str
    source: str
    loc: Loc
    shape: tuple[int | None, ...] | None = None
    dtype: str = "float32"
    distribution: str | None = None
    low: float | None = None
    high: float | None = None
    mean: float = 0.0
    std: float = 1.0
    path: str | None = None
    key: str | None = None
    delimiter: str = ","
    skip_header: int = 0
    format: str | None = None
    lengths: tuple[int, ...] | None = None
    # ``shape: [batch, 2]``: the leading axis is named and binds at run time (shape[0] is
    # None); inputs naming the same dimension must bind it to the same size.
    batch_dim: str | None = None
    dtype_given: bool = False  # ``dtype:`` written in the spec
    keep_file_dtype: bool = False  # .npy/.npz integer and bool data keep their dtype
    column: DataColumn | None = None  # source ``data``: which part of the data file
    shape_loc: Loc | None = None  # where ``shape:`` is written (data checked against it)
    # ``whole_batch: true``: in a run once per example, every example sees the whole array
    # (by default an input with a named leading axis gives each example its own row)
    whole_batch: bool = False

    @property
    def sequence(self) -> bool:
        """A list of variable-length examples: ``lengths``, or a data file's sequences."""
        return self.lengths is not None or (self.column is not None and self.column.sequence)


@dataclass
class DataColumn:
    """Where one input lives in a data file: CSV ``columns``/``column`` (by header name),
    an ``.npz``/``.npy`` array (``key``), a sequence (``values`` + ``offsets`` arrays of an
    ``.npz``) or a JSON Lines ``field``."""

    input: str
    loc: Loc
    columns: tuple[str, ...] | None = None
    column: str | None = None
    key: str | None = None
    values: str | None = None
    offsets: str | None = None
    field: str | None = None
    file: str = ""  # the data file (relative to the spec's folder unless absolute)
    file_loc: Loc | None = None
    # ``encode: category``: values (text or numbers) become class indices 0..K-1 by a
    # vocabulary fitted on the training rows (``encode_loc``: where it is written)
    encode: str | None = None
    encode_loc: Loc | None = None
    # ``normalize: standard | minmax``: statistics fitted on the training rows, applied where
    # the interpreter reads the input (``normalize_loc``: where it is written)
    normalize: str | None = None
    normalize_loc: Loc | None = None
    # the labels of a classification loss (``language.labels.label_input``): text values are
    # encoded as ``encode: category`` encodes them; numbers are class indices as they are
    labels: bool = False

    @property
    def sequence(self) -> bool:
        return self.values is not None or self.field is not None

    @property
    def takes_text(self) -> bool:
        """Values may be text (class names): encoded, or a classification loss's labels."""
        return self.encode is not None or self.labels


@dataclass
class DataSpec:
    """``data:``: the file the data-fed inputs come from (``--data`` replaces it)."""

    file: str
    loc: Loc
    columns: dict[str, DataColumn]
    file_loc: Loc | None = None


@dataclass
class ValidationSpec:
    """``validation:`` or ``test:``: a fraction of the data (a seeded split) or a file like
    ``data``'s."""

    loc: Loc
    fraction: float | None = None
    file: str | None = None
    seed: int | None = None
    file_loc: Loc | None = None  # where ``file:`` is written


@dataclass
class TrainSpec:
    """``train:``: the training loop's settings (CLI options override them)."""

    loc: Loc
    epochs: int | None = None
    steps: int | None = None
    batch_size: int | None = None
    shuffle: bool = True
    optimizer: str = "adam"
    hyperparameters: dict[str, float] = field(default_factory=dict)  # Adam's lr as alpha
    lr: float | None = None  # ``train.lr``: applied as ``--lr`` is, to whichever optimizer runs
    metrics: tuple[str, ...] = ()
    early_stopping: dict[str, Any] | None = None  # {metric, patience, mode}
    checkpoint_every: int = 1  # epochs
    log_every: int | None = None  # steps; None: epochs only
    # {kind, per, ...} with every setting (graphcore.training.learning_rate.check_schedule)
    schedule: dict[str, Any] | None = None
    warmup: int | None = None  # epochs (iterations with the schedule's per: iteration)
    warmup_start: float | None = None
    weight_decay: float | None = None
    gradient_clipping: float | None = None


@dataclass
class OpStep:
    """One op (or layer) applied to named values: ``{op: linear, out_size: 5, name: l1}``."""

    op: str
    loc: Loc
    attrs: dict[str, Any] = field(default_factory=dict)
    inputs: tuple[str, ...] = (PREVIOUS,)
    # ``from: parts[1]``: for each input, the index of the part it takes of a value of several
    # arrays (split_axis, n-step results), or None for the whole value; empty: no indexes.
    parts: tuple[int | None, ...] = ()
    to: str | None = None
    name: str | None = None  # parameter scope of a layer (auto-named when omitted)
    layer: bool = False  # True: a parameterized layer (spec.layers), else a registry op


@dataclass
class IfStep:
    """``if: PRED`` with ``then``/``else`` step lists. ``resolved`` is the branch chosen at load
    time when the predicate reads only params (True/False), else None (decided per run)."""

    predicate: Predicate
    loc: Loc
    predicate_loc: Loc
    then: list[Step]
    otherwise: list[Step]
    resolved: bool | None = None


@dataclass
class RepeatStep:
    """``repeat: N`` times over ``body``; parameters shared across iterations unless
    ``unroll`` (then each iteration has its own, named ``<name>_<i>``)."""

    count: int
    loc: Loc
    body: list[Step]
    unroll: bool = False


@dataclass
class WhileStep:
    """``while: PRED`` over ``body``, at most ``max_iters`` times; ``on_limit`` says what
    reaching the limit means (``stop`` quietly or ``error``)."""

    predicate: Predicate
    loc: Loc
    predicate_loc: Loc
    max_iters: int
    body: list[Step]
    on_limit: str = "stop"


@dataclass
class CarrySpec:
    """Initial value of one ``for_each`` carry: zeros or ones of ``shape`` (or an input name)."""

    name: str
    loc: Loc
    fill: str = "zeros"  # zeros | ones | value
    shape: tuple[int, ...] = ()
    value: str | None = None  # the name of an existing value, when fill == "value"


@dataclass
class ForEachStep:
    """``for_each: SEQ`` over axis 0 of a value, binding each slice to ``as``; carries flow from
    one step to the next; ``collect`` stacks a value per step into ``to``."""

    sequence: str
    loc: Loc
    item: str
    body: list[Step]
    carry: list[CarrySpec] = field(default_factory=list)
    collect: str | None = None
    to: str | None = None


Step: TypeAlias = OpStep | IfStep | RepeatStep | WhileStep | ForEachStep


@dataclass
class Spec:
    """A loaded, validated spec."""

    name: str
    kind: str  # static | dynamic
    seed: int
    params: dict[str, Any]
    inputs: dict[str, InputSpec]
    graph: list[Step]
    loss: OpStep | None
    outputs: list[str]
    file: str
    folder: str  # relative ``file:`` paths are resolved against it
    source: SourceText | None = None
    loc: Loc | None = None
    max_elements: int = DEFAULT_MAX_ELEMENTS  # the size limit it was loaded with
    data: DataSpec | None = None
    validation: ValidationSpec | None = None
    train: TrainSpec | None = None
    test: ValidationSpec | None = None  # held out: evaluated once, after training


def walk_steps(steps: list[Step]):
    """Every step, depth-first in file order (bodies and branches included)."""
    stack = list(reversed(steps))
    while stack:
        step = stack.pop()
        yield step
        if isinstance(step, IfStep):
            stack.extend(reversed(step.then + step.otherwise))
        elif isinstance(step, RepeatStep | WhileStep | ForEachStep):
            stack.extend(reversed(step.body))

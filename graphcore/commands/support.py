"""Which command supports which family of spec, as data: the table ``docs/support.md`` shows
(``support_markdown()`` writes it; ``tests/matrix/test_support_table.py`` checks the page holds
exactly that) and the product matrix test (``tests/matrix/``) runs cell by cell.

A family is a kind of spec, named by what it uses (a live branch, a ``for_each`` over
sequences, data from a CSV file, ...). A command is one way of calling ``graphtool``. Every
cell is supported unless ``REFUSALS`` lists it: a refusal is a product decision, with the
reason a user is given, the exit code and the text of the one located line
(``file:line:col: error: ...``) the command prints. Commands that take ``--mode`` are supported
in both modes, dynamic and static.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    what: str  # what makes a spec one of this family
    example: str  # a spec of the family, relative to the repository root


@dataclass(frozen=True)
class Command:
    name: str
    line: str  # how the cell calls it (SPEC, the trained parameters P)
    modes: bool = False  # takes --mode dynamic|static (both are supported)


@dataclass(frozen=True)
class Refusal:
    code: int  # the exit code
    message: str  # what the located error line says (a part of it)
    reason: str  # why the command does not take such a spec, and what to do instead


FAMILIES: tuple[Family, ...] = (
    Family("static_mlp", "static MLP", "layers and activations, no control flow",
           "specs/seed_static.yaml"),
    Family("param_branch", "param-resolved branch", "an `if` on params, resolved at load",
           "specs/param_depth.yaml"),
    Family("live_branch", "live branch", "an `if` on a live value, decided on every run",
           "tests/data/matrix/live_branch.yaml"),
    Family("repeat", "`repeat`", "a block repeated with shared weights",
           "tests/data/matrix/repeat_block.yaml"),
    Family("while", "`while`", "a data-dependent trip count", "specs/adaptive_depth.yaml"),
    Family("for_each", "`for_each` over sequences",
           "variable-length examples walked step by step, a carried state",
           "specs/rnn_sequences.yaml"),
    Family("per_example_branch", "per-example branches",
           "`examples: N` inputs whose `if` is decided per example",
           "tests/data/matrix/per_example_branch.yaml"),
    Family("data_csv", "data-fed CSV", "`data:` columns of a CSV file, a validation split",
           "tests/data/matrix/data_csv.yaml"),
    Family("data_named", "data-fed class names",
           "`data:` labels given as class names, features with `normalize:`, a test split",
           "specs/iris.yaml"),
    Family("data_npz", "data-fed npz", "`data:` arrays of an .npz file",
           "specs/digits_mlp.yaml"),
    Family("data_sequences", "data-fed sequences",
           "`data:` sequences (`values` + `offsets`) and a label per example",
           "tests/data/matrix/data_sequences.yaml"),
    Family("convolution", "convolution", "convolution and max pooling layers",
           "specs/digits_cnn.yaml"),
    Family("lstm", "LSTM", "an `lstm` layer over per-example sequences",
           "specs/lstm_tagger.yaml"),
    Family("attention", "attention", "multi-head attention with a padding mask, layer norm",
           "specs/transformer_block.yaml"),
    Family("plugin", "plugin op", "an op registered by `--plugin FILE.py`",
           "examples/swish.yaml"),
)

COMMANDS: tuple[Command, ...] = (
    Command("run", "graphtool run SPEC --json -o arrays.npz", modes=True),
    Command("run --eval", "graphtool run SPEC --eval -o arrays.npz", modes=True),
    Command("train", "graphtool train SPEC --steps 3 --save P", modes=True),
    Command("evaluate", "graphtool evaluate SPEC --params P --json"),
    Command("predict file", "graphtool predict SPEC --params P --input NAME=FILE -o out.npz"),
    Command("predict stdin", "graphtool predict SPEC --params P --input NAME=- -o out.npz"),
    Command("predict -o -", "graphtool predict SPEC --params P -o -"),
    Command("predict .npz", "graphtool predict SPEC --params P -o preds.npz"),
    Command("predict .csv", "graphtool predict SPEC --params P -o preds.csv"),
    Command("summary", "graphtool summary SPEC --json"),
    Command("viz", "graphtool viz SPEC"),
    Command("viz --diff",
            "graphtool viz SPEC --diff params.NAME=VALUE (or NAME=FILE, OTHER.yaml)"),
    Command("bench", "graphtool bench SPEC --modes dynamic,static"),
    Command("check", "graphtool check SPEC --json", modes=True),
    Command("export", "graphtool export SPEC --params P -o model.onnx"),
    Command("report", "graphtool report SPEC"),
    Command("sweep", "graphtool sweep SPEC --grid mode=dynamic,static --grid train.steps=2"),
)

_NO_ROWS = Refusal(
    2, "has no batched input to {verb} over",
    "{verb} works on rows of data, and this spec's inputs have fixed shapes (generated, or one "
    "file): feed them from `data:`, name their leading axis (`shape: [batch, ...]`) or make "
    "them per-example inputs (`lengths:`, `examples:`)")
_RAGGED = Refusal(
    2, "differs in shape from example to example",
    "a CSV row per example holds outputs of one shape, and this output has one row per time "
    "step of each sequence: write `-o preds.npz` (one array per example)")
_NO_ONNX_MAPPING = Refusal(
    1, "cannot be exported to ONNX: no ONNX mapping is registered for it",
    "the plugin op has a forward and backward in Python but no ONNX equivalent")

_FIXED_SHAPES = ("static_mlp", "param_branch", "live_branch", "repeat", "while", "attention",
                 "plugin")
_PREDICT = ("predict file", "predict stdin", "predict -o -", "predict .npz", "predict .csv")


def _with_verb(refusal: Refusal, verb: str) -> Refusal:
    return Refusal(refusal.code, refusal.message.format(verb=verb),
                   refusal.reason.format(verb=verb))


REFUSALS: dict[tuple[str, str], Refusal] = {
    **{(family, "evaluate"): _with_verb(_NO_ROWS, "evaluate") for family in _FIXED_SHAPES},
    **{(family, command): _with_verb(_NO_ROWS, "predict")
       for family in _FIXED_SHAPES for command in _PREDICT},
    **{(family, command): _RAGGED
       for family in ("for_each", "lstm") for command in ("predict -o -", "predict .csv")},
    ("plugin", "export"): _NO_ONNX_MAPPING,
}


def family(name: str) -> Family:
    return next(f for f in FAMILIES if f.name == name)


def command(name: str) -> Command:
    return next(c for c in COMMANDS if c.name == name)


def refusal(family_name: str, command_name: str) -> Refusal | None:
    """The refusal of ``command_name`` for a spec of ``family_name``; None: it is supported."""
    family(family_name), command(command_name)  # both must be known: a typo is no "supported"
    return REFUSALS.get((family_name, command_name))


def support_markdown() -> str:
    """The support table as Markdown: the families with their example specs, then a row per
    command saying which families it refuses, each refusal numbered with its exit code and
    reason below."""
    lines = ["| family | what makes a spec one | example |", "|---|---|---|"]
    for fam in FAMILIES:
        lines.append(f"| {fam.title} | {fam.what} | [`{fam.example}`](../{fam.example}) |")
    lines += ["", "| command | what the matrix test runs | `--mode` | refused for |",
              "|---|---|---|---|"]
    notes: list[Refusal] = []
    for cmd in COMMANDS:
        refused: dict[int, list[str]] = {}
        for fam in FAMILIES:
            why = REFUSALS.get((fam.name, cmd.name))
            if why is None:
                continue
            if why not in notes:
                notes.append(why)
            refused.setdefault(notes.index(why) + 1, []).append(fam.title)
        cell = "; ".join(f"{', '.join(titles)} ({number})" for number, titles in refused.items())
        modes = "dynamic, static" if cmd.modes else ""
        lines.append(f"| `{cmd.name}` | `{cmd.line}` | {modes} | {cell or 'none'} |")
    lines.append("")
    for number, why in enumerate(notes, 1):
        lines += [f"({number}) Exit {why.code}, \"{why.message}\": {why.reason}.", ""]
    return "\n".join(lines)

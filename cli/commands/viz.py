"""Draw the graph a spec executes, as Chainer draws it: graph.dot and graph.png, loop bodies as
clusters (a loop of more than 3 iterations as its first iteration and one node for the rest;
--expand draws them all). --stage ir draws static mode's traced IR (ir.dot, ir.png, and
ir.txt), --stage optimized the IR after the passes (ir.optimized.*), --stage all all three.
-o - prints the DOT on stdout instead (files only for formats named by --format). --data FILE
reads a spec's `data:` inputs from another file. --diff draws the union of this run and a second
one (params.NAME=VALUE, NAME=PATH for an input, data=FILE, or a second spec file; repeatable),
nodes matched by structure, not shape: what both built grey (dashed where fed a different
value; a shape that differs as `first → second`), the first run's own in orange, the second's
in blue, loops collapsed as without --diff (graph.diff.*, ir.diff.*, ir.optimized.diff.*)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import typer

from cli import files, output, specs
from cli.errors import USAGE, CliError, command
from cli.options import parse_passes, passes_option, plugin_option
from graphcore.commands.viz.diff import diff_dots
from graphcore.commands.viz.draw import STAGES, Drawing, draw_stages, render_png
from graphcore.language.validate_workflow import use_data_file
from graphcore.spec import Spec

FORMATS = ("dot", "png")
STDOUT = "-"
BASENAMES = {"executed": "graph", "ir": "ir", "optimized": "ir.optimized"}


class Stage(StrEnum):
    executed = "executed"
    ir = "ir"
    optimized = "optimized"
    all = "all"


class Rankdir(StrEnum):
    TB = "TB"
    LR = "LR"


@command
def viz(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    seed: int | None = typer.Option(None, "--seed", min=0, help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    data: Path | None = typer.Option(None, "--data", help="Read the spec's `data:` inputs "
                                     "from this file (every row is drawn, as `run` runs them)."),
    plugins: list[Path] = plugin_option(),
    rankdir: Rankdir = typer.Option(Rankdir.TB, "--rankdir", help="Layout direction."),
    stage: Stage = typer.Option(Stage.executed, "--stage", help="What to draw: the executed "
                                "graph, static mode's IR, the IR after the passes, or all."),
    passes: str | None = passes_option(),
    formats: str | None = typer.Option(
        None, "--format", help="Artifacts to write, a comma list of dot, png (default dot,png; "
        "none with -o)."),
    destination: str | None = typer.Option(
        None, "-o", "--output", help="Write the drawing here (.png: PNG, else DOT); - prints "
        "the DOT on stdout."),
    out_dir: str = typer.Option("outputs", "--out-dir", help="Artifacts folder."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
    expand: bool = typer.Option(False, "--expand", help="Draw every loop iteration (a loop "
                                "of more than 3 is drawn as its first iteration and one node "
                                "for the rest)."),
    diffs: list[str] = typer.Option(
        [], "--diff", help="Draw how a second run differs: params.NAME=VALUE, NAME=PATH (an "
        "input), data=FILE (its `data:` file) or a second spec file; repeat to combine."),
) -> None:
    wanted = _parse_formats(formats if formats is not None else
                            ("dot,png" if destination is None else ""))
    stages = list(STAGES) if stage is Stage.all else [stage.value]
    if destination is not None and len(stages) > 1:
        raise CliError("-o takes one drawing, and --stage all draws three", USAGE,
                       hint="pick one stage for -o, or drop -o to write them all")
    pass_list = parse_passes(passes)
    if pass_list is not None and stages == ["executed"]:
        raise CliError("--passes applies to --stage ir, optimized or all", USAGE)
    files.check_out_dir(out_dir)
    if destination not in (None, STDOUT):
        files.check_output(destination)
    data_file = None if data is None else str(data)
    loaded, overrides = _load(spec, sets, inputs, plugins, data_file, "--data ")
    # A diff aligns the runs on every iteration, then collapses long loops in the union.
    drawings = draw_stages(loaded, stages, seed=seed, input_overrides=overrides,
                           rankdir=rankdir.value, passes=pass_list, expand=expand or bool(diffs))
    second_examples = None
    if diffs:
        drawings, second_examples = _diff_drawings(
            _Settings(spec, sets, inputs, data_file), plugins, diffs, drawings, seed=seed,
            rankdir=rankdir.value, passes=pass_list, expand=expand)
    # Render everything before writing anything: a missing renderer leaves no partial output.
    artifacts: dict[Path, bytes] = {}
    folder = Path(out_dir) / loaded.name  # created by the first write, after every render
    for name, drawing in drawings.items():
        dot = (drawing.dot + "\n").encode("utf-8")
        png = render_png(drawing.dot) if "png" in wanted or _is_png(destination) else None
        base = BASENAMES[name] + (".diff" if diffs else "")
        for fmt in wanted:
            artifacts[folder / f"{base}.{fmt}"] = png if fmt == "png" else dot
        if wanted and drawing.text is not None:
            artifacts[folder / f"{base}.txt"] = drawing.text.encode("utf-8")
        if destination not in (None, STDOUT):
            artifacts[Path(destination)] = png if _is_png(destination) else dot
    written = files.write_files(artifacts)  # as one set: never a new .dot beside an old .png
    drawing = next(iter(drawings.values()))
    if destination == STDOUT:  # one stage here: -o refuses --stage all
        sys.stdout.write(drawing.dot + "\n")
        sys.stdout.flush()
    if second_examples is not None and max(drawing.examples, second_examples) > 1:
        output.note(f"drew the last example of each run ({drawing.examples} and "
                    f"{second_examples} examples: the graph runs once per example)", quiet)
    elif drawing.examples > 1:
        output.note(f"drew example {drawing.example + 1} of {drawing.examples} (the graph runs "
                    "once per example)", quiet)
    output.wrote(written, quiet)


def _parse_formats(text: str) -> list[str]:
    """``dot,png`` as a list in the given order, without repeats; unknown names are usage
    errors."""
    wanted: list[str] = []
    for name in (part.strip().lower() for part in text.split(",")):
        if not name:
            continue
        if name not in FORMATS:
            raise CliError(f"--format: unknown format {name!r}", USAGE,
                           hint=f"choose from {', '.join(FORMATS)}")
        if name not in wanted:
            wanted.append(name)
    return wanted


def _is_png(destination: str | None) -> bool:
    return destination not in (None, STDOUT) and destination.lower().endswith(".png")


def _load(spec: str, sets: list[str], inputs: list[str], plugins: list[Path],
          data: str | None, option: str) -> tuple[Spec, dict[str, str]]:
    """The spec with its options, its `data:` read from ``data`` when given (``option`` names
    where that came from in messages: ``--data``, ``--diff data=``)."""
    loaded, overrides = specs.load_with_inputs(spec, sets, inputs, plugins)
    if data is not None:
        if loaded.data is None:
            raise CliError(f"{option}{data}: spec '{loaded.name}' has no `data:` section naming "
                           "the inputs a data file feeds", USAGE)
        specs.require_readable(data, option)
        use_data_file(loaded, data)
    return loaded, overrides


@dataclass(frozen=True)
class _Settings:
    """One run's spec and overrides, each override as the command line gave it."""

    spec: str
    sets: list[str]
    inputs: list[str]  # NAME=PATH
    data: str | None

    def overrides(self) -> dict[str, str]:
        """Each override by what it overrides (``params.k``, an input's name, ``data``)."""
        items = [*self.sets, *self.inputs, *([f"data={self.data}"] if self.data else [])]
        return {item.partition("=")[0].strip(): item for item in items}


def _diff_drawings(first: _Settings, plugins: list[Path], diffs: list[str],
                   drawings: dict[str, Drawing], *, seed: int | None, rankdir: str,
                   passes: list[str] | None, expand: bool) -> tuple[dict[str, Drawing], int]:
    """Each stage's drawing replaced by the union of it and the second run's (``--diff``),
    and how many examples the second run had."""
    changes = _parse_diff(first.spec, diffs)
    if changes.spec == specs.STDIN:
        raise CliError("--diff needs a spec file: the spec on stdin cannot be read twice",
                       USAGE, hint="give the spec as a path, or a second spec to --diff")
    from_stdin = [name for name, item in {**first.overrides(), **changes.overrides()}.items()
                  if item.partition("=")[2] == specs.STDIN]
    if from_stdin:
        raise CliError(f"--diff: the second run cannot read input '{from_stdin[0]}' from stdin "
                       "again", USAGE, hint=f"save it to a file and give --input "
                       f"{from_stdin[0]}=FILE, or --diff {from_stdin[0]}=FILE")
    data = changes.data if changes.data is not None else first.data
    other, other_overrides = _load(
        changes.spec, [*first.sets, *changes.sets], [*first.inputs, *changes.inputs], plugins,
        data, "--diff data=" if changes.data is not None else "--data ")
    others = draw_stages(other, list(drawings), seed=seed, input_overrides=other_overrides,
                         rankdir=rankdir, passes=passes)
    first_name, second_name, both = _run_names(first, changes)
    out = {}
    for stage, drawing in drawings.items():
        union = diff_dots(drawing.dot, others[stage].dot, first_name, second_name, both=both,
                          collapse=not expand)
        nodes = (len(union.only_first) + len(union.only_second) + len(union.shared)
                 + len(union.fed_differently))
        out[stage] = Drawing(spec=drawing.spec, dot=union.dot, nodes=nodes,
                             clusters=union.clusters, example=drawing.example,
                             examples=drawing.examples)
    return out, next(iter(others.values())).examples


def _parse_diff(spec: str, diffs: list[str]) -> _Settings:
    """``--diff`` values as the second run's own settings: its spec (this one unless a spec
    file is named), its extra --set, --input and data file."""
    other_spec, sets, inputs, data = spec, [], [], None
    for item in diffs:
        name, sep, value = item.partition("=")
        if not sep:
            if other_spec != spec:
                raise CliError("--diff names two specs; give at most one", USAGE)
            other_spec = item
        elif name.strip().startswith("params."):
            sets.append(item)
        elif name.strip() == "data":
            data = value
        else:
            inputs.append(item)
    return _Settings(other_spec, sets, inputs, data)


def _run_names(first: _Settings, changes: _Settings) -> tuple[str, str, str]:
    """How the legend names the runs: each by its spec file and its own overrides (the first
    run's that the second replaces, the second's from --diff), and what both ran with."""
    ours, theirs = first.overrides(), changes.overrides()
    shared = [item for key, item in ours.items() if key not in theirs]
    first_name = _run_name(first.spec, [item for key, item in ours.items() if key in theirs])
    second_name = _run_name(changes.spec, list(theirs.values()))
    if first_name == second_name:
        second_name += " (again)"
    return first_name, second_name, " ".join(shared)


def _run_name(spec: str, overrides: list[str]) -> str:
    shown = Path(spec).name if spec != specs.STDIN else "stdin"
    return shown + (" " + " ".join(overrides) if overrides else "")
